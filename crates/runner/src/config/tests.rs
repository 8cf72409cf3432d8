//! The config's own tests: precedence of every source, profile selection and inheritance,
//! overrides over a case's own settings, errors naming file, line and key, `--show-config`, and
//! the shipped example config. The environment is a map handed to the loader, never the
//! process's.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use platform_common::Arch;

use super::*;
use crate::case::{CaseSpec, ClassSpec, Runtime, Suite};
use crate::cli::{self, Cli, FlakyArg, Parsed};
use crate::dispatch::DeviceSpec;

fn cli(args: &[&str]) -> Cli {
    let argv = ["cardguard-suite", "--arch", "a5"]
        .iter()
        .chain(args)
        .map(OsString::from);
    match cli::parse(argv) {
        Parsed::Run(c) => *c,
        other => panic!("{args:?}: {other:?}"),
    }
}

/// A workspace in a temp dir with `text` as its `.config/cardguard.toml`.
struct Ws {
    dir: tempfile::TempDir,
}

impl Ws {
    fn new(text: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".config")).unwrap();
        std::fs::write(dir.path().join(CONFIG_PATH), text).unwrap();
        Ws { dir }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn file(&self) -> PathBuf {
        self.root().join(CONFIG_PATH)
    }

    fn load(&self, args: &[&str], env: &[(&str, &str)]) -> Result<Config, ConfigError> {
        let map: HashMap<String, OsString> = env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), OsString::from(v)))
            .collect();
        let lookup = move |k: &str| map.get(k).cloned();
        load(&cli(args), &lookup, self.root())
    }

    fn ok(&self, args: &[&str], env: &[(&str, &str)]) -> Config {
        self.load(args, env)
            .unwrap_or_else(|e| panic!("{args:?} {env:?}: {e}"))
    }

    fn err(&self, args: &[&str], env: &[(&str, &str)]) -> String {
        let e = self.load(args, env).expect_err("an error");
        let text = crate::app::error_chain(&e);
        assert!(!text.contains('\n'), "{text}");
        text
    }
}

const PROFILES: &str = "\
[profile.default]
retries = 1
case-timeout = 40

[profile.ci]
retries = 3
flaky-result = \"fail\"
device-num = 4
";

#[test]
fn retries_come_from_the_flag_over_the_env_over_the_profile_over_the_default() {
    let ws = Ws::new(PROFILES);
    let none = Ws::new("");
    let c = ws.ok(&["--retries", "5"], &[("CARDGUARD_RETRIES", "4")]);
    assert_eq!(c.settings.retries.value, 5);
    assert_eq!(c.settings.retries.source, Source::Flag("--retries"));
    let c = ws.ok(&[], &[("CARDGUARD_RETRIES", "4")]);
    assert_eq!(c.settings.retries.value, 4);
    assert_eq!(c.settings.retries.source, Source::Env("CARDGUARD_RETRIES"));
    let c = ws.ok(&[], &[]);
    assert_eq!(c.settings.retries.value, 1);
    assert_eq!(
        c.settings.retries.source,
        Source::Profile {
            name: "default".into(),
            path: ws.file(),
            line: 2
        }
    );
    let c = none.ok(&[], &[]);
    assert_eq!(c.settings.retries.value, 2);
    assert_eq!(c.settings.retries.source, Source::Default);
}

