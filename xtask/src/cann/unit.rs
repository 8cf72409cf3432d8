//! The conformance unit: a C++17 file that includes CANN's real headers and, inside
//! `namespace cg`, cardguard's header (types only), then `static_assert`s that every call's
//! `PFN_` type is the real function's type, every shared constant has the real value, and every
//! shared struct has the real size, alignment and field offsets. The compiler does the reading
//! of CANN's headers; this file writes the unit, runs the compiler and turns each failed
//! assertion into one line.
//!
//! A name is checked only where the real headers declare it (the preprocessed text of the real
//! includes, macros kept, holds it as a word); the others are returned as absent, for the
//! caller to judge (the wheel has no runtime or HAL header, an install has them all).
//!
//! Type equality is exact but for two ABI facts: an enum equals an integer type of its size
//! (cardguard reads `drvError_t`, an enum in CANN, as `int`; enumerator values are checked by
//! name), and a struct cardguard leaves incomplete (passed only as a null pointer) equals any
//! struct; two complete structs are equal in size and alignment (their fields are checked
//! apart).

use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::header::{ConstKind, Declarations};

/// The marker every assertion's message starts with.
const MARK: &str = "cg-mismatch: ";

/// Where CANN's real headers are and which to include.
#[derive(Debug, Clone)]
pub struct RealHeaders {
    /// `-I` directories.
    pub include_dirs: Vec<PathBuf>,
    /// What to `#include`, each as written between the quotes (relative to an include
    /// directory, or an absolute path).
    pub includes: Vec<String>,
}

/// What a check found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outcome {
    /// One line per mismatch: `NAME: what differs`.
    pub mismatches: Vec<String>,
    /// Names cardguard's header declares that the real headers do not (not checked).
    pub absent: Vec<String>,
    /// How many assertions the unit made.
    pub checked: usize,
}

/// The check could not run.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// The compiler did not start.
    #[error("cannot run the C++ compiler `{cxx}` (set CXX): {reason}")]
    Compiler {
        /// The command.
        cxx: String,
        /// Why.
        reason: String,
    },
    /// The real headers do not compile, or the unit failed for a reason other than a mismatch.
    #[error("the conformance unit does not compile: {0}")]
    Compile(String),
    /// A temporary file could not be written.
    #[error("cannot write the conformance unit: {0}")]
    Io(#[from] std::io::Error),
}

/// The C++ compiler: `$CXX`, else `c++`.
pub fn compiler() -> String {
    std::env::var("CXX")
        .ok()
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| "c++".to_owned())
}

fn includes_text(real: &RealHeaders) -> String {
    let mut s =
        String::from("#include <cstddef>\n#include <cstdint>\n#include <tuple>\n#include <type_traits>\n");
    for inc in &real.includes {
        let _ = writeln!(s, "#include \"{inc}\"");
    }
    s
}

fn run(
    cxx: &str,
    real: &RealHeaders,
    args: &[&str],
    file: &Path,
) -> Result<std::process::Output, CheckError> {
    let mut cmd = Command::new(cxx);
    cmd.arg("-std=c++17").args(args);
    for dir in &real.include_dirs {
        cmd.arg("-I").arg(dir);
    }
    cmd.arg(file).output().map_err(|e| CheckError::Compiler {
        cxx: cxx.to_owned(),
        reason: e.to_string(),
    })
}

