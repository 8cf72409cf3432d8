//! The CI fleet template (`ci/github/onboard-fleet.yml`): `actionlint` passes it (and fails a
//! broken copy, so the lint is real); it runs only when dispatched, its partitions on
//! self-hosted runners labelled with the arch; and its jobs' own commands (`fleet_support` runs
//! them from the YAML) build an archive, run three partitions on simulated card hosts (no cargo,
//! no checkout) and merge them into one report equal in case ids and outcomes to an unpartitioned
//! run of the same archive, twice: the first run without a history (shares by hash, with a
//! note), the second with the history the first one's merge saved to the Actions cache (shares
//! by duration).
//!
//! The archive is built with the dev profile (the workflow's `ARCHIVE_PROFILE` is `release`;
//! the test overrides it, as the archive test does, to share the debug build the other tests make
//! instead of a release build of several minutes). The test's checkouts are empty job dirs: the
//! workflow's `CARDGUARD_SRC` (`.`) becomes this repository's root, `SUITE_PACKAGE` (empty: the
//! one suite package) the built-in suite's `runner` (this workspace has several suite packages),
//! and `cargo install` of cargo-cardguard links the debug binary built here (see
//! `fleet_support::cargo_shim`). When `actionlint` is not on `PATH` the lint
//! test says so and passes; `.ci/run` installs it, so CI always lints.

mod fleet_support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use fleet_support::{
    build_cargo_cardguard, cargo_shim, host_env, outcomes, run_job, scalar, unpartitioned_run, Artifacts,
    Context, JobEnv, Workflow,
};

const WORKFLOW: &str = "ci/github/onboard-fleet.yml";
const LINT_CONFIG: &str = "ci/github/actionlint.yaml";
const ARCH: &str = "a5";
const HOSTS: usize = 3;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_owned()
}

fn on_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")
        .map(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join(name))
                .find(|f| f.is_file())
        })
        .unwrap_or_default()
}

fn lint(actionlint: &Path, workflow: &Path) -> std::process::Output {
    Command::new(actionlint)
        .arg("-config-file")
        .arg(root().join(LINT_CONFIG))
        .arg(workflow)
        .output()
        .unwrap()
}

