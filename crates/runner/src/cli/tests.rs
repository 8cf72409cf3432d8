//! The cli's tests: every flag's parse, its defaults and the one-line error of each bad value.

use super::*;

fn p(args: &[&str]) -> Parsed {
    parse(
        std::iter::once("cardguard-suite")
            .chain(args.iter().copied())
            .map(OsString::from),
    )
}

fn usage(args: &[&str]) -> String {
    match p(args) {
        Parsed::Usage(m) => m,
        other => panic!("expected a usage error for {args:?}, got {other:?}"),
    }
}

#[test]
fn timeouts_take_decimals_down_to_a_millisecond() {
    let Parsed::Run(cli) = p(&["--arch", "a5", "--case-timeout", "0.001", "--init-timeout", "2.5"]) else {
        panic!()
    };
    assert_eq!(cli.case_timeout, Some(Duration::from_millis(1)));
    assert_eq!(cli.init_timeout, Some(Duration::from_millis(2500)));
    let Parsed::Run(cli) = p(&["--arch", "a5", "--wait-for-cards", "0"]) else {
        panic!()
    };
    assert_eq!(cli.wait_for_cards, Some(Duration::ZERO));
    let Parsed::Run(cli) = p(&[
        "--arch",
        "a5",
        "--wait-for-cards",
        "1.5",
        "--rerun-failed",
        "latest",
    ]) else {
        panic!()
    };
    assert_eq!(cli.wait_for_cards, Some(Duration::from_millis(1500)));
    assert_eq!(cli.rerun_failed.as_deref(), Some(std::path::Path::new("latest")));
}

#[test]
fn a_non_utf8_value_names_its_flag() {
    use std::os::unix::ffi::OsStringExt;
    let bad = || OsString::from_vec(vec![b'd', 0xff, b'v']);
    let args = vec![
        OsString::from("cardguard-suite"),
        "--arch".into(),
        "a5".into(),
        "--faults".into(),
        bad(),
    ];
    let Parsed::Usage(m) = parse(args) else { panic!() };
    assert!(
        m.starts_with("--faults: ") && m.contains("not valid UTF-8"),
        "{m}"
    );
    let mut eq = OsString::from("--runtime=");
    eq.push(bad());
    let args = vec![
        OsString::from("cardguard-suite"),
        "--arch".into(),
        "a5".into(),
        eq,
    ];
    let Parsed::Usage(m) = parse(args) else { panic!() };
    assert!(m.starts_with("--runtime: "), "{m}");
    // A path takes any bytes.
    let args = vec![
        OsString::from("cardguard-suite"),
        "--arch".into(),
        "a5".into(),
        "--report-dir".into(),
        bad(),
    ];
    assert!(matches!(parse(args), Parsed::Run(_)));
}

#[test]
fn defaults() {
    let Parsed::Run(cli) = p(&["--arch", "a5"]) else {
        panic!()
    };
    assert_eq!(cli.arch, Arch::A5);
    // Unset: the config decides (flag > environment > profile > built-in default).
    assert_eq!(cli.devices, None);
    assert_eq!(cli.retries, None);
    assert_eq!(cli.flaky_result, None);
    assert_eq!(cli.no_progress, None);
    assert!(cli.cases.is_empty() && !cli.lane && !cli.list && !cli.test_hooks && !cli.show_config);
    assert!(cli.exclude.is_empty());
    assert_eq!(cli.format, ListFormat::Plain);
    let Parsed::Run(cli) = p(&[
        "--arch",
        "a5",
        "--exclude",
        "tag:sdma",
        "--exclude",
        "A",
        "--list",
        "--format",
        "json",
    ]) else {
        panic!()
    };
    assert_eq!(cli.exclude, ["tag:sdma".parse().unwrap(), "A".parse().unwrap()]);
    assert_eq!(cli.format, ListFormat::Json);
    assert_eq!(cli.isolation, None);
}

#[test]
fn every_bad_value_is_one_line_naming_it() {
    for (args, needle) in [
        (vec!["--arch", "a9"], "a9"),
        (vec![], "--arch"),
        (vec!["--arch", "a5", "--platform", "gpu"], "gpu"),
        (vec!["--arch", "a5", "--devices", "3-1"], "3-1"),
        (vec!["--arch", "a5", "--device-num", "x"], "x"),
        (vec!["--arch", "a5", "--case", "A::b::c"], "A::b::c"),
        (vec!["--arch", "a5", "--retries", "-1"], "-1"),
        (vec!["--arch", "a5", "--flaky-result", "maybe"], "maybe"),
        (vec!["--arch", "a5", "--isolation", "thread"], "thread"),
        (vec!["--arch", "a5", "--case-timeout", "0"], "0"),
        (vec!["--arch", "a5", "--case-timeout", "soon"], "soon"),
        (vec!["--arch", "a5", "--partition", "hash:3/2"], "hash:3/2"),
        (vec!["--arch", "a5", "--bogus"], "--bogus"),
        (vec!["--arch", "a5", "--retries", "+1"], "+1"),
        (vec!["--arch", "a5", "--device-num", "+2"], "+2"),
        (vec!["--arch", "a5", "--devices", "+0"], "+0"),
        (vec!["--arch", "a5", "--partition", "hash:+1/2"], "hash:+1/2"),
        (vec!["--arch", "a5", "--case-timeout", "+5"], "+5"),
        (vec!["--arch", "a5", "--case-timeout", "1e-10"], "1e-10"),
        (vec!["--arch", "a5", "--case-timeout", "0.0001"], "1 ms"),
        (vec!["--arch", "a5", "--init-timeout", "0"], "1 ms"),
        (vec!["--arch", "a5", "--init-timeout", "inf"], "inf"),
        (vec!["--arch", "a5", "--case", "tag:a b"], "tag:a b"),
        (vec!["--arch", "a5", "--exclude", "tag:"], "tag:"),
        (vec!["--arch", "a5", "--exclude", "A::b::c"], "A::b::c"),
        (vec!["--arch", "a5", "--list", "--format", "xml"], "xml"),
        (vec!["--arch", "a5", "--format", "json"], "--list"),
        (
            vec!["--arch", "a5", "--no-config", "--profile", "ci"],
            "--profile",
        ),
        (vec!["--arch", "a5", "--no-config", "--config", "x"], "--config"),
        (vec!["--arch", "a5", "--wait-for-cards", "-1"], "-1"),
        (vec!["--arch", "a5", "--wait-for-cards", "soon"], "soon"),
        (vec!["--arch", "a5", "--wait-for-cards", "0.0001"], "1 ms"),
    ] {
        let m = usage(&args);
        assert!(!m.contains('\n'), "{m}");
        assert!(m.contains(needle), "{args:?}: {m}");
    }
}
