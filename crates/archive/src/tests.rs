//! The archive format end to end in-process: written, unpacked and checked; every corruption the
//! unpacker must catch, each named by its member.

use std::io::Write;
use std::path::{Path, PathBuf};

use platform_common::Arch;

use super::*;

const TOP: &str = "suite-a5";

fn manifest() -> Manifest {
    Manifest {
        format: FORMAT,
        arch: Arch::A5,
        suite: SuiteInfo {
            package: "runner".into(),
            binary: "suite".into(),
        },
        git_revision: None,
        git_dirty: None,
        profile: "dev".into(),
        created_at: "2026-01-01T00:00:00Z".into(),
        members: Vec::new(),
    }
}

/// A blob's bytes: 1 MiB that does not compress (xorshift), so the archive spans many zstd
/// blocks and a cut can land inside it.
fn blob_bytes() -> Vec<u8> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..BLOB_BYTES)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

const BLOB_BYTES: usize = 1 << 20;

/// Three source files (the binary, a blob, a library) in `dir`.
fn sources(dir: &Path) -> Vec<SourceFile> {
    let file = |name: &str, bytes: &[u8]| {
        let p = dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    };
    vec![
        SourceFile {
            path: "suite".into(),
            source: file("suite", b"#!/bin/sh\necho suite\n"),
            executable: true,
        },
        SourceFile {
            path: "kernels/a5/noop.so".into(),
            source: file("noop.so", &blob_bytes()),
            executable: false,
        },
        SourceFile {
            path: "lib/libsim_acl.so".into(),
            source: file("lib.so", b"library"),
            executable: false,
        },
    ]
}

fn good_archive(dir: &Path) -> (PathBuf, Manifest) {
    let out = dir.join("good.tar.zst");
    let m = write_archive(&out, TOP, manifest(), &sources(dir)).unwrap();
    (out, m)
}

/// Writes an archive by hand: `entries` are (path under the archive, bytes), in order.
fn raw_archive(path: &Path, entries: &[(String, Vec<u8>)]) {
    let file = std::fs::File::create(path).unwrap();
    let mut tar = tar::Builder::new(zstd::stream::write::Encoder::new(file, 1).unwrap());
    for (name, bytes) in entries {
        let mut h = tar::Header::new_gnu();
        h.set_size(bytes.len() as u64);
        h.set_mode(0o644);
        h.set_entry_type(tar::EntryType::Regular);
        // `append_data` refuses `..`; set the raw name for the unsafe-path case.
        h.as_gnu_mut().unwrap().name[..name.len()].copy_from_slice(name.as_bytes());
        h.set_cksum();
        tar.append(&h, &bytes[..]).unwrap();
    }
    tar.into_inner().unwrap().finish().unwrap().flush().unwrap();
}

/// The good archive's entries, as (path, bytes), manifest first.
fn good_entries(dir: &Path, m: &Manifest) -> Vec<(String, Vec<u8>)> {
    let mut v = vec![(format!("{TOP}/{MANIFEST_NAME}"), serde_json::to_vec(m).unwrap())];
    for s in sources(dir) {
        v.push((format!("{TOP}/{}", s.path), std::fs::read(&s.source).unwrap()));
    }
    v
}

fn unpack_err(archive: &Path) -> ArchiveError {
    let into = tempfile::tempdir().unwrap();
    unpack(archive, into.path()).unwrap_err()
}

#[test]
fn a_written_archive_unpacks_with_every_member_checked() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let (out, m) = good_archive(dir.path());
    assert_eq!(m.members.len(), 3);
    assert_eq!(m.member("kernels/a5/noop.so").unwrap().bytes, BLOB_BYTES as u64);
    let into = tempfile::tempdir().unwrap();
    let u = unpack(&out, into.path()).unwrap();
    assert_eq!(u.root, into.path().join(TOP));
    assert_eq!(u.manifest, m);
    assert_eq!(std::fs::read(u.binary()).unwrap(), b"#!/bin/sh\necho suite\n");
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o111;
    assert_ne!(mode(&u.binary()), 0);
    assert_eq!(mode(&u.root.join("lib/libsim_acl.so")), 0);
    assert!(u.root.join(MANIFEST_NAME).is_file());
    assert_eq!(
        std::fs::read(u.root.join("kernels/a5/noop.so")).unwrap(),
        blob_bytes()
    );
}

