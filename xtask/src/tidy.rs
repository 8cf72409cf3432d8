//! The repository's rules, checked as an ordinary `#[test]` (rust-analyzer's `xtask/src/tidy.rs`
//! shape), so `cargo test` fails when one is broken:
//!
//! - every Rust source file starts with a `//!` doc saying what it owns (generated files aside);
//! - no file under a `src/` directory is over [`MAX_LINES`] lines;
//! - a `mod.rs` or `lib.rs` under `src/` declares and re-exports: no `fn` in it (its tests aside);
//! - `unsafe` code only in the modules of [`UNSAFE_ALLOWED`], each listed with why;
//! - no `#[path]` attribute outside build scripts;
//! - the test-support crate is a dev-dependency only: no product crate's normal dependency tree
//!   has it;
//! - no `Arch` variant named outside the arch crates, their lookup and tests ([`arch_names`]):
//!   callers read the arch's `ArchEntry`;
//! - no import circle between the files of a crate, nor between the folders (modules) of one
//!   parent ([`imports`]: the graph; [`cycles`]: the circles), but those of [`CIRCLES_ALLOWED`].
//!
//! The files are the ones git tracks (plus untracked, not ignored ones, so a new file is checked
//! before it is committed). This file owns the rules; it changes no file.

mod arch_names;
mod cycles;
mod imports;
mod modules;

use std::path::{Path, PathBuf};
use std::process::Command;

/// The longest a file under `src/` may be.
pub const MAX_LINES: usize = 600;

/// Files that may contain `unsafe` code, with the reason. Everything else must not.
pub const UNSAFE_ALLOWED: &[(&str, &str)] = &[
    (
        "crates/platform-common/src/acl/bindings.rs",
        "generated CANN bindings (bindgen)",
    ),
    (
        "crates/platform-common/src/acl/driver.rs",
        "the CANN driver: one block per C call",
    ),
    (
        "crates/platform-common/src/acl/arch.rs",
        "looks an arch's HAL symbols up, typed for its calls (libloading)",
    ),
    (
        "crates/platform-a5/src/hal.rs",
        "a5's register mapping: the halResMap call",
    ),
    (
        "crates/platform-a2a3/src/hal.rs",
        "a2a3's register mapping: the halGetDeviceInfoByBuff and halMemCtl calls",
    ),
    (
        "crates/platform-common/src/acl/introspect.rs",
        "reads the loaded libraries' paths (dladdr)",
    ),
    (
        "crates/platform-common/src/acl/sim_run.rs",
        "calls the simulator's cgSimStartRun extension",
    ),
    (
        "crates/platform-common/src/acl/library.rs",
        "loads the CANN libraries (libloading)",
    ),
    (
        "crates/platform-common/src/acl/symbols.rs",
        "resolves CANN symbols (libloading)",
    ),
    (
        "crates/platform-common/src/kernel/loader.rs",
        "loads kernel blobs and calls their entry",
    ),
    (
        "crates/platform-common/src/lease/handoff.rs",
        "a lane adopts its inherited lease descriptor",
    ),
    (
        "crates/platform-common/src/sim/aicore.rs",
        "the simulated AICore runs a kernel blob's blocks",
    ),
    (
        "crates/runner/src/lane/c_stdio.rs",
        "flushes C stdio (fflush) before an output mark",
    ),
    (
        "crates/runner/src/protocol/channel.rs",
        "a lane adopts its inherited protocol socket",
    ),
    (
        "crates/runner/src/suite/host_run.rs",
        "test-only: runs kernel blobs on the host for goldens",
    ),
    (
        "crates/runner/tests/kernels_golden.rs",
        "runs kernel blobs directly against their references",
    ),
    ("crates/sim-acl/src/abi.rs", "the CANN C ABI's pointer arguments"),
    ("crates/sim-acl/src/exports_acl.rs", "exported acl* C functions"),
    ("crates/sim-acl/src/exports_ext.rs", "exported cgSim* C functions"),
    ("crates/sim-acl/src/exports_hal.rs", "exported hal* C functions"),
    ("crates/sim-acl/src/exports_rt.rs", "exported rt* C functions"),
];

