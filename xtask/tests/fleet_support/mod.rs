//! A small runner of the fleet template's jobs (`ci/github/onboard-fleet.yml`), so the test runs
//! the workflow's own commands: the YAML is parsed, every `${{ ... }}` of a `run:`, `env:` or
//! `with:` value is replaced from a table of the expressions the test knows (an unknown one
//! fails the test: a new expression in the template must be taught here), and each `run:` is
//! executed with bash as GitHub runs it (`bash --noprofile --norc -eo pipefail`). Artifacts are a
//! directory per name: `actions/upload-artifact` copies its `path` in, `actions/download-artifact`
//! copies a `name` (or each name of a `pattern`, into `path/<name>/`, as v4 does) out; a `path`
//! of several lines keeps each file's path under the directory they share (here, the job's own:
//! the template names paths below it), and a line naming nothing is left out. The Actions cache
//! is a directory per key that outlives a workflow run (the test runs the workflow twice):
//! `actions/cache/save` copies `path` in under `key`, `actions/cache/restore` copies out the
//! exact `key`, else the newest saved key starting with a `restore-keys` prefix, else nothing.
//! `actions/checkout` marks a job that runs in a checkout: there `cargo` is a shim of the job's own
//! (see [`cargo_shim`]) that knows `cargo install --path <cardguard>/crates/cargo-cardguard` and,
//! once that ran in the job, `cargo cardguard ...`, and refuses anything else. A job without a
//! checkout is a card host: a cleared environment whose `PATH` has no cargo.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use yaml_rust2::{Yaml, YamlLoader};

/// The workflow, parsed.
pub struct Workflow {
    pub doc: Yaml,
}

impl Workflow {
    pub fn load(path: &Path) -> Self {
        let text = std::fs::read_to_string(path).unwrap();
        let mut docs = YamlLoader::load_from_str(&text).unwrap();
        assert_eq!(docs.len(), 1, "one YAML document");
        Self { doc: docs.remove(0) }
    }

    pub fn job(&self, name: &str) -> &Yaml {
        let job = &self.doc["jobs"][name];
        assert!(!job.is_badvalue(), "the workflow has no job {name:?}");
        job
    }

    /// The workflow-level `env:`, with its expressions replaced.
    pub fn env(&self, ctx: &Context) -> BTreeMap<String, String> {
        env_of(&self.doc["env"], ctx)
    }
}

/// The expressions the test knows, and their values.
#[derive(Clone, Default)]
pub struct Context(pub BTreeMap<String, String>);

impl Context {
    pub fn set(&mut self, expr: &str, value: impl Into<String>) -> &mut Self {
        self.0.insert(expr.to_owned(), value.into());
        self
    }

    /// `text` with every `${{ expr }}` replaced; an unknown expression panics.
    pub fn subst(&self, text: &str) -> String {
        let mut out = String::new();
        let mut rest = text;
        while let Some(start) = rest.find("${{") {
            out.push_str(&rest[..start]);
            let after = &rest[start + 3..];
            let end = after
                .find("}}")
                .unwrap_or_else(|| panic!("unclosed expression in {text:?}"));
            let expr = after[..end].trim();
            let value = self.0.get(expr).unwrap_or_else(|| {
                panic!("the workflow uses ${{{{ {expr} }}}}, which this test does not know: teach it")
            });
            out.push_str(value);
            rest = &after[end + 2..];
        }
        out.push_str(rest);
        out
    }
}

