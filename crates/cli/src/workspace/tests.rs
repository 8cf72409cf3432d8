//! Tests of the workspace module: the suite package found from `cargo metadata`'s packages, and
//! `--package` taken out of a command line.

use super::*;

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

/// A workspace of `packages`: (name, bins, depends on runner).
fn workspace(packages: &[(&str, &[&str], bool)]) -> Workspace {
    let packages: Vec<serde_json::Value> = packages
        .iter()
        .map(|(name, bins, runner)| {
            let mut targets: Vec<serde_json::Value> = bins
                .iter()
                .map(|b| serde_json::json!({"name": b, "kind": ["bin"]}))
                .collect();
            targets.push(serde_json::json!({"name": name, "kind": ["lib"]}));
            let deps = if *runner {
                serde_json::json!([{"name": "runner", "kind": null}, {"name": "tempfile", "kind": "dev"}])
            } else {
                serde_json::json!([{"name": "runner", "kind": "dev"}])
            };
            serde_json::json!({"name": name, "targets": targets, "dependencies": deps})
        })
        .collect();
    let meta = serde_json::json!({
        "workspace_root": "/ws",
        "target_directory": "/ws/target",
        "packages": packages,
    });
    Workspace::from_metadata(meta.to_string().as_bytes()).unwrap()
}

fn usage(r: Result<SuitePackage, Error>) -> String {
    match r {
        Err(Error::Usage(m)) => m,
        other => panic!("not a usage error: {other:?}"),
    }
}

#[test]
fn the_one_suite_package_is_found_without_package() {
    let ws = workspace(&[
        ("my-suite", &["my-suite"], true),
        ("helpers", &[], true),
        ("tool", &["tool"], false),
    ]);
    let s = ws.suite(None, None).unwrap();
    assert_eq!((s.package.as_str(), s.binary.as_str()), ("my-suite", "my-suite"));
    assert_eq!(ws.root, Path::new("/ws"));
    assert_eq!(ws.target_dir, Path::new("/ws/target"));
}

#[test]
fn several_suite_packages_are_an_error_naming_them() {
    let ws = workspace(&[
        ("a-suite", &["a"], true),
        ("b-suite", &["b"], true),
        (TOOL_PACKAGE, &["cargo-cardguard"], true),
    ]);
    let e = usage(ws.suite(None, None));
    assert_eq!(
        e,
        "several suite packages in the workspace (a-suite, b-suite): name one with --package"
    );
    assert_eq!(ws.suite(Some("b-suite"), None).unwrap().binary, "b");
}

#[test]
fn no_suite_package_is_an_error_naming_the_packages() {
    let ws = workspace(&[("lib-only", &[], true), ("tool", &["tool"], false)]);
    let e = usage(ws.suite(None, None));
    assert!(e.starts_with("no suite package in the workspace at /ws"), "{e}");
    assert!(e.ends_with("packages: lib-only, tool)"), "{e}");
}

#[test]
fn an_unknown_or_non_suite_package_is_an_error_naming_the_candidates() {
    let ws = workspace(&[("my-suite", &["my-suite"], true), ("tool", &["tool"], false)]);
    let e = usage(ws.suite(Some("my-suit"), None));
    assert_eq!(
        e,
        "--package my-suit: no such package in the workspace at /ws (suite packages: my-suite)"
    );
    let e = usage(ws.suite(Some("tool"), None));
    assert!(e.starts_with("--package tool is no suite"), "{e}");
    assert!(!e.contains('\n'), "{e}");
}

#[test]
fn several_binaries_need_bin() {
    let ws = workspace(&[("my-suite", &["one", "two"], true)]);
    assert!(usage(ws.suite(None, None)).ends_with("(one, two): name the suite with --bin"));
    assert_eq!(ws.suite(None, Some("two")).unwrap().binary, "two");
    assert!(
        usage(ws.suite(None, Some("three"))).starts_with("--bin three: package my-suite has no such binary")
    );
}

#[test]
fn the_default_package_and_the_builtin_suite() {
    let mut ws = workspace(&[
        ("runner", &[], false),
        ("onboard-suite", &["onboard-suite"], true),
    ]);
    assert!(usage(ws.suite(None, None))
        .starts_with("several suite packages in the workspace (runner, onboard-suite)"));
    ws.default_package = Some(BUILTIN_PACKAGE.to_owned());
    let s = ws.suite(None, None).unwrap();
    assert_eq!(
        (s.package.as_str(), s.binary.as_str()),
        ("runner", BUILTIN_BINARY)
    );
}

#[test]
fn package_is_taken_out_wherever_it_stands() {
    let (p, rest) =
        split_package(strings(&["--arch", "a5", "--package", "onboard-suite", "--list"])).unwrap();
    assert_eq!(p.as_deref(), Some("onboard-suite"));
    assert_eq!(rest, ["--arch", "a5", "--list"]);
    let (p, rest) = split_package(strings(&["--package=x", "--arch", "a5"])).unwrap();
    assert_eq!((p.as_deref(), rest), (Some("x"), strings(&["--arch", "a5"])));
    let (p, rest) = split_package(strings(&["--arch", "a2a3"])).unwrap();
    assert_eq!((p, rest), (None, strings(&["--arch", "a2a3"])));
    for bad in [
        &["--package"][..],
        &["--package", "--arch"],
        &["--package=a", "--package", "b"],
        &["--package="],
    ] {
        let e = split_package(strings(bad)).unwrap_err();
        assert!(e.starts_with("--package "), "{bad:?}: {e}");
    }
}

#[test]
fn a_switch_is_taken_out_wherever_it_stands() {
    let (on, rest) = split_flag(strings(&["--arch", "a5", "--release", "--list"]), "--release");
    assert!(on);
    assert_eq!(rest, ["--arch", "a5", "--list"]);
    let (on, rest) = split_flag(strings(&["--arch", "a5"]), "--release");
    assert_eq!((on, rest), (false, strings(&["--arch", "a5"])));
}

#[test]
fn a_manifest_path_names_its_workspace_from_anywhere() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap();
    let ws = Workspace::discover_manifest(&repo.join("crates/runner/Cargo.toml")).unwrap();
    assert_eq!(ws.root, repo);
    assert!(ws.packages.iter().any(|p| p.name == BUILTIN_PACKAGE));
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("Cargo.toml");
    match Workspace::discover_manifest(&missing) {
        Err(Error::Usage(m)) => assert!(
            m.starts_with(&format!("no cargo workspace at {}: ", missing.display())),
            "{m}"
        ),
        other => panic!("{other:?}"),
    }
    match Workspace::discover(dir.path()) {
        Err(Error::Usage(m)) => assert!(
            m.starts_with(&format!("no cargo workspace at {}: ", dir.path().display())),
            "{m}"
        ),
        other => panic!("{other:?}"),
    }
}
