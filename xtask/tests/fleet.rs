//! The CI fleet template (`ci/github/onboard-fleet.yml`): `actionlint` passes it (and fails a
//! broken copy, so the lint is real); it runs only when dispatched, its partitions on
//! self-hosted runners labelled with the arch; and its jobs' own commands (`fleet_support` runs
//! them from the YAML) build an archive, run three partitions on simulated card hosts (no cargo,
//! no checkout) and merge them into one report equal in case ids and outcomes to an unpartitioned
//! run of the same archive.
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

use cardguard_archive::unpack;
use fleet_support::{cargo_shim, run_job, scalar, Artifacts, Context, JobEnv, Workflow};

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

/// The `cargo-cardguard` binary of this workspace (debug), built through cargo.
fn build_cargo_cardguard() -> PathBuf {
    let ws = cardguard_cli::Workspace::discover(&root()).unwrap();
    cardguard_cli::cargo_build::cargo_build(
        &ws,
        &["-p", "cargo-cardguard", "--bin", "cargo-cardguard"],
        "dev",
        |a| a.name == "cargo-cardguard" && a.kind.iter().any(|k| k == "bin"),
    )
    .unwrap()
}

/// Case id -> outcome of a report dir's `report.json`.
fn outcomes(dir: &Path) -> BTreeMap<String, String> {
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
fn host_env(host: &Path) -> BTreeMap<String, String> {
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

#[test]
fn three_partitions_merged_equal_an_unpartitioned_run() {
    let wf = Workflow::load(&root().join(WORKFLOW));
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let artifacts = Artifacts {
        dir: t.join("artifacts"),
    };
    std::fs::create_dir_all(&artifacts.dir).unwrap();

    let mut ctx = Context::default();
    ctx.set("inputs.arch", ARCH)
        .set("inputs.hosts", HOSTS.to_string())
        .set("inputs.platform", "sim")
        .set("inputs.args", "");
    let mut wf_env = wf.env(&ctx);
    for (key, template, test) in [
        ("ARCHIVE_PROFILE", "release", "dev"),
        ("CARDGUARD_SRC", ".", root().to_str().unwrap()),
        ("SUITE_PACKAGE", "", "runner"),
    ] {
        assert_eq!(wf_env.get(key).map(String::as_str), Some(template), "{key}");
        wf_env.insert(key.into(), test.into());
    }
    let cargo_cardguard = build_cargo_cardguard();
    let checkout = |dir: PathBuf| {
        let mut env = wf_env.clone();
        let shim = cargo_shim(&dir.with_extension("shim"), &cargo_cardguard, &root());
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

    // build: the archive and the partition list.
    let outputs = run_job(wf.job("build"), &ctx, &checkout(t.join("build")), &artifacts);
    let partitions = outputs["archive"]["partitions"].clone();
    ctx.set("steps.archive.outputs.partitions", partitions.as_str())
        .set("needs.build.outputs.partitions", partitions.as_str());
    let ks: Vec<usize> = serde_json::from_str(&partitions).unwrap();
    assert_eq!(ks, (1..=HOSTS).collect::<Vec<_>>());

    // partition K of N, each on its own card host.
    let mut per_partition = Vec::new();
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
        run_job(wf.job("partition"), &kctx, &je, &artifacts);
        per_partition.push(outcomes(&je.dir.join(format!("reports/partition-{k}"))));
    }

    // merge, in a checkout.
    let merge = checkout(t.join("merge"));
    run_job(wf.job("merge"), &ctx, &merge, &artifacts);
    let merged = outcomes(&merge.dir.join("merged"));

    // The same archive, unpartitioned, on one more card host.
    let host = t.join("host-all");
    let unpacked = unpack(
        &artifacts
            .dir
            .join(format!("archive-{ARCH}/cardguard-{ARCH}.tar.zst")),
        &host.join("unpacked"),
    )
    .unwrap();
    std::fs::create_dir_all(host.join("work")).unwrap();
    let out = Command::new(unpacked.binary())
        .env_clear()
        .envs(host_env(&host))
        .current_dir(host.join("work"))
        .args([
            "--arch",
            ARCH,
            "--platform",
            "sim",
            "--report-dir",
            "all",
            "--no-progress",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let all = outcomes(&host.join("work/all"));

    assert!(
        all.len() > HOSTS,
        "the suite has too few cases to partition: {all:?}"
    );
    assert_eq!(merged, all, "merged partitions differ from the unpartitioned run");
    let mut seen = BTreeMap::new();
    for (k, part) in ks.iter().zip(&per_partition) {
        assert!(!part.is_empty(), "partition {k} ran no case");
        for id in part.keys() {
            assert_eq!(seen.insert(id.clone(), *k), None, "{id} in two partitions");
        }
    }
    let junit = std::fs::read_to_string(merge.dir.join("merged/junit.xml")).unwrap();
    assert_eq!(junit.matches("<testcase ").count(), all.len(), "{junit}");
}