/// Import circles allowed (their members: files, or for a circle between folders each folder's
/// module file), with the reason. Every other circle fails [`check_imports`]; an entry that no
/// longer matches a circle fails too, so it is taken off the list.
pub const CIRCLES_ALLOWED: &[(&[&str], &str)] = &[(
    &[
        "crates/runner-cxx/src/bridge.rs",
        "crates/runner-cxx/src/convert.rs",
        "crates/runner-cxx/src/host.rs",
    ],
    "the cxx bridge: an `extern \"Rust\"` function or type must be in scope of the bridge's \
         file (cxx resolves it there) and returns the bridge's shared structs, so whatever \
         implements it imports the bridge back; only one file holding the bridge and every \
         function behind it (over the size limit) would have no circle",
)];

/// Generated files: no `//!` doc required (their generator writes its own header).
const GENERATED: &[&str] = &["crates/platform-common/src/acl/bindings.rs"];

/// One broken rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The file, relative to the workspace root.
    pub file: String,
    /// What is wrong.
    pub what: String,
}

/// The workspace root (the parent of this crate's directory).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask sits in the workspace root")
        .to_path_buf()
}

/// The Rust files git knows of (tracked, or untracked and not ignored).
fn rust_files(root: &Path) -> Vec<String> {
    let out = Command::new("git")
        .args([
            "ls-files",
            "--cached",
            "--others",
            "--exclude-standard",
            "--",
            "*.rs",
        ])
        .current_dir(root)
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git ls-files failed");
    let mut files: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|f| root.join(f).is_file())
        .map(str::to_owned)
        .collect();
    files.sort();
    files.dedup();
    files
}

/// A line of code with its `//` comment and string contents blanked out, so rules see only code.
fn code_of(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    let mut in_str = false;
    while let Some(c) = chars.next() {
        if in_str {
            match c {
                '\\' => {
                    chars.next();
                }
                '"' => {
                    in_str = false;
                    out.push('"');
                }
                _ => {}
            }
            continue;
        }
        match c {
            '"' => {
                in_str = true;
                out.push('"');
            }
            '/' if chars.peek() == Some(&'/') => break,
            _ => out.push(c),
        }
    }
    out
}

fn has_word(code: &str, word: &str) -> bool {
    code.match_indices(word).any(|(i, _)| {
        let before = code[..i].chars().next_back();
        let after = code[i + word.len()..].chars().next();
        let ident = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        !ident(before) && !ident(after)
    })
}