/// Every word of the real includes after preprocessing, `#define`s kept: what they declare.
fn declared_words(cxx: &str, real: &RealHeaders, dir: &Path) -> Result<HashSet<String>, CheckError> {
    let file = dir.join("real.cpp");
    std::fs::write(&file, includes_text(real))?;
    let out = run(cxx, real, &["-E", "-dD"], &file)?;
    if !out.status.success() {
        return Err(CheckError::Compile(first_errors(&String::from_utf8_lossy(
            &out.stderr,
        ))));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(text
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect())
}

fn first_errors(stderr: &str) -> String {
    let errors: Vec<&str> = stderr.lines().filter(|l| l.contains("error")).take(3).collect();
    if errors.is_empty() {
        stderr.lines().take(3).collect::<Vec<_>>().join(" | ")
    } else {
        errors.join(" | ")
    }
}

/// The machinery the assertions use (see the module docs for what "equal" means).
const TRAITS: &str = r#"
template <class T, class = void> struct cg_complete : std::false_type {};
template <class T> struct cg_complete<T, decltype(void(sizeof(T)))> : std::true_type {};
template <class A, class B> constexpr bool cg_same();
template <class A, class B> struct cg_params : std::false_type {};
template <> struct cg_params<std::tuple<>, std::tuple<>> : std::true_type {};
template <class A, class... As, class B, class... Bs>
struct cg_params<std::tuple<A, As...>, std::tuple<B, Bs...>>
    : std::integral_constant<bool, cg_same<A, B>() && cg_params<std::tuple<As...>, std::tuple<Bs...>>::value> {};
template <class A, class B> struct cg_fn : std::false_type {};
template <class RA, class... PA, class RB, class... PB>
struct cg_fn<RA (*)(PA...), RB (*)(PB...)>
    : std::integral_constant<bool, cg_same<RA, RB>() && cg_params<std::tuple<PA...>, std::tuple<PB...>>::value> {};
template <class A, class B> constexpr bool cg_same() {
    if constexpr (std::is_same<A, B>::value) {
        return true;
    } else if constexpr (std::is_const<A>::value || std::is_const<B>::value) {
        return std::is_const<A>::value == std::is_const<B>::value &&
               cg_same<typename std::remove_const<A>::type, typename std::remove_const<B>::type>();
    } else if constexpr (std::is_pointer<A>::value && std::is_pointer<B>::value) {
        using PA = typename std::remove_pointer<A>::type;
        using PB = typename std::remove_pointer<B>::type;
        if constexpr (std::is_function<PA>::value && std::is_function<PB>::value) {
            return cg_fn<A, B>::value;
        } else {
            return cg_same<PA, PB>();
        }
    } else if constexpr ((std::is_enum<A>::value || std::is_enum<B>::value) &&
                         (std::is_enum<A>::value || std::is_integral<A>::value) &&
                         (std::is_enum<B>::value || std::is_integral<B>::value)) {
        return sizeof(A) == sizeof(B);
    } else if constexpr (std::is_class<A>::value && std::is_class<B>::value) {
        if constexpr (!cg_complete<A>::value) {
            return true;
        } else if constexpr (cg_complete<B>::value) {
            return sizeof(A) == sizeof(B) && alignof(A) == alignof(B);
        } else {
            return false;
        }
    } else {
        return false;
    }
}
"#;

/// The unit's text for `decls` of the header at `header`, checking only the names in `present`.
/// Returns the text, the number of assertions and the names left out.
pub fn unit_text(
    decls: &Declarations,
    header: &Path,
    real: &RealHeaders,
    present: &HashSet<String>,
) -> (String, usize, Vec<String>) {
    let mut absent = Vec::new();
    let mut checked = 0usize;
    let mut s = includes_text(real);
    let consts: Vec<&(String, ConstKind)> = decls
        .constants
        .iter()
        .filter(|(n, _)| {
            let here = present.contains(n);
            if !here {
                absent.push(n.clone());
            }
            here
        })
        .collect();
    s.push_str("\n// The real values, captured before cardguard's header (re)defines the names.\n");
    for (name, _) in &consts {
        let _ = writeln!(
            s,
            "constexpr long long cg_real_{name} = (long long)({name});\n#undef {name}"
        );
    }
    s.push_str(TRAITS);
    let _ = writeln!(
        s,
        "\nnamespace cg {{\n#define CG_TYPES_ONLY 1\n#include \"{}\"\n}}\n",
        header.display()
    );
    for call in &decls.calls {
        if !present.contains(call) {
            absent.push(call.clone());
            continue;
        }
        checked += 1;
        let _ = writeln!(
            s,
            "static_assert(cg_fn<cg::PFN_{call}, decltype(&::{call})>::value, \"{MARK}{call}: PFN_{call} is not the type of CANN's {call}\");"
        );
    }
    for (name, kind) in &consts {
        checked += 1;
        let ours = match kind {
            ConstKind::Macro => format!("(long long)({name})"),
            ConstKind::Enumerator => format!("(long long)(cg::{name})"),
        };
        let _ = writeln!(
            s,
            "static_assert({ours} == cg_real_{name}, \"{MARK}{name}: cardguard's value is not CANN's\");"
        );
    }
    for st in &decls.structs {
        let bare = st.c_name.trim_start_matches("struct ");
        if !present.contains(bare) {
            absent.push(st.c_name.clone());
            continue;
        }
        let (ours, theirs) = if st.c_name.starts_with("struct ") {
            (format!("struct cg::{bare}"), format!("struct ::{bare}"))
        } else {
            (format!("cg::{bare}"), format!("::{bare}"))
        };
        checked += 2;
        let _ = writeln!(
            s,
            "static_assert(sizeof({ours}) == sizeof({theirs}), \"{MARK}{bare}: the size is not CANN's\");\n\
             static_assert(alignof({ours}) == alignof({theirs}), \"{MARK}{bare}: the alignment is not CANN's\");"
        );
        for f in &st.fields {
            checked += 1;
            let _ = writeln!(
                s,
                "static_assert(offsetof({ours}, {f}) == offsetof({theirs}, {f}), \"{MARK}{bare}.{f}: the offset is not CANN's\");"
            );
        }
    }
    (s, checked, absent)
}

/// Compiles the unit for the header at `header` against `real`; one line per mismatch.
pub fn check(header: &Path, real: &RealHeaders) -> Result<Outcome, CheckError> {
    let text = std::fs::read_to_string(header)?;
    let decls = super::header::parse(&text);
    let cxx = compiler();
    let dir = tempfile::tempdir()?;
    let present = declared_words(&cxx, real, dir.path())?;
    let (unit, checked, absent) = unit_text(&decls, header, real, &present);
    let file = dir.path().join("conformance.cpp");
    std::fs::write(&file, unit)?;
    let out = run(&cxx, real, &["-fsyntax-only"], &file)?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    let mut mismatches = Vec::new();
    let mut other = Vec::new();
    for line in stderr.lines() {
        // The compiler quotes the failing source line too; only its diagnostic line counts.
        if let Some(i) = line.find(MARK).filter(|_| line.contains("error")) {
            let m = line[i + MARK.len()..]
                .trim_end_matches(['"', '\''])
                .trim()
                .to_owned();
            if !mismatches.contains(&m) {
                mismatches.push(m);
            }
        } else if line.contains("error:") && !line.contains("static assertion failed") && !line.contains(MARK)
        {
            other.push(line.to_owned());
        }
    }
    if !other.is_empty() {
        return Err(CheckError::Compile(
            other.into_iter().take(3).collect::<Vec<_>>().join(" | "),
        ));
    }
    if !out.status.success() && mismatches.is_empty() {
        return Err(CheckError::Compile(first_errors(&stderr)));
    }
    Ok(Outcome {
        mismatches,
        absent,
        checked,
    })
}