#[test]
fn every_setting_takes_each_source_in_order() {
    // One value per source for every key, so each key's precedence is checked, not only one.
    let flags: &[(&str, &[&str])] = &[
        ("platform", &["--platform", "sim"]),
        ("devices", &["--devices", "0-1"]),
        ("device-num", &["--device-num", "3"]),
        ("retries", &["--retries", "3"]),
        ("flaky-result", &["--flaky-result", "fail"]),
        ("case-timeout", &["--case-timeout", "3"]),
        ("init-timeout", &["--init-timeout", "3"]),
        ("isolation", &["--isolation", "case"]),
        ("health-check", &["--health-check", "off"]),
        ("wait-for-cards", &["--wait-for-cards", "3"]),
        ("missing-kernel", &["--missing-kernel", "skip"]),
        ("faults", &["--faults", "dev=0:op_timeout@3"]),
        ("faults-must-fire", &["--faults-must-fire"]),
        ("keep-sdma-workers", &["--keep-sdma-workers"]),
        ("report-dir", &["--report-dir", "/r/flag"]),
        ("stress-count", &["--stress-count", "3"]),
        ("stress-duration", &["--stress-duration", "3"]),
        ("no-progress", &["--no-progress"]),
    ];
    let env_value = |key: &str| match key {
        "platform" => "onboard",
        "devices" => "2",
        "device-num" | "retries" | "case-timeout" | "init-timeout" | "wait-for-cards" | "stress-count"
        | "stress-duration" => "7",
        "flaky-result" => "pass",
        "isolation" => "class",
        "health-check" => "on-failure",
        "missing-kernel" => "fail",
        "faults" => "dev=0:op_timeout@7",
        "faults-must-fire" | "keep-sdma-workers" => "false",
        "report-dir" => "/r/env",
        "no-progress" => "false",
        other => panic!("no env value for {other}"),
    };
    let toml_value = |key: &str| match key {
        "platform" => "\"sim\"".to_owned(),
        "flaky-result" => "\"fail\"".to_owned(),
        "isolation" => "\"class\"".to_owned(),
        "health-check" => "\"off\"".to_owned(),
        "devices" => "\"0,5\"".to_owned(),
        "missing-kernel" => "\"skip\"".to_owned(),
        "faults" => "\"dev=0:op_timeout@9\"".to_owned(),
        "faults-must-fire" | "keep-sdma-workers" => "true".to_owned(),
        "report-dir" => "\"/r/profile\"".to_owned(),
        "no-progress" => "true".to_owned(),
        _ => "9".to_owned(),
    };
    assert_eq!(flags.len(), KEYS.len(), "a flag for every key");
    for k in KEYS {
        let (_, flag) = flags.iter().find(|(key, _)| *key == k.key).expect("listed");
        let ws = Ws::new(&format!("[profile.default]\n{} = {}\n", k.key, toml_value(k.key)));
        let source = |c: &Config| {
            c.settings
                .rows()
                .into_iter()
                .find(|r| r.0 == k.key)
                .map(|r| r.2.clone())
                .unwrap()
        };
        let env = [(k.env, env_value(k.key))];
        assert_eq!(source(&ws.ok(flag, &env)), Source::Flag(k.flag), "{}", k.key);
        assert_eq!(source(&ws.ok(&[], &env)), Source::Env(k.env), "{}", k.key);
        assert!(
            matches!(source(&ws.ok(&[], &[])), Source::Profile { line: 2, .. }),
            "{}",
            k.key
        );
        assert_eq!(source(&Ws::new("").ok(&[], &[])), Source::Default, "{}", k.key);
    }
}

#[test]
fn values_of_each_source_are_parsed_to_the_same_settings() {
    let ws = Ws::new(
        "[profile.default]\nplatform = \"sim\"\ndevices = \"0,2\"\ncase-timeout = 2.5\ninit-timeout = 7\nno-progress = true\nreport-dir = \"out/r\"\n",
    );
    let s = ws.ok(&[], &[("CARDGUARD_FLAKY_RESULT", "fail")]).settings;
    assert_eq!(s.platform.value, Some(cli::PlatformArg::Sim));
    assert_eq!(s.devices.value, DeviceSpec::List(vec![0, 2]));
    assert_eq!(s.case_timeout.value, Duration::from_millis(2500));
    assert_eq!(s.case_timeout.shown, "2.5 s");
    assert_eq!(s.init_timeout.value, Duration::from_secs(7));
    assert!(s.no_progress.value);
    assert_eq!(s.flaky_result.value, FlakyArg::Fail);
    // A profile's relative report dir is relative to the workspace root, not the current dir.
    assert_eq!(s.report_dir.value, Some(ws.root().join("out/r")));
    let s = ws.ok(&["--report-dir", "rel"], &[]).settings;
    assert_eq!(
        s.report_dir.value,
        Some(PathBuf::from("rel")),
        "a flag's stays as given"
    );
}