/// Checks one file's text against every rule.
pub fn check_file(file: &str, text: &str) -> Vec<Violation> {
    let mut v = Vec::new();
    let mut bad = |what: String| {
        v.push(Violation {
            file: file.to_owned(),
            what,
        })
    };
    let name = Path::new(file)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let in_src = file.split('/').any(|part| part == "src");
    let build_script = name == "build.rs";

    if !GENERATED.contains(&file) && !text.trim_start().starts_with("//!") {
        bad("does not start with a `//!` doc saying what it owns".to_owned());
    }
    let lines = text.lines().count();
    if in_src && lines > MAX_LINES {
        bad(format!("{lines} lines, over {MAX_LINES}: split it by subject"));
    }
    let declares_only = in_src && (name == "mod.rs" || name == "lib.rs");
    let unsafe_ok = UNSAFE_ALLOWED.iter().any(|(f, _)| *f == file);
    let arches_ok = arch_names::may_name_arches(file);
    let mut in_tests = false;
    for (n, line) in text.lines().enumerate() {
        let code = code_of(line);
        let trimmed = code.trim_start();
        if trimmed.starts_with("mod tests") {
            in_tests = true;
        }
        if declares_only && !in_tests {
            let after_vis = trimmed
                .strip_prefix("pub(crate) ")
                .or_else(|| trimmed.strip_prefix("pub(super) "))
                .or_else(|| trimmed.strip_prefix("pub "))
                .unwrap_or(trimmed);
            let after_quals = after_vis
                .trim_start_matches("const ")
                .trim_start_matches("async ")
                .trim_start_matches("unsafe ");
            if after_quals.starts_with("fn ") {
                bad(format!(
                    "line {}: a `fn` in a {name}: move it to a named file",
                    n + 1
                ));
            }
        }
        if !unsafe_ok && has_word(&code, "unsafe") {
            bad(format!(
                "line {}: `unsafe` outside the modules allowed it (xtask/src/tidy.rs UNSAFE_ALLOWED)",
                n + 1
            ));
        }
        if !arches_ok && !in_tests && !code.contains(".only_on(") {
            if let Some(variant) = arch_names::variant_in(&code) {
                bad(format!(
                    "line {}: `{variant}` outside the arch crates and tests: read the arch's \
                     `ArchEntry` (cardguard_arches::entry) instead",
                    n + 1
                ));
            }
        }
        if !build_script && trimmed.starts_with("#[path") {
            bad(format!("line {}: `#[path]` outside a build script", n + 1));
        }
    }
    v
}

/// Checks every Rust file of the workspace.
pub fn check_workspace() -> Vec<Violation> {
    let root = root();
    let mut v = Vec::new();
    for file in rust_files(&root) {
        let text = std::fs::read_to_string(root.join(&file)).unwrap_or_default();
        v.extend(check_file(&file, &text));
    }
    v
}

/// The root file of every target of every workspace package (libraries, binaries, tests, build
/// scripts, examples), relative to the workspace root.
fn crate_roots(root: &Path) -> Vec<PathBuf> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args(["metadata", "--offline", "--no-deps", "--format-version", "1"])
        .current_dir(root)
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("cargo metadata prints JSON");
    let mut roots: Vec<PathBuf> = meta["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|p| p["targets"].as_array().into_iter().flatten())
        .filter_map(|t| t["src_path"].as_str())
        .filter_map(|p| Path::new(p).strip_prefix(root).ok().map(Path::to_owned))
        .collect();
    roots.sort();
    roots.dedup();
    roots
}

/// The import circles of the crates rooted at `roots` (each once, however many crates share its
/// files), or the files that could not be read.
pub fn import_circles(root: &Path, roots: &[PathBuf]) -> Result<Vec<cycles::Circle>, Vec<Violation>> {
    let mut circles = Vec::new();
    let mut unreadable = Vec::new();
    for krate in roots {
        match modules::Tree::load(root, krate) {
            Ok(tree) => {
                let edges = imports::file_edges(&tree);
                circles.extend(cycles::file_circles(&edges));
                circles.extend(cycles::folder_circles(&tree, &edges));
            }
            Err(e) => unreadable.push(Violation {
                file: e.file.display().to_string(),
                what: e.what,
            }),
        }
    }
    if !unreadable.is_empty() {
        return Err(unreadable);
    }
    circles.sort_by(|a, b| (&a.within, &a.members).cmp(&(&b.within, &b.members)));
    circles.dedup_by(|a, b| a.within == b.within && a.members == b.members);
    Ok(circles)
}

/// Whether [`CIRCLES_ALLOWED`] lists `circle` (every member inside one entry).
fn allowed(circle: &cycles::Circle) -> bool {
    CIRCLES_ALLOWED
        .iter()
        .any(|(files, _)| circle.members.iter().all(|m| files.contains(&m.as_str())))
}