/// A scalar YAML value as text (strings, numbers, booleans).
pub fn scalar(y: &Yaml) -> Option<String> {
    match y {
        Yaml::String(s) | Yaml::Real(s) => Some(s.clone()),
        Yaml::Integer(i) => Some(i.to_string()),
        Yaml::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

fn env_of(y: &Yaml, ctx: &Context) -> BTreeMap<String, String> {
    let mut env = BTreeMap::new();
    if let Some(h) = y.as_hash() {
        for (k, v) in h {
            let k = scalar(k).unwrap();
            let v = scalar(v).unwrap_or_else(|| panic!("env {k}: not a scalar"));
            env.insert(k, ctx.subst(&v));
        }
    }
    env
}

/// The artifacts of one workflow run, and the Actions cache, which outlives it.
pub struct Artifacts {
    pub dir: PathBuf,
    pub cache: PathBuf,
}

/// Copies `from` (a file or a directory's contents) into the directory `to`.
pub fn copy_into(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    if from.is_file() {
        std::fs::copy(from, to.join(from.file_name().unwrap())).unwrap();
        return;
    }
    for entry in std::fs::read_dir(from).unwrap_or_else(|e| panic!("{}: {e}", from.display())) {
        let entry = entry.unwrap();
        let path = entry.path();
        if path.is_dir() {
            copy_into(&path, &to.join(entry.file_name()));
        } else {
            std::fs::copy(&path, to.join(entry.file_name())).unwrap();
        }
    }
}

impl Artifacts {
    fn upload(&self, name: &str, job_dir: &Path, path: &str, must_exist: bool) {
        let lines: Vec<&str> = path.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
        if let [one] = lines[..] {
            let from = job_dir.join(one);
            if !from.exists() {
                assert!(!must_exist, "upload {name}: {} does not exist", from.display());
                return;
            }
            copy_into(&from, &self.dir.join(name));
            return;
        }
        let mut found = 0;
        for line in lines {
            let from = job_dir.join(line);
            if !from.exists() {
                continue;
            }
            found += 1;
            let to = self.dir.join(name).join(line);
            if from.is_dir() {
                copy_into(&from, &to);
            } else {
                copy_into(&from, to.parent().unwrap());
            }
        }
        assert!(!must_exist || found > 0, "upload {name}: none of {path:?} exists");
    }

    fn cache_save(&self, with: &BTreeMap<String, String>, job_dir: &Path) {
        let key = &with["key"];
        let to = self.cache.join(key);
        assert!(
            !to.exists(),
            "cache/save: the key {key} is taken (a cache entry is never overwritten)"
        );
        let from = job_dir.join(&with["path"]);
        if from.exists() {
            copy_into(&from, &to.join("data"));
            // The order keys were saved in, for "the newest".
            let n = std::fs::read_dir(&self.cache).unwrap().count();
            std::fs::write(to.join("seq"), n.to_string()).unwrap();
        }
    }

    fn cache_restore(&self, with: &BTreeMap<String, String>, job_dir: &Path) {
        let seq = |key: &str| -> Option<u64> {
            std::fs::read_to_string(self.cache.join(key).join("seq"))
                .ok()
                .and_then(|t| t.parse().ok())
        };
        let mut hit = seq(&with["key"]).map(|_| with["key"].clone());
        for prefix in with.get("restore-keys").map_or("", String::as_str).lines() {
            let prefix = prefix.trim();
            if hit.is_some() || prefix.is_empty() {
                break;
            }
            hit = std::fs::read_dir(&self.cache)
                .into_iter()
                .flatten()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|k| k.starts_with(prefix))
                .filter_map(|k| seq(&k).map(|n| (n, k)))
                .max()
                .map(|(_, k)| k);
        }
        if let Some(key) = hit {
            copy_into(&self.cache.join(key).join("data"), &job_dir.join(&with["path"]));
        }
    }

    fn download(&self, with: &BTreeMap<String, String>, job_dir: &Path) {
        let to = job_dir.join(with.get("path").map_or(".", String::as_str));
        if let Some(name) = with.get("name") {
            copy_into(&self.dir.join(name), &to);
            return;
        }
        let pattern = with.get("pattern").expect("download-artifact: name or pattern");
        let prefix = pattern
            .strip_suffix('*')
            .expect("the test knows patterns PREFIX*");
        let mut found = 0;
        for entry in std::fs::read_dir(&self.dir).unwrap() {
            let name = entry.unwrap().file_name().to_string_lossy().into_owned();
            if name.starts_with(prefix) {
                copy_into(&self.dir.join(&name), &to.join(&name));
                found += 1;
            }
        }
        assert!(found > 0, "download-artifact: nothing matches {pattern:?}");
    }
}

/// Where and how a job runs.
pub struct JobEnv {
    /// The job's working directory (the checkout, or the card host's workspace).
    pub dir: PathBuf,
    /// Environment of every step (the workflow's `env:` and the test's own settings).
    pub env: BTreeMap<String, String>,
    /// Card host: the environment is cleared first (only `env` is set).
    pub clear_env: bool,
}

/// What a job's steps wrote to `$GITHUB_OUTPUT`, by step id.
pub type Outputs = BTreeMap<String, BTreeMap<String, String>>;

/// The `cargo` shim of a checkout, in `dir/shim-bin`: `cargo install [--locked] --path P` with
/// P this repository's `crates/cargo-cardguard` installs the built `cargo_cardguard` binary into
/// the shim's dir (a stand-in for the release build `cargo install` makes); `cargo cardguard
/// ARGS` runs the installed one as cargo does (`cargo-cardguard cardguard ARGS`), with
/// `--manifest-path` naming this repository (the stand-in for the checkout the job runs in: the
/// test's job dirs are empty directories), and fails when the job installed nothing. Anything
/// else is refused.
pub fn cargo_shim(dir: &Path, cargo_cardguard: &Path, repo: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let bin = dir.join("shim-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let shim = bin.join("cargo");
    let crate_dir = repo.join("crates/cargo-cardguard").canonicalize().unwrap();
    std::fs::write(
        &shim,
        format!(
            r#"#!/bin/bash
bin=$(dirname "$0")
case "$1" in
  install)
    shift
    path=
    while [ $# -gt 0 ]; do
      case "$1" in
        --locked) shift ;;
        --path) path=$2; shift 2 ;;
        *) echo "cargo shim: cargo install $1 is not what the fleet workflow runs" >&2; exit 2 ;;
      esac
    done
    if [ -z "$path" ] || [ "$(cd "$path" && pwd -P)" != '{crate_dir}' ]; then
      echo "cargo shim: cargo install --path '$path' is not cardguard's crates/cargo-cardguard" >&2
      exit 2
    fi
    ln -sf '{bin}' "$bin/cargo-cardguard"
    exit 0 ;;
  cardguard)
    if [ ! -x "$bin/cargo-cardguard" ]; then
      echo "error: no such command: \`cardguard\` (the job installed no cargo-cardguard)" >&2
      exit 101
    fi
    shift
    exec "$bin/cargo-cardguard" cardguard --manifest-path '{manifest}' "$@" ;;
esac
echo "cargo shim: the fleet workflow runs only cargo install and cargo cardguard, not: cargo $*" >&2
exit 127
"#,
            crate_dir = crate_dir.display(),
            bin = cargo_cardguard.display(),
            manifest = repo.join("Cargo.toml").display(),
        ),
    )
    .unwrap();
    std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

