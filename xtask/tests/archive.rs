//! `cargo xtask archive` end to end: the archive is built (dev profile: the debug suite binary the
//! other tests build too, not a 4-minute release build), unpacked into an empty directory and run
//! as a card host would run it: a cleared environment whose `PATH` is an empty directory (no
//! `cargo`, no toolchain), `TMPDIR` and the working directory fresh temp dirs, no checkout in
//! sight. Clean, and under a fault plan through `--archive FILE` (the unpacked binary as the
//! launcher); the archived `libsim_acl.so` behind `--platform onboard`; and corrupted archives (a
//! changed member, a missing member, a truncated file), each a one-line error naming the member,
//! exit 2.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use cardguard_archive::{unpack, Unpacked};

const XTASK: &str = env!("CARGO_BIN_EXE_xtask");

/// The archive of the built-in suite for a5, built once for this test binary.
fn archive() -> &'static Path {
    static BUILT: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let (_, path) = BUILT.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cardguard-a5.tar.zst");
        let out = Command::new(XTASK)
            .args([
                "archive",
                "--arch",
                "a5",
                "--package",
                "runner",
                "--profile",
                "dev",
                "-o",
            ])
            .arg(&path)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let line = String::from_utf8_lossy(&out.stdout);
        assert!(
            line.starts_with("archive: ") && line.contains("kernel blob(s)"),
            "{line}"
        );
        (dir, path)
    });
    path
}

/// A card host: an empty `PATH` dir, its own `TMPDIR` and working directory.
struct Host {
    dir: tempfile::TempDir,
}