/// The import rule: a violation per circle not allowed, naming its members and the imports that
/// close it.
pub fn check_imports(circles: &[cycles::Circle]) -> Vec<Violation> {
    circles
        .iter()
        .filter(|c| !allowed(c))
        .map(|c| {
            let members: Vec<&str> = c.members.iter().map(String::as_str).collect();
            let what = if c.within.is_empty() {
                format!("import circle between files {}", members.join(", "))
            } else {
                format!(
                    "import circle between the modules of {}: {}",
                    c.within,
                    members.join(", ")
                )
            };
            Violation {
                file: members[0].to_owned(),
                what: format!("{what}; through {}", c.imports.join("; ")),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_workspace_keeps_its_rules() {
        let v = check_workspace();
        let lines: Vec<String> = v.iter().map(|v| format!("{}: {}", v.file, v.what)).collect();
        assert!(lines.is_empty(), "repository rules broken:\n{}", lines.join("\n"));
    }

    #[test]
    fn every_allowed_unsafe_module_exists_and_uses_it() {
        let root = root();
        for (file, why) in UNSAFE_ALLOWED {
            let text = std::fs::read_to_string(root.join(file))
                .unwrap_or_else(|e| panic!("{file} ({why}) is listed but cannot be read: {e}"));
            assert!(
                text.lines().any(|l| has_word(&code_of(l), "unsafe")),
                "{file} is allowed `unsafe` ({why}) but has none: take it off the list"
            );
        }
    }

    #[test]
    fn no_import_circle_between_files_or_folders() {
        let root = root();
        let circles = import_circles(&root, &crate_roots(&root)).unwrap_or_else(|v| {
            let lines: Vec<String> = v.iter().map(|v| format!("{}: {}", v.file, v.what)).collect();
            panic!("the import rule cannot read:\n{}", lines.join("\n"))
        });
        let lines: Vec<String> = check_imports(&circles)
            .iter()
            .map(|v| format!("{}: {}", v.file, v.what))
            .collect();
        assert!(lines.is_empty(), "import circles:\n{}", lines.join("\n"));
        for (files, why) in CIRCLES_ALLOWED {
            assert!(
                circles
                    .iter()
                    .any(|c| c.members.iter().all(|m| files.contains(&m.as_str()))),
                "the circle {files:?} is allowed ({why}) but there is none: take it off the list"
            );
        }
    }

    /// The rule fails on a circle and names its files and the imports that close it.
    #[test]
    fn the_import_rule_catches_a_circle() {
        let dir = tempfile::tempdir().unwrap();
        for (file, text) in [
            ("src/lib.rs", "//! Root.\nmod a;\nmod b;\n"),
            ("src/a.rs", "//! A.\nuse crate::b::B;\npub struct A(B);\n"),
            ("src/b.rs", "//! B.\npub struct B;\nfn f(_: crate::a::A) {}\n"),
        ] {
            std::fs::create_dir_all(dir.path().join(file).parent().unwrap()).unwrap();
            std::fs::write(dir.path().join(file), text).unwrap();
        }
        let circles = import_circles(dir.path(), &[PathBuf::from("src/lib.rs")]).unwrap();
        let v = check_imports(&circles);
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(v[0].what.contains("between files src/a.rs, src/b.rs"), "{v:?}");
        assert!(v[0].what.contains("src/a.rs -> src/b.rs (crate::b::B)"), "{v:?}");
        assert!(v[0].what.contains("src/b.rs -> src/a.rs (crate::a::A)"), "{v:?}");
    }

    /// The crates `cargo tree -e normal -p KRATE` lists (names only).
    fn normal_tree(krate: &str) -> Vec<String> {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let out = Command::new(&cargo)
            .args([
                "tree",
                "--offline",
                "-e",
                "normal",
                "--prefix",
                "none",
                "--all-features",
                "-p",
                krate,
            ])
            .current_dir(root())
            .output()
            .expect("cargo tree runs");
        assert!(
            out.status.success(),
            "cargo tree -p {krate}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.split_whitespace().next())
            .map(str::to_owned)
            .collect()
    }

    /// `cargo tree -e normal` of every product crate: test code never reaches a user's build.
    #[test]
    fn test_support_is_never_a_normal_dependency() {
        for krate in [
            "platform-common",
            "platform-a5",
            "platform-a2a3",
            "cardguard-arches",
            "cardguard-reference",
            "cardguard-cli",
            "cardguard-report",
            "cardguard-archive",
            "runner",
            "sim-acl",
        ] {
            let tree = normal_tree(krate);
            assert!(
                !tree.iter().any(|c| c == "cardguard-test-support"),
                "{krate} depends on the test-support crate outside its dev-dependencies: {tree:?}"
            );
        }
    }

    /// xtask drives the suite binary as a process and reads its reports through the report crate;
    /// the formats' crates are below the runner: none of them links it.
    #[test]
    fn xtask_and_the_formats_never_link_the_runner() {
        for krate in [
            "xtask",
            "cardguard-report",
            "cardguard-archive",
            "cardguard-reference",
            "cardguard-cli",
        ] {
            let tree = normal_tree(krate);
            assert!(
                !tree.iter().any(|c| c == "runner"),
                "{krate} links the runner: {tree:?}"
            );
        }
    }

    /// Each rule catches what it names, and comments or strings never count as code.
    #[test]
    fn each_rule_catches_its_case() {
        let doc = "//! Owns x.\n";
        assert!(check_file("crates/a/src/x.rs", doc).is_empty());
        assert_eq!(check_file("crates/a/src/x.rs", "fn f() {}\n").len(), 1, "no doc");
        let long = format!("{doc}{}", "let _ = 1;\n".repeat(MAX_LINES));
        assert_eq!(check_file("crates/a/src/x.rs", &long).len(), 1, "too long");
        assert!(
            check_file("crates/a/tests/x.rs", &long).is_empty(),
            "tests are not under src/"
        );
        let with_fn = format!("{doc}pub fn f() {{}}\n");
        assert_eq!(
            check_file("crates/a/src/lib.rs", &with_fn).len(),
            1,
            "fn in lib.rs"
        );
        assert_eq!(
            check_file("crates/a/src/m/mod.rs", &with_fn).len(),
            1,
            "fn in mod.rs"
        );
        assert!(check_file("crates/a/src/m/named.rs", &with_fn).is_empty());
        let tests_fn = format!("{doc}#[cfg(test)]\nmod tests {{\n    fn t() {{}}\n}}\n");
        assert!(
            check_file("crates/a/src/lib.rs", &tests_fn).is_empty(),
            "tests may hold fns"
        );
        let uns = format!("{doc}fn f() {{ unsafe {{ g() }} }}\n");
        assert_eq!(check_file("crates/a/src/x.rs", &uns).len(), 1, "unsafe");
        let mention = format!("{doc}// no unsafe here\nlet s = \"unsafe\";\nlet not_unsafe_x = 1;\n");
        assert!(
            check_file("crates/a/src/x.rs", &mention).is_empty(),
            "{:?}",
            check_file("crates/a/src/x.rs", &mention)
        );
        let path = format!("{doc}#[path = \"x.rs\"]\nmod x;\n");
        assert_eq!(check_file("crates/a/src/x.rs", &path).len(), 1, "#[path]");
        assert!(
            check_file("crates/a/build.rs", &path).is_empty(),
            "build scripts may"
        );
        let arch =
            format!("{doc}fn f(a: Arch) -> u32 {{\n    match a {{\n        Arch::A5 => 1,\n    }}\n}}\n");
        assert_eq!(check_file("crates/a/src/x.rs", &arch).len(), 1, "an arch variant");
        assert!(
            check_file("crates/platform-a5/src/x.rs", &arch).is_empty(),
            "arch crates may"
        );
        let case = format!("{doc}let c = case(\"x\").only_on(&[Arch::A5]);\n");
        assert!(
            check_file("crates/a/src/x.rs", &case).is_empty(),
            "a case's arches are its data"
        );
    }
}