/// What a job left: its steps' outputs, and the stderr of its `run:` steps, in order.
pub struct JobRun {
    pub outputs: Outputs,
    pub stderr: String,
}

/// Case id -> outcome of a report dir's `report.json`.
pub fn outcomes(dir: &Path) -> BTreeMap<String, String> {
    let text =
        std::fs::read_to_string(dir.join("report.json")).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_owned(),
                c["outcome"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// A card host's environment: cleared, `PATH` without cargo, its own simulated cards and locks.
pub fn host_env(host: &Path) -> BTreeMap<String, String> {
    let path = |p: &str| host.join(p).display().to_string();
    std::fs::create_dir_all(host.join("tmp")).unwrap();
    BTreeMap::from([
        ("PATH".to_owned(), "/usr/bin:/bin".to_owned()),
        ("HOME".to_owned(), path("work")),
        ("TMPDIR".to_owned(), path("tmp")),
        ("ONBOARD_SIM_ROOT".to_owned(), path("sim")),
        ("ONBOARD_LOCK_DIR".to_owned(), path("locks")),
    ])
}

/// The suite of `archive` (`arch`, simulated cards), unpartitioned, on a card host of its own in
/// `host` (unpacked there, run in `host/work` with [`host_env`] and `extra` flags): its case
/// outcomes. The run must pass.
pub fn unpartitioned_run(
    archive: &Path,
    host: &Path,
    arch: &str,
    extra: &[&std::ffi::OsStr],
) -> BTreeMap<String, String> {
    let unpacked = cardguard_archive::unpack(archive, &host.join("unpacked")).unwrap();
    std::fs::create_dir_all(host.join("work")).unwrap();
    let out = Command::new(unpacked.binary())
        .env_clear()
        .envs(host_env(host))
        .current_dir(host.join("work"))
        .args([
            "--arch",
            arch,
            "--platform",
            "sim",
            "--report-dir",
            "all",
            "--no-progress",
        ])
        .args(extra)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    outcomes(&host.join("work/all"))
}

/// The `cargo-cardguard` binary of the workspace at `repo` (debug), built through cargo: what
/// [`cargo_shim`]'s `cargo install` stands in for.
pub fn build_cargo_cardguard(repo: &Path) -> PathBuf {
    let ws = cardguard_cli::Workspace::discover(repo).unwrap();
    cardguard_cli::cargo_build::cargo_build(
        &ws,
        &["-p", "cargo-cardguard", "--bin", "cargo-cardguard"],
        "dev",
        |a| a.name == "cargo-cardguard" && a.kind.iter().any(|k| k == "bin"),
    )
    .unwrap()
}

/// Runs `job`'s steps. A failing `run:` panics with its output.
pub fn run_job(job: &Yaml, ctx: &Context, je: &JobEnv, artifacts: &Artifacts) -> JobRun {
    let mut outputs = Outputs::new();
    let mut stderr = String::new();
    std::fs::create_dir_all(&je.dir).unwrap();
    for (i, step) in job["steps"].as_vec().expect("steps").iter().enumerate() {
        let with = env_of(&step["with"], ctx);
        if let Some(uses) = step["uses"].as_str() {
            let action = uses.split('@').next().unwrap();
            match action {
                "actions/checkout" => {}
                "actions/upload-artifact" => artifacts.upload(
                    &with["name"],
                    &je.dir,
                    &with["path"],
                    with.get("if-no-files-found").map(String::as_str) == Some("error"),
                ),
                "actions/download-artifact" => artifacts.download(&with, &je.dir),
                "actions/cache/restore" => artifacts.cache_restore(&with, &je.dir),
                "actions/cache/save" => artifacts.cache_save(&with, &je.dir),
                "mikepenz/action-junit-report" => {
                    let report = je.dir.join(&with["report_paths"]);
                    let xml = std::fs::read_to_string(&report)
                        .unwrap_or_else(|e| panic!("{}: {e}", report.display()));
                    assert!(xml.contains("<testsuite"), "not a JUnit report: {xml}");
                }
                other => panic!("the workflow uses {other}, which this test does not know: teach it"),
            }
            continue;
        }
        let script = ctx.subst(step["run"].as_str().expect("a step has uses or run"));
        let out_file = je.dir.join(format!(".github-output-{i}"));
        std::fs::write(&out_file, "").unwrap();
        let mut cmd = Command::new("/bin/bash");
        if je.clear_env {
            cmd.env_clear();
        }
        cmd.args(["--noprofile", "--norc", "-eo", "pipefail", "-c", &script])
            .current_dir(&je.dir)
            .envs(&je.env)
            .envs(env_of(&step["env"], ctx))
            .env("GITHUB_OUTPUT", &out_file);
        let out = cmd.output().unwrap();
        stderr.push_str(&String::from_utf8_lossy(&out.stderr));
        assert!(
            out.status.success(),
            "step {i} failed ({}):\n{script}\n--- stdout\n{}\n--- stderr\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        if let Some(id) = step["id"].as_str() {
            let text = std::fs::read_to_string(&out_file).unwrap();
            let vals = text
                .lines()
                .filter_map(|l| l.split_once('='))
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect();
            outputs.insert(id.to_owned(), vals);
        }
    }
    JobRun { outputs, stderr }
}