impl Host {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        for d in ["bin", "tmp", "work", "unpacked"] {
            std::fs::create_dir(dir.path().join(d)).unwrap();
        }
        Self { dir }
    }

    fn path(&self, p: &str) -> PathBuf {
        self.dir.path().join(p)
    }

    /// The archive unpacked into the host's empty `unpacked` dir.
    fn unpack(&self) -> Unpacked {
        unpack(archive(), &self.path("unpacked")).unwrap()
    }

    /// `exe ARGS` with nothing of this machine's environment but what a card host has.
    fn run(&self, exe: &Path, args: &[&str], env: &[(&str, &Path)]) -> Output {
        let mut cmd = Command::new(exe);
        cmd.env_clear()
            .env("PATH", self.path("bin"))
            .env("TMPDIR", self.path("tmp"))
            .env("HOME", self.path("work"))
            .current_dir(self.path("work"))
            .args(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.output().unwrap()
    }

    /// The one report dir the runs made under `./cardguard-reports/<arch>/`.
    fn reports(&self, arch: &str) -> Vec<PathBuf> {
        let root = self.path("work").join("cardguard-reports").join(arch);
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
            .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
            .map(|e| e.unwrap().path())
            .collect();
        dirs.sort();
        dirs
    }

    /// What is left in the host's temp dir.
    fn tmp_entries(&self) -> Vec<String> {
        std::fs::read_dir(self.path("tmp"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    }
}

fn text(out: &Output) -> String {
    format!(
        "{}\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn report(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap()
}

#[test]
fn the_host_has_no_cargo() {
    let host = Host::new();
    let out = Command::new("/bin/sh")
        .env_clear()
        .env("PATH", host.path("bin"))
        .args(["-c", "command -v cargo rustc"])
        .output()
        .unwrap();
    assert!(!out.status.success(), "{}", text(&out));
}

#[test]
fn an_unpacked_archive_runs_the_matrix_with_no_toolchain_and_no_checkout() {
    let host = Host::new();
    let u = host.unpack();
    assert_eq!(u.manifest.arch, platform_common::Arch::A5);
    assert_eq!(u.manifest.suite.binary, "cardguard-suite");
    assert_eq!(u.manifest.profile, "dev");
    for m in [
        "cardguard-suite",
        "kernels/a5/noop.so",
        "kernels/a5/hang.so",
        "lib/libsim_acl.so",
    ] {
        assert!(
            u.manifest.member(m).is_some(),
            "{m} is not in {:?}",
            u.manifest.members
        );
    }
    let bin = u.binary();
    let list = host.run(&bin, &["--arch", "a5", "--list"], &[]);
    assert!(list.status.success(), "{}", text(&list));
    let listed = String::from_utf8_lossy(&list.stdout).lines().count();
    assert!(listed > 10, "{}", text(&list));

    let out = host.run(&bin, &["--arch", "a5", "--no-progress"], &[]);
    assert!(out.status.success(), "{}", text(&out));
    let dirs = host.reports("a5");
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    let r = report(&dirs[0]);
    assert_eq!(r["summary"]["total"], listed, "{}", r["summary"]);
    assert_eq!(r["summary"]["passed"], listed, "{}", r["summary"]);
    assert_eq!(r["driver"]["kind"], "sim");
}

/// The build's own blobs still exist on this machine, so a run that found its kernels there
/// instead of beside itself would pass unnoticed: here the unpacked `vector_add.so` is replaced
/// by the `noop` blob, and every `VectorAdd` case must fail loading exactly that file.
#[test]
fn the_unpacked_binary_loads_its_kernels_from_beside_itself() {
    let host = Host::new();
    let u = host.unpack();
    let blob = u.root.join("kernels/a5/vector_add.so");
    std::fs::copy(u.root.join("kernels/a5/noop.so"), &blob).unwrap();
    let out = host.run(
        &u.binary(),
        &[
            "--arch",
            "a5",
            "--no-progress",
            "--retries",
            "0",
            "--case",
            "VectorAdd",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let dirs = host.reports("a5");
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    let r = report(&dirs[0]);
    let cases = r["cases"].as_array().unwrap();
    assert!(!cases.is_empty());
    let want = format!("{} has bad metadata: names kernel \"noop\"", blob.display());
    for c in cases {
        assert_eq!(c["outcome"], "failed", "{c}");
        let msg = c["attempts"][0]["error"]["message"].as_str().unwrap_or_default();
        assert!(msg.contains(&want), "{msg:?} does not name {want:?}");
    }
}

#[test]
fn archive_flag_runs_the_archived_binary_under_a_fault_plan_and_removes_its_unpack_dir() {
    let host = Host::new();
    // The launcher: any suite binary; here the archive's own, unpacked.
    let launcher = host.unpack().binary();
    let archive = archive().to_str().unwrap();
    let out = host.run(
        &launcher,
        &[
            "--archive",
            archive,
            "--arch",
            "a5",
            "--no-progress",
            "--faults",
            "dev=0:op_timeout@3",
        ],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out));
    let dirs = host.reports("a5");
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    let r = report(&dirs[0]);
    assert_eq!(r["summary"]["failed"], 0, "{}", r["summary"]);
    assert_eq!(r["summary"]["flaky"], 1, "{}", r["summary"]);
    let flaky = r["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["outcome"] == "flaky")
        .unwrap();
    let first = &flaky["attempts"][0];
    assert_eq!(first["device"], 0);
    assert_eq!(first["error"]["code"]["raw"], 507000, "{first}");
    let card0: Vec<&str> = r["devices_health"]["0"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["event"].as_str())
        .collect();
    for event in ["poisoned", "marked_unusable", "force_reset", "recovered"] {
        assert!(card0.contains(&event), "{event}: {card0:?}");
    }
    // The private unpack dir is gone; the sim's state dir is all that stays in TMPDIR.
    let left = host.tmp_entries();
    assert!(
        left.iter().all(|e| !e.starts_with("cardguard-archive-")),
        "{left:?}"
    );
}

#[test]
fn the_archived_libsim_acl_runs_the_c_abi_on_the_host() {
    let host = Host::new();
    let u = host.unpack();
    let lib = u.root.join("lib/libsim_acl.so");
    let out = host.run(
        &u.binary(),
        &[
            "--arch",
            "a5",
            "--platform",
            "onboard",
            "--no-progress",
            "--case",
            "Noop",
        ],
        &[("ONBOARD_ACL_LIB", &lib)],
    );
    assert!(out.status.success(), "{}", text(&out));
    let r = report(&host.reports("a5")[0]);
    assert_eq!(r["driver"]["kind"], "acl", "{}", r["driver"]);
    assert!(r["summary"]["passed"].as_u64().unwrap() > 0, "{}", r["summary"]);
}

/// The good archive's members as (path in the tar, bytes), in order.
fn members() -> Vec<(String, Vec<u8>)> {
    let file = std::fs::File::open(archive()).unwrap();
    let mut tar = tar::Archive::new(zstd::stream::read::Decoder::new(file).unwrap());
    tar.entries()
        .unwrap()
        .map(|e| {
            let mut e = e.unwrap();
            let path = e.path().unwrap().to_string_lossy().into_owned();
            let mut bytes = Vec::new();
            e.read_to_end(&mut bytes).unwrap();
            (path, bytes)
        })
        .collect()
}

fn write_members(path: &Path, members: &[(String, Vec<u8>)]) {
    let file = std::fs::File::create(path).unwrap();
    let mut tar = tar::Builder::new(zstd::stream::write::Encoder::new(file, 1).unwrap());
    for (name, bytes) in members {
        let mut h = tar::Header::new_gnu();
        h.set_size(bytes.len() as u64);
        h.set_mode(0o755);
        tar.append_data(&mut h, name, &bytes[..]).unwrap();
    }
    tar.into_inner().unwrap().finish().unwrap().flush().unwrap();
}

/// `--archive bad` on the host: exit 2, one line naming `member`, nothing left in TMPDIR.
fn assert_refused_naming(host: &Host, launcher: &Path, bad: &Path, member: &str) {
    let out = host.run(
        launcher,
        &["--archive", bad.to_str().unwrap(), "--arch", "a5"],
        &[],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains(&format!("member {member}:")),
        "{member}: {stderr}"
    );
    assert!(host.tmp_entries().is_empty(), "{:?}", host.tmp_entries());
    assert!(!host.path("work").join("cardguard-reports").exists());
}

#[test]
fn a_corrupted_archive_is_an_error_naming_the_bad_member() {
    let host = Host::new();
    let launcher = host.unpack().binary();
    let good = members();
    let top = good[0].0.split('/').next().unwrap().to_owned();
    let bad = host.path("bad.tar.zst");

    let mut changed = good.clone();
    let noop = changed
        .iter_mut()
        .find(|(p, _)| p.ends_with("/kernels/a5/noop.so"))
        .unwrap();
    let mid = noop.1.len() / 2;
    noop.1[mid] ^= 0x5a;
    write_members(&bad, &changed);
    assert_refused_naming(&host, &launcher, &bad, "kernels/a5/noop.so");

    let missing: Vec<_> = good
        .iter()
        .filter(|(p, _)| *p != format!("{top}/lib/libsim_acl.so"))
        .cloned()
        .collect();
    write_members(&bad, &missing);
    assert_refused_naming(&host, &launcher, &bad, "lib/libsim_acl.so");

    // Cut in the middle of the binary (the bulk of the archive, right after the manifest).
    let bytes = std::fs::read(archive()).unwrap();
    std::fs::write(&bad, &bytes[..bytes.len() / 3]).unwrap();
    assert_refused_naming(&host, &launcher, &bad, "cardguard-suite");
}

#[test]
fn a_package_without_one_suite_binary_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.tar.zst");
    for (args, needle) in [
        (vec!["--package", "no-such-package"], "no such package"),
        (vec!["--package", "platform-common"], "is no suite"),
        (vec!["--package", "cardguard-test-support"], "several binaries"),
        (vec!["--package", "runner", "--bin", "nope"], "no such binary"),
        // A binary that is not a suite: it cannot say which kernels it needs.
        (
            vec!["--package", "cardguard-test-support", "--bin", "sim-helper"],
            "--kernel-files failed",
        ),
        (vec!["--arch", "a9"], "--arch"),
    ] {
        let mut cmd = Command::new(XTASK);
        cmd.args(["archive", "--profile", "dev", "-o"]).arg(&out);
        if !args.contains(&"--arch") {
            cmd.args(["--arch", "a5"]);
        }
        let res = cmd.args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&res.stderr);
        assert_eq!(res.status.code(), Some(2), "{args:?}: {}", text(&res));
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
        assert!(!out.exists());
    }
}