#[test]
fn a_changed_member_is_a_checksum_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let (_, m) = good_archive(dir.path());
    let mut entries = good_entries(dir.path(), &m);
    entries[2].1[100] ^= 1;
    let bad = dir.path().join("bad.tar.zst");
    raw_archive(&bad, &entries);
    let e = unpack_err(&bad);
    assert_eq!(e.member(), Some("kernels/a5/noop.so"), "{e}");
    assert!(
        matches!(
            &e,
            ArchiveError::Member {
                problem: MemberProblem::Checksum { .. },
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("kernels/a5/noop.so") && !e.to_string().contains('\n'));
}

#[test]
fn a_missing_an_unlisted_and_a_doubled_member_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let (_, m) = good_archive(dir.path());
    let bad = dir.path().join("bad.tar.zst");

    let mut missing = good_entries(dir.path(), &m);
    missing.remove(3);
    raw_archive(&bad, &missing);
    let e = unpack_err(&bad);
    assert_eq!(e.member(), Some("lib/libsim_acl.so"), "{e}");
    assert!(
        matches!(
            &e,
            ArchiveError::Member {
                problem: MemberProblem::Missing,
                ..
            }
        ),
        "{e}"
    );

    let mut unlisted = good_entries(dir.path(), &m);
    unlisted.push((format!("{TOP}/extra.so"), b"x".to_vec()));
    raw_archive(&bad, &unlisted);
    let e = unpack_err(&bad);
    assert_eq!(e.member(), Some("extra.so"), "{e}");
    assert!(
        matches!(
            &e,
            ArchiveError::Member {
                problem: MemberProblem::Unlisted,
                ..
            }
        ),
        "{e}"
    );

    let mut doubled = good_entries(dir.path(), &m);
    doubled.push(doubled[1].clone());
    raw_archive(&bad, &doubled);
    assert!(matches!(
        unpack_err(&bad),
        ArchiveError::Member {
            problem: MemberProblem::Duplicate,
            ..
        }
    ));
}

#[test]
fn a_truncated_archive_names_the_member_it_cuts() {
    let dir = tempfile::tempdir().unwrap();
    let (good, _) = good_archive(dir.path());
    let bytes = std::fs::read(&good).unwrap();
    let bad = dir.path().join("cut.tar.zst");
    // Cut at 40 places: each cut is an error naming a member (never a panic, never Ok), and the
    // cuts inside the blob's data name the blob.
    let mut named = std::collections::BTreeSet::new();
    for len in (0..bytes.len()).step_by(bytes.len() / 40) {
        std::fs::write(&bad, &bytes[..len]).unwrap();
        let e = unpack_err(&bad);
        match &e {
            ArchiveError::Member { member, .. } => {
                named.insert(member.clone());
            }
            ArchiveError::NotAnArchive { .. } => assert!(len < 1024, "{len}: {e}"),
            other => panic!("cut at {len}: {other}"),
        }
    }
    assert!(named.contains("kernels/a5/noop.so"), "{named:?}");
}

#[test]
fn unsafe_paths_bad_manifests_and_non_archives_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (_, m) = good_archive(dir.path());
    let bad = dir.path().join("bad.tar.zst");

    let mut escape = good_entries(dir.path(), &m);
    escape.push((format!("{TOP}/../evil"), b"x".to_vec()));
    raw_archive(&bad, &escape);
    assert!(matches!(
        unpack_err(&bad),
        ArchiveError::Member {
            problem: MemberProblem::UnsafePath,
            ..
        }
    ));

    let mut no_manifest = good_entries(dir.path(), &m);
    no_manifest.remove(0);
    raw_archive(&bad, &no_manifest);
    let e = unpack_err(&bad);
    assert_eq!(e.member(), Some(MANIFEST_NAME), "{e}");

    let mut garbled = good_entries(dir.path(), &m);
    garbled[0].1.truncate(10);
    raw_archive(&bad, &garbled);
    assert!(matches!(
        unpack_err(&bad),
        ArchiveError::Member {
            problem: MemberProblem::BadManifest(_),
            ..
        }
    ));

    std::fs::write(&bad, b"not an archive at all").unwrap();
    assert!(matches!(
        unpack_err(&bad),
        ArchiveError::NotAnArchive { .. } | ArchiveError::Member { .. }
    ));
    assert!(matches!(
        unpack_err(&dir.path().join("absent.tar.zst")),
        ArchiveError::Open { .. }
    ));
}