#[test]
fn a_profile_is_selected_by_flag_or_env_and_inherits_from_default() {
    let ws = Ws::new(PROFILES);
    for c in [
        ws.ok(&["--profile", "ci"], &[("CARDGUARD_PROFILE", "nope")]),
        ws.ok(&[], &[("CARDGUARD_PROFILE", "ci")]),
    ] {
        assert_eq!(c.profile, "ci");
        assert_eq!(c.settings.retries.value, 3);
        assert_eq!(c.settings.flaky_result.value, FlakyArg::Fail);
        assert_eq!(c.settings.device_num.value, Some(4));
        // Not in ci: default's.
        assert_eq!(c.settings.case_timeout.value, Duration::from_secs(40));
        assert!(
            matches!(&c.settings.case_timeout.source, Source::Profile { name, line: 3, .. } if name == "default"),
            "{:?}",
            c.settings.case_timeout.source
        );
    }
    assert_eq!(
        ws.ok(&["--profile", "ci"], &[]).profile_source,
        Source::Flag("--profile")
    );
    assert_eq!(
        ws.ok(&[], &[("CARDGUARD_PROFILE", "ci")]).profile_source,
        Source::Env("CARDGUARD_PROFILE")
    );
    assert_eq!(ws.ok(&[], &[]).profile, "default");
    let e = ws.err(&["--profile", "nightly"], &[]);
    assert!(e.starts_with("--profile nightly: no such profile in "), "{e}");
    assert!(e.ends_with("(it has: ci, default)"), "{e}");
    let e = ws.err(&[], &[("CARDGUARD_PROFILE", "x")]);
    assert!(e.starts_with("CARDGUARD_PROFILE x: "), "{e}");
    let e = ws.err(&[], &[("CARDGUARD_PROFILE", "")]);
    assert!(e.starts_with("CARDGUARD_PROFILE=\"\""), "{e}");
    // No file at all: a named profile is an error, the default is not.
    let bare = tempfile::tempdir().unwrap();
    let lookup = |_: &str| None;
    assert!(load(&cli(&[]), &lookup, bare.path()).is_ok());
    let e = load(&cli(&["--profile", "ci"]), &lookup, bare.path()).unwrap_err();
    assert!(e.to_string().contains("there is no config file"), "{e}");
}

#[test]
fn the_file_is_found_upward_given_by_flag_or_env() {
    let ws = Ws::new(PROFILES);
    let sub = ws.root().join("a/b");
    std::fs::create_dir_all(&sub).unwrap();
    let lookup = |_: &str| None;
    let c = load(&cli(&[]), &lookup, &sub).unwrap();
    let f = c.file.unwrap();
    assert_eq!(f.path, ws.file());
    assert_eq!(f.found, Found::Search(sub.clone()));
    let other = tempfile::tempdir().unwrap();
    let path = other.path().join("my.toml");
    std::fs::write(&path, "[profile.default]\nretries = 7\n").unwrap();
    let p = path.to_str().unwrap();
    let c = ws.ok(&["--config", p], &[("CARDGUARD_CONFIG", "/nope.toml")]);
    assert_eq!(c.settings.retries.value, 7);
    assert_eq!(c.file.unwrap().found, Found::Flag);
    let c = ws.ok(&[], &[("CARDGUARD_CONFIG", p)]);
    assert_eq!(c.file.unwrap().found, Found::Env);
    // The base dir of a file outside a `.config` dir is its own directory.
    let c = Ws::new("").ok(&["--config", p], &[]);
    assert_eq!(c.file.unwrap().base_dir(), other.path());
    let e = ws.err(&["--config", "/no/such/file.toml"], &[]);
    assert!(
        e.starts_with("cannot read the config file /no/such/file.toml (given by --config): "),
        "{e}"
    );
}

#[test]
fn no_config_reads_no_file_and_selects_no_profile() {
    let ws = Ws::new(PROFILES);
    let c = ws.ok(
        &["--no-config"],
        &[("CARDGUARD_CONFIG", "/nope.toml"), ("CARDGUARD_PROFILE", "ci")],
    );
    assert!(c.file.is_none());
    assert_eq!(c.profile, "default");
    assert_eq!(c.settings.retries.source, Source::Default);
    assert!(render_show_config(&c, &suite(), Arch::A5).starts_with("config file: none (--no-config)\n"));
    // The variables of the run settings still apply.
    let c = ws.ok(&["--no-config"], &[("CARDGUARD_RETRIES", "4")]);
    assert_eq!(c.settings.retries.value, 4);
}

