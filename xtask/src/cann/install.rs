//! Finding CANN's installed headers: one file per declaration cardguard needs (an anchor), and
//! the include directories those files' own includes need. It reads files and nothing else.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use super::unit::RealHeaders;

/// A declaration the installed headers must hold, and the file name preferred where several do.
struct Anchor {
    what: &'static str,
    needle: &'static str,
    prefer: &'static str,
}

const ANCHORS: &[Anchor] = &[
    Anchor {
        what: "the ACL runtime API (aclrtSetDevice)",
        needle: "aclrtSetDevice(",
        prefer: "acl_rt.h",
    },
    Anchor {
        what: "rtKernelLaunchWithHandleV2",
        needle: "rtKernelLaunchWithHandleV2(",
        prefer: "kernel.h",
    },
    Anchor {
        what: "rtAicpuKernelLaunchExWithArgs and rtArgsEx_t",
        needle: "rtAicpuKernelLaunchExWithArgs(",
        prefer: "rt_external_kernel.h",
    },
    Anchor {
        what: "the HAL API (halResMap)",
        needle: "halResMap(",
        prefer: "ascend_hal.h",
    },
    Anchor {
        what: "struct res_map_info",
        needle: "struct res_map_info {",
        prefer: "dpa_pkg.h",
    },
];

fn headers_under(root: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        match e.file_type() {
            Ok(t) if t.is_dir() => headers_under(&p, out),
            Ok(t) if t.is_file() && p.extension().is_some_and(|x| x == "h") => out.push(p),
            _ => {}
        }
    }
}

/// The installed headers under `roots`: one file per anchor (the preferred name first, then the
/// shortest path), the include directories their own includes need (each file's directory and
/// its two parents), and the anchors no file holds.
pub fn discover(roots: &[PathBuf]) -> (RealHeaders, Vec<&'static str>) {
    let mut files = Vec::new();
    for r in roots {
        headers_under(r, &mut files);
    }
    files.sort();
    let texts: Vec<(PathBuf, String)> = files
        .into_iter()
        .filter_map(|p| std::fs::read_to_string(&p).ok().map(|t| (p, t)))
        .collect();
    let mut includes: Vec<PathBuf> = Vec::new();
    let mut missing = Vec::new();
    for a in ANCHORS {
        let mut hits: Vec<&PathBuf> = texts
            .iter()
            .filter(|(_, t)| t.contains(a.needle))
            .map(|(p, _)| p)
            .collect();
        hits.sort_by_key(|p| (p.file_name() != Some(OsStr::new(a.prefer)), p.as_os_str().len()));
        match hits.first() {
            Some(p) if includes.contains(p) => {}
            Some(p) => includes.push((*p).clone()),
            None => missing.push(a.what),
        }
    }
    let mut dirs: Vec<PathBuf> = Vec::new();
    for f in &includes {
        for d in f.ancestors().skip(1).take(3) {
            if !dirs.iter().any(|x| x == d) {
                dirs.push(d.to_owned());
            }
        }
    }
    (
        RealHeaders {
            include_dirs: dirs,
            includes: includes.iter().map(|p| p.display().to_string()).collect(),
        },
        missing,
    )
}