#[test]
fn actionlint_passes_the_template_and_fails_a_broken_copy() {
    // A shim left by a removed install (pyenv) is on PATH but does not run: absent too.
    let runs = |a: &Path| {
        Command::new(a)
            .arg("-version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let Some(actionlint) = on_path("actionlint").filter(|a| runs(a)) else {
        println!("skipped: actionlint is not on PATH or does not run (.ci/run installs it with pip)");
        return;
    };
    let out = lint(&actionlint, &root().join(WORKFLOW));
    assert!(
        out.status.success(),
        "actionlint:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("onboard-fleet.yml");
    let text = std::fs::read_to_string(root().join(WORKFLOW)).unwrap();
    let bad = text.replace("needs.build.outputs.partitions", "needs.biuld.outputs.partitions");
    assert_ne!(bad, text);
    std::fs::write(&broken, bad).unwrap();
    let out = lint(&actionlint, &broken);
    assert!(!out.status.success(), "actionlint passed a broken workflow");
    assert!(String::from_utf8_lossy(&out.stdout).contains("biuld"));
}

#[test]
fn the_template_runs_only_when_dispatched_and_partitions_on_self_hosted_arch_runners() {
    let wf = Workflow::load(&root().join(WORKFLOW));
    let on: Vec<String> = wf.doc["on"]
        .as_hash()
        .expect("on: is a map")
        .keys()
        .filter_map(scalar)
        .collect();
    assert_eq!(on, ["workflow_dispatch"], "it must never run on pushes");
    let runs_on: Vec<String> = wf.job("partition")["runs-on"]
        .as_vec()
        .expect("runs-on: a list of labels")
        .iter()
        .filter_map(scalar)
        .collect();
    assert_eq!(runs_on, ["self-hosted", "${{ inputs.arch }}"]);
    let matrix = scalar(&wf.job("partition")["strategy"]["matrix"]["partition"]).unwrap();
    assert_eq!(matrix, "${{ fromJSON(needs.build.outputs.partitions) }}");
    let options: Vec<String> = wf.doc["on"]["workflow_dispatch"]["inputs"]["arch"]["options"]
        .as_vec()
        .unwrap()
        .iter()
        .filter_map(scalar)
        .collect();
    assert_eq!(options, ["a5", "a2a3"]);
}

/// One workflow run's results.
struct WorkflowRun {
    /// Per partition K (in order), its case outcomes.
    per_partition: Vec<BTreeMap<String, String>>,
    /// The partition jobs' stderr, in order.
    partition_stderr: Vec<String>,
    merged: BTreeMap<String, String>,
    artifacts: PathBuf,
}

/// Runs the workflow once (build, the partitions on their own card hosts, merge) in `t/name`,
/// with the Actions cache in `cache` (it outlives the run).
fn run_workflow(wf: &Workflow, t: &Path, name: &str, cache: &Path, cargo_cardguard: &Path) -> WorkflowRun {
    let t = &t.join(name);
    let artifacts = Artifacts {
        dir: t.join("artifacts"),
        cache: cache.to_owned(),
    };
    std::fs::create_dir_all(&artifacts.dir).unwrap();
    std::fs::create_dir_all(cache).unwrap();

    let mut ctx = Context::default();
    ctx.set("inputs.arch", ARCH)
        .set("inputs.hosts", HOSTS.to_string())
        .set("inputs.platform", "sim")
        .set("inputs.args", "")
        .set("github.run_id", format!("run-{name}"))
        .set("github.run_attempt", "1");
    let mut wf_env = wf.env(&ctx);
    for (key, template, test) in [
        ("ARCHIVE_PROFILE", "release", "dev"),
        ("CARDGUARD_SRC", ".", root().to_str().unwrap()),
        ("SUITE_PACKAGE", "", "runner"),
    ] {
        assert_eq!(wf_env.get(key).map(String::as_str), Some(template), "{key}");
        wf_env.insert(key.into(), test.into());
    }
    let checkout = |dir: PathBuf| {
        let mut env = wf_env.clone();
        let shim = cargo_shim(&dir.with_extension("shim"), cargo_cardguard, &root());
        let path = std::env::var_os("PATH").unwrap_or_default();
        let mut dirs = vec![shim];
        dirs.extend(std::env::split_paths(&path));
        env.insert(
            "PATH".into(),
            std::env::join_paths(dirs).unwrap().to_string_lossy().into(),
        );
        env.insert("CARGO".into(), env!("CARGO").into());
        JobEnv {
            dir,
            env,
            clear_env: false,
        }
    };

    // build: the archive (with the cached history, if any) and the partition list.
    let build = run_job(wf.job("build"), &ctx, &checkout(t.join("build")), &artifacts);
    let partitions = build.outputs["archive"]["partitions"].clone();
    ctx.set("steps.archive.outputs.partitions", partitions.as_str())
        .set("needs.build.outputs.partitions", partitions.as_str());
    let ks: Vec<usize> = serde_json::from_str(&partitions).unwrap();
    assert_eq!(ks, (1..=HOSTS).collect::<Vec<_>>());

    // partition K of N, each on its own card host.
    let mut per_partition = Vec::new();
    let mut partition_stderr = Vec::new();
    for k in &ks {
        let host = t.join(format!("host-{k}"));
        let mut env = host_env(&host);
        env.insert("ARCH".into(), wf_env["ARCH"].clone());
        let mut kctx = ctx.clone();
        kctx.set("matrix.partition", k.to_string());
        let je = JobEnv {
            dir: host.join("work"),
            env,
            clear_env: true,
        };
        // What an earlier run left on a self-hosted runner must not be read.
        std::fs::create_dir_all(je.dir.join("in/history")).unwrap();
        std::fs::write(je.dir.join("in/history/history.json"), "{ stale").unwrap();
        let run = run_job(wf.job("partition"), &kctx, &je, &artifacts);
        partition_stderr.push(run.stderr);
        per_partition.push(outcomes(&je.dir.join(format!("reports/partition-{k}"))));
    }

    // merge, in a checkout.
    let merge = checkout(t.join("merge"));
    run_job(wf.job("merge"), &ctx, &merge, &artifacts);
    WorkflowRun {
        per_partition,
        partition_stderr,
        merged: outcomes(&merge.dir.join("merged")),
        artifacts: artifacts.dir,
    }
}

/// Every case in exactly one partition, and the merge equal to `all`.
fn assert_partitioned(run: &WorkflowRun, all: &BTreeMap<String, String>, what: &str) {
    assert_eq!(
        &run.merged, all,
        "{what}: merged partitions differ from the unpartitioned run"
    );
    let mut seen = BTreeMap::new();
    for (k, part) in run.per_partition.iter().enumerate() {
        assert!(!part.is_empty(), "{what}: partition {} ran no case", k + 1);
        for id in part.keys() {
            assert_eq!(
                seen.insert(id.clone(), k + 1),
                None,
                "{what}: {id} in two partitions"
            );
        }
    }
}

/// The first run has no history: its partitions share by hash and say so; its merge saves the
/// history to the cache. The second run's build restores it, its partitions share by duration
/// (no note), and its merge saves a history of two runs.
#[test]
fn three_partitions_merged_equal_an_unpartitioned_run() {
    let wf = Workflow::load(&root().join(WORKFLOW));
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let cache = t.join("actions-cache");
    let cargo_cardguard = build_cargo_cardguard(&root());

    let first = run_workflow(&wf, t, "first", &cache, &cargo_cardguard);

    // The same archive, unpartitioned, on one more card host.
    let all = unpartitioned_run(
        &first
            .artifacts
            .join(format!("archive-{ARCH}/cardguard-{ARCH}.tar.zst")),
        &t.join("host-all"),
        ARCH,
        &[],
    );
    assert!(
        all.len() > HOSTS,
        "the suite has too few cases to partition: {all:?}"
    );

    assert_partitioned(&first, &all, "first run");
    for (k, stderr) in first.partition_stderr.iter().enumerate() {
        assert!(
            stderr.contains("without a duration history") && !stderr.contains("warning"),
            "first run, partition {}: no note of the hash fallback, or an old file read:\n{stderr}",
            k + 1
        );
    }
    assert!(
        !first.artifacts.join(format!("archive-{ARCH}/history")).exists(),
        "the first build found a history"
    );
    let saved = cache.join(format!("cardguard-history-{ARCH}-run-first-1/data/history.json"));
    let history: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&saved).unwrap()).unwrap();
    assert_eq!(history["runs"], 1);
    assert_eq!(
        history["cases"].as_object().unwrap().len(),
        all.len(),
        "{history}"
    );

    let second = run_workflow(&wf, t, "second", &cache, &cargo_cardguard);
    assert!(
        second
            .artifacts
            .join(format!("archive-{ARCH}/history/history.json"))
            .is_file(),
        "the second build did not pass the history on"
    );
    assert_partitioned(&second, &all, "second run");
    for (k, stderr) in second.partition_stderr.iter().enumerate() {
        assert!(
            !stderr.contains("without a duration history") && !stderr.contains("warning"),
            "second run, partition {}: not by duration:\n{stderr}",
            k + 1
        );
    }
    let saved = cache.join(format!("cardguard-history-{ARCH}-run-second-1/data/history.json"));
    let history: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&saved).unwrap()).unwrap();
    assert_eq!(history["runs"], 2);

    let junit = std::fs::read_to_string(t.join("second/merge/merged/junit.xml")).unwrap();
    assert_eq!(junit.matches("<testcase ").count(), all.len(), "{junit}");
}
