//! The Kubernetes fleet template (`ci/kubernetes/`): its manifests pass Kubernetes' schemas
//! (`kubernetes-validate --strict`, and a broken copy fails, so the check is real); the
//! partitions are one Indexed Job whose pods each take the Ascend device plugin's resource and
//! run `--partition duration:$((JOB_COMPLETION_INDEX+1))/N` from a copy of the history; and the
//! pods' own commands, taken from the YAML with the manifest's environment, run locally: three
//! partitions on simulated card hosts (a cleared environment without cargo, the archive and the
//! history in the shared volume's `in/`), then the merge Job's command in a checkout (cargo the
//! GitHub template test's shim: `cargo install` of cardguard's cargo-cardguard, then `cargo
//! cardguard`). The merged report equals an unpartitioned run of the same archive in case ids
//! and outcomes, each case in exactly one partition, the shares made by duration (no fallback
//! note); the pods leave the volume's history unchanged (each wrote its copy) and the merge adds
//! the partitions' run to it.
//!
//! The archive is built with the dev profile, as the GitHub template's test does. When
//! `kubernetes-validate` is not found (`CARDGUARD_KUBERNETES_VALIDATE`, else `PATH`) the schema
//! test says so and passes; `.ci/run` installs it and sets the variable, so CI always validates.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

// The GitHub template's job runner; this test uses only its cargo shim.
#[allow(dead_code)]
mod fleet_support;

use fleet_support::{build_cargo_cardguard, cargo_shim, host_env, outcomes, unpartitioned_run};
use yaml_rust2::{Yaml, YamlLoader};

const XTASK: &str = env!("CARGO_BIN_EXE_xtask");
const FLEET: &str = "ci/kubernetes/onboard-fleet.yaml";
const MERGE: &str = "ci/kubernetes/merge-job.yaml";
const ARCH: &str = "a5";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_owned()
}

fn docs(path: &str) -> Vec<Yaml> {
    let text = std::fs::read_to_string(root().join(path)).unwrap();
    YamlLoader::load_from_str(&text).unwrap()
}

/// The manifest of `kind` in `path`.
fn manifest(path: &str, kind: &str) -> Yaml {
    docs(path)
        .into_iter()
        .find(|d| d["kind"].as_str() == Some(kind))
        .unwrap_or_else(|| panic!("{path} has no {kind}"))
}

/// A Job's only container.
fn container(job: &Yaml) -> &Yaml {
    let cs = job["spec"]["template"]["spec"]["containers"].as_vec().unwrap();
    assert_eq!(cs.len(), 1);
    &cs[0]
}

/// A container's `env:` as a map.
fn env_of(c: &Yaml) -> BTreeMap<String, String> {
    c["env"]
        .as_vec()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["name"].as_str().unwrap().to_owned(),
                e["value"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// A container's `bash -c SCRIPT`.
fn script(c: &Yaml) -> String {
    let cmd: Vec<&str> = c["command"]
        .as_vec()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect();
    assert_eq!(&cmd[..2], ["bash", "-c"]);
    cmd[2].to_owned()
}

fn validator() -> Option<PathBuf> {
    let runs = |p: &Path| {
        Command::new(p)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let named = std::env::var_os("CARDGUARD_KUBERNETES_VALIDATE").map(PathBuf::from);
    let on_path = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join("kubernetes-validate"))
            .find(|f| f.is_file())
    });
    named.or(on_path).filter(|p| runs(p))
}

fn validate(tool: &Path, files: &[PathBuf]) -> std::process::Output {
    Command::new(tool)
        .args(["--strict", "--quiet"])
        .args(files)
        .output()
        .unwrap()
}