#[test]
fn a_bad_key_type_or_value_names_the_file_line_and_key() {
    for (text, line, key, needle) in [
        ("[profile.default]\nretrys = 1\n", 2, "profile.default.retrys", "unknown field `retrys`"),
        ("[profile.ci]\n\nretries = \"2\"\n", 3, "profile.ci.retries", "expected an integer, found a string"),
        ("[profile.ci]\nretries = -1\n", 2, "profile.ci.retries", "\"-1\" is not a whole number"),
        ("[profile.ci]\ncase-timeout = 0\n", 2, "profile.ci.case-timeout", "under the 1 ms minimum"),
        ("[profile.ci]\ncase-timeout = true\n", 2, "profile.ci.case-timeout", "expected a number of seconds"),
        ("[profile.ci]\nflaky-result = \"maybe\"\n", 2, "profile.ci.flaky-result", "\"maybe\" is not one of pass, fail"),
        ("[profile.ci]\ndevices = \"3-1\"\n", 2, "profile.ci.devices", "3-1"),
        ("[profile.ci]\nplatform = \"gpu\"\n", 2, "profile.ci.platform", "gpu"),
        ("[profile.ci]\nno-progress = 1\n", 2, "profile.ci.no-progress", "expected a boolean"),
        ("[profile.ci]\nretries = 1\n[[profile.ci.overrides]]\nfilter = \"A::b::c\"\nretries = 0\n", 4, "profile.ci.overrides[0].filter", "bad selector \"A::b::c\""),
        ("[[profile.ci.overrides]]\nfilter = \"tag:x\"\ntimeout = \"soon\"\n", 3, "profile.ci.overrides[0].timeout", "expected a number of seconds"),
        ("[[profile.ci.overrides]]\nfilter = \"A\"\nretries = 0\n[[profile.ci.overrides]]\nfilter = \"B\"\nretry = 1\n", 6, "profile.ci.overrides[1].retry", "unknown field `retry`"),
        ("[[profile.ci.overrides]]\nfilter = \"A\"\n", 1, "profile.ci.overrides[0]", "sets neither retries nor timeout"),
        ("[[profile.ci.overrides]]\nretries = 1\n", 1, "profile.ci.overrides[0]", "missing field `filter`"),
        ("[prof.ci]\nretries = 1\n", 1, "prof", "unknown field `prof`"),
        ("[profile]\nci = 3\n", 2, "profile.ci", "invalid type"),
    ] {
        let ws = Ws::new(text);
        let e = ws.err(&[], &[]);
        let prefix = format!("{}:{line}: {key}: ", ws.file().display());
        assert!(e.starts_with(&prefix), "{text:?}:\n  {e}\n  wanted {prefix}");
        assert!(e.contains(needle), "{text:?}: {e}");
    }
    // Not TOML at all: the line, without a key.
    let ws = Ws::new("[profile.default]\nretries = = 1\n");
    let e = ws.err(&[], &[]);
    assert!(e.starts_with(&format!("{}:2: ", ws.file().display())), "{e}");
}

#[test]
fn a_bad_environment_value_names_the_variable() {
    let ws = Ws::new("");
    assert_eq!(
        ws.err(&[], &[("CARDGUARD_RETRIES", "+1")]),
        "CARDGUARD_RETRIES=\"+1\": \"+1\" is not a whole number"
    );
    let e = ws.err(&[], &[("CARDGUARD_CASE_TIMEOUT", "soon")]);
    assert!(e.starts_with("CARDGUARD_CASE_TIMEOUT=\"soon\": "), "{e}");
    let e = ws.err(&[], &[("CARDGUARD_NO_PROGRESS", "1")]);
    assert!(e.contains("is not true or false"), "{e}");
}

fn suite() -> Suite {
    Suite::new()
        .class(
            ClassSpec::pooled("A", Runtime::new("rt"))
                .case(CaseSpec::trivial("plain"))
                .case(
                    CaseSpec::trivial("own")
                        .timeout(Duration::from_secs(5))
                        .retries(4),
                )
                .case(CaseSpec::trivial("dma").tags(["sdma"])),
        )
        .class(
            ClassSpec::pooled("B", Runtime::new("rt"))
                .retries(6)
                .case(CaseSpec::trivial("x")),
        )
}

#[test]
fn overrides_take_their_cases_over_their_own_settings_first_match_per_setting() {
    let ws = Ws::new(
        "\
[[profile.default.overrides]]
filter = \"A::\"
timeout = 50
retries = 1

[profile.ci]
[[profile.ci.overrides]]
filter = \"tag:sdma\"
timeout = 9

[[profile.ci.overrides]]
filter = \"B\"
retries = 0
",
    );
    let s = suite();
    let settings = |c: &Config, class: &str, case: &str| {
        let (cl, k) = s.find_case(&format!("{class}::{case}")).unwrap();
        let st = c.overrides.settings_of(cl, k);
        (st.timeout.map(|t| t.as_secs()), st.retries)
    };
    let d = ws.ok(&[], &[]);
    assert_eq!(settings(&d, "A", "plain"), (Some(50), Some(1)));
    assert_eq!(
        settings(&d, "A", "own"),
        (Some(50), Some(1)),
        "over the case's own"
    );
    assert_eq!(settings(&d, "B", "x"), (None, Some(6)), "not taken: its class's");
    let ci = ws.ok(&["--profile", "ci"], &[]);
    // ci's overrides first, then default's, each setting on its own.
    assert_eq!(settings(&ci, "A", "dma"), (Some(9), Some(1)));
    assert_eq!(settings(&ci, "A", "plain"), (Some(50), Some(1)));
    assert_eq!(settings(&ci, "B", "x"), (None, Some(0)), "over its class's");
    assert_eq!(ci.overrides.takes(&s, Arch::A5), [1, 1, 3]);
    assert_eq!(ci.overrides.list[0].line, 7);
    assert_eq!(ci.overrides.list[0].profile, "ci");
    // Without overrides: exactly the case API's settings.
    let none = Ws::new("").ok(&[], &[]);
    assert_eq!(settings(&none, "A", "own"), (Some(5), Some(4)));
    assert_eq!(settings(&none, "A", "plain"), (None, None));
}