#[test]
fn the_manifests_pass_kubernetes_schemas_and_a_broken_copy_fails() {
    let Some(tool) = validator() else {
        println!("skipped: kubernetes-validate is not found (.ci/run installs it with pip)");
        return;
    };
    let files = [root().join(FLEET), root().join(MERGE)];
    let out = validate(&tool, &files);
    assert!(
        out.status.success(),
        "kubernetes-validate:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(&files[0]).unwrap();
    let bad = text.replace("parallelism: 3", "paralelism: 3");
    assert_ne!(bad, text);
    let broken = dir.path().join("onboard-fleet.yaml");
    std::fs::write(&broken, bad).unwrap();
    let out = validate(&tool, &[broken]);
    assert!(
        !out.status.success(),
        "kubernetes-validate passed a broken manifest"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("paralelism"));
}

#[test]
fn the_partitions_are_an_indexed_job_of_one_pod_per_host_with_the_device_plugins_cards() {
    let job = manifest(FLEET, "Job");
    let spec = &job["spec"];
    assert_eq!(spec["completionMode"].as_str(), Some("Indexed"));
    let hosts = env_of(container(&job))["HOSTS"].parse::<i64>().unwrap();
    assert_eq!(spec["completions"].as_i64(), Some(hosts));
    assert_eq!(spec["parallelism"].as_i64(), Some(hosts));
    let anti = &spec["template"]["spec"]["affinity"]["podAntiAffinity"]
        ["requiredDuringSchedulingIgnoredDuringExecution"][0];
    assert_eq!(anti["topologyKey"].as_str(), Some("kubernetes.io/hostname"));
    let res = &container(&job)["resources"];
    for side in ["limits", "requests"] {
        assert!(
            res[side]["huawei.com/Ascend910"].as_str().is_some(),
            "{side}: the Ascend device plugin's resource"
        );
    }
    let s = script(container(&job));
    assert!(s.contains("K=$((JOB_COMPLETION_INDEX + 1))"), "{s}");
    assert!(s.contains("--partition \"duration:$K/$HOSTS\""), "{s}");
    let claim = manifest(FLEET, "PersistentVolumeClaim");
    let name = claim["metadata"]["name"].as_str().unwrap();
    for job in [job.clone(), manifest(MERGE, "Job")] {
        let vols = &job["spec"]["template"]["spec"]["volumes"][0];
        assert_eq!(vols["persistentVolumeClaim"]["claimName"].as_str(), Some(name));
    }
}

fn run_script(script: &str, env: &BTreeMap<String, String>, dir: &Path, clear: bool) -> std::process::Output {
    std::fs::create_dir_all(dir).unwrap();
    let mut c = Command::new("bash");
    if clear {
        c.env_clear();
    }
    let out = c
        .arg("-c")
        .arg(script)
        .envs(env)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the pod's command failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

#[test]
fn three_duration_partitions_merged_equal_an_unpartitioned_run() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let fleet = t.join("fleet");
    let input = fleet.join("in");
    std::fs::create_dir_all(&input).unwrap();
    let archive = input.join(format!("cardguard-{ARCH}.tar.zst"));
    let built = Command::new(XTASK)
        .args(["archive", "--arch", ARCH, "--profile", "dev", "-o"])
        .arg(&archive)
        .env("CARGO", env!("CARGO"))
        .current_dir(root())
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );

    // The unpartitioned run, on a card host of its own, fills the history the pods read.
    let history = input.join("history.json");
    let all = unpartitioned_run(
        &archive,
        &t.join("host-all"),
        ARCH,
        &["--history".as_ref(), history.as_os_str()],
    );
    let before = std::fs::read(&history).expect("the run wrote its history");

    let job = manifest(FLEET, "Job");
    let pod = container(&job);
    let hosts: usize = env_of(pod)["HOSTS"].parse().unwrap();
    let mut per_partition = Vec::new();
    for index in 0..hosts {
        let host = t.join(format!("host-{index}"));
        let mut env = host_env(&host);
        env.extend(env_of(pod));
        env.insert("PLATFORM".into(), "sim".into());
        env.insert("FLEET".into(), fleet.display().to_string());
        // What the Job controller sets in each pod of an Indexed Job.
        env.insert("JOB_COMPLETION_INDEX".into(), index.to_string());
        let out = run_script(&script(pod), &env, &host.join("work"), true);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("without a duration history"), "{stderr}");
        per_partition.push(outcomes(&fleet.join(format!("reports/partition-{}", index + 1))));
    }
    assert_eq!(
        std::fs::read(&history).unwrap(),
        before,
        "a pod wrote the shared history"
    );

    // The merge Job's command, in a checkout.
    let merge = manifest(MERGE, "Job");
    let mc = container(&merge);
    std::os::unix::fs::symlink(root(), fleet.join("src")).unwrap();
    let shim = cargo_shim(t, &build_cargo_cardguard(&root()), &root());
    let mut env = env_of(mc);
    env.insert("FLEET".into(), fleet.display().to_string());
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs = vec![shim];
    dirs.extend(std::env::split_paths(&path));
    env.insert(
        "PATH".into(),
        std::env::join_paths(dirs).unwrap().to_string_lossy().into(),
    );
    env.insert("CARGO".into(), env!("CARGO").into());
    run_script(&script(mc), &env, t, false);
    let merged = outcomes(&fleet.join("merged"));

    assert!(all.len() > hosts, "too few cases to partition: {all:?}");
    assert_eq!(merged, all, "merged partitions differ from the unpartitioned run");
    let mut seen = BTreeMap::new();
    for (k, part) in per_partition.iter().enumerate() {
        assert!(!part.is_empty(), "partition {} ran no case", k + 1);
        for id in part.keys() {
            assert_eq!(seen.insert(id.clone(), k + 1), None, "{id} in two partitions");
        }
    }
    let after: serde_json::Value = serde_json::from_slice(&std::fs::read(&history).unwrap()).unwrap();
    let before: serde_json::Value = serde_json::from_slice(&before).unwrap();
    assert_eq!(
        after["runs"].as_u64(),
        before["runs"].as_u64().map(|n| n + 1),
        "the merge did not add the partitions' run to the volume's history"
    );
    let junit = std::fs::read_to_string(fleet.join("merged/junit.xml")).unwrap();
    assert_eq!(junit.matches("<testcase ").count(), all.len());
}