#[test]
fn show_config_prints_every_setting_with_its_source() {
    let ws = Ws::new(
        "[profile.default]\ncase-timeout = 40\n\n[profile.ci]\nretries = 0\n\n[[profile.ci.overrides]]\nfilter = \"tag:sdma\"\ntimeout = 9\n",
    );
    let c = ws.ok(
        &["--profile", "ci", "--device-num", "3"],
        &[("CARDGUARD_FLAKY_RESULT", "fail")],
    );
    let text = render_show_config(&c, &suite(), Arch::A5);
    let f = ws.file().display().to_string();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        format!("config file: {f} (found upward from {})", ws.root().display())
    );
    assert_eq!(lines[1], "profile: ci (flag --profile)");
    let row = |key: &str| {
        let l = lines
            .iter()
            .find(|l| l.split_whitespace().next() == Some(key))
            .unwrap_or_else(|| panic!("{key} in\n{text}"));
        l.split_whitespace().collect::<Vec<_>>().join(" ")
    };
    assert_eq!(row("retries"), format!("retries 0 profile ci at {f}:5"));
    assert_eq!(
        row("case-timeout"),
        format!("case-timeout 40 s profile default at {f}:2")
    );
    assert_eq!(row("device-num"), "device-num 3 flag --device-num");
    assert_eq!(
        row("flaky-result"),
        "flaky-result fail env CARDGUARD_FLAKY_RESULT"
    );
    assert_eq!(row("init-timeout"), "init-timeout 120 s default");
    assert_eq!(lines.len(), 2 + KEYS.len() + 2, "{text}");
    assert_eq!(
        lines.last().unwrap().trim(),
        format!("filter \"tag:sdma\": timeout 9 s  (profile ci at {f}:7; takes 1 case(s) on a5)")
    );
}

/// The config guide's example config (docs/guide/config.md) parses and checks, in both its
/// profiles.
#[test]
fn the_config_guide_example_parses() {
    let guide =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/guide/config.md"))
            .unwrap();
    let section = &guide[guide.find("# The config file").expect("the guide's title")..];
    let start = section.find("```toml\n").expect("a toml block") + "```toml\n".len();
    let end = start + section[start..].find("```").unwrap();
    let ws = Ws::new(&section[start..end]);
    let c = ws.ok(&["--profile", "ci"], &[]);
    assert_eq!(c.settings.flaky_result.value, FlakyArg::Fail);
    assert_eq!(c.overrides.list.len(), 2);
}

/// The repository's example config: every profile parses and checks, and it documents every key.
#[test]
fn the_example_config_parses_and_names_every_key() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.config/cardguard.example.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let lookup = |_: &str| None;
    for profile in ["default", "ci"] {
        let c = load(
            &cli(&["--config", path.to_str().unwrap(), "--profile", profile]),
            &lookup,
            Path::new("/"),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c.profile, profile);
    }
    for k in KEYS {
        assert!(
            text.contains(&format!("# {} = ", k.key)) || text.contains(&format!("\n{} = ", k.key)),
            "the example shows {}",
            k.key
        );
    }
}

/// docs/reference/config-keys.md has a row for every key, naming its flag and its variable.
#[test]
fn the_config_keys_reference_has_every_key() {
    let page = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/reference/config-keys.md"),
    )
    .unwrap();
    for k in KEYS {
        let row = page
            .lines()
            .find(|l| l.starts_with(&format!("| `{}` |", k.key)))
            .unwrap_or_else(|| panic!("docs/reference/config-keys.md has no row for {}", k.key));
        assert!(row.contains(&format!("`{}`", k.flag)), "{row}");
        assert!(row.contains(&format!("`{}`", k.env)), "{row}");
    }
}
