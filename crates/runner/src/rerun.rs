//! `--rerun-failed DIR|latest` (issue 9, item 5): select exactly the cases that did not pass in an
//! earlier run: those whose verdict was `failed`, `timed_out`, `crashed` or `flaky` in the
//! `report.json` of DIR (a report dir, or the report file itself), or with `latest` in the newest
//! run of the arch under the default report dir (`target/onboard/<arch>/`: the run whose
//! `report.json` was written last). Every other selector (`--case`, `--runtime`, `--partition`,
//! the arch filter) filters further. A case of that report that the suite no longer has is a
//! warning; a report of another arch, or no report where one is named, is an error naming both
//! arches, or the path.
//!
//! This file owns finding the report and turning it into a set of case ids, and that set's cut
//! of a [`Selection`]. It never runs anything and never writes a report.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use platform_common::Arch;

use crate::case::Suite;
use crate::report::model::Outcome;
use crate::report::{read_report, ReportError, REPORT_JSON};
use crate::select::Selection;

/// The value of `--rerun-failed` that picks the newest run.
pub const LATEST: &str = "latest";

/// Where the cases to re-run come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RerunFrom {
    /// The report in this dir (or this report file).
    Dir(PathBuf),
    /// The newest run of the arch under the default report dir.
    Latest,
}

impl RerunFrom {
    /// The flag's value: `latest`, else a path (`./latest` names a dir called so).
    pub fn from_arg(value: &Path) -> Self {
        if value.as_os_str() == LATEST {
            RerunFrom::Latest
        } else {
            RerunFrom::Dir(value.to_owned())
        }
    }
}

/// Why the cases to re-run cannot be known.
#[derive(Debug, thiserror::Error)]
pub enum RerunError {
    /// DIR holds no report.
    #[error("--rerun-failed {}: no {REPORT_JSON} there", dir.display())]
    NoReport {
        /// The dir named.
        dir: PathBuf,
    },
    /// `latest` found no run of the arch.
    #[error(
        "--rerun-failed latest: no run of {arch} under {} (a run writes its report there unless \
         --report-dir says otherwise; name that dir instead)",
        root.display()
    )]
    NoLatest {
        /// The arch.
        arch: Arch,
        /// Where the runs were looked for.
        root: PathBuf,
    },
    /// The report cannot be read.
    #[error("--rerun-failed: cannot read {}: {source}", path.display())]
    Read {
        /// The report file.
        path: PathBuf,
        /// Why.
        #[source]
        source: Box<ReportError>,
    },
    /// The report is of another arch than this run.
    #[error("--rerun-failed: {} is a run of arch {report}, this run is of arch {run}", path.display())]
    OtherArch {
        /// The report file.
        path: PathBuf,
        /// Its arch.
        report: Arch,
        /// This run's arch.
        run: Arch,
    },
}

/// The cases an earlier run did not pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RerunSet {
    /// The report they were read from.
    pub report: PathBuf,
    /// That run's id.
    pub run_id: String,
    /// Their ids (`Class::case`).
    pub ids: BTreeSet<String>,
}

/// The verdicts a re-run takes again.
pub const RERUN_OUTCOMES: [Outcome; 4] = [
    Outcome::Failed,
    Outcome::TimedOut,
    Outcome::Crashed,
    Outcome::Flaky,
];

/// Reads the cases to re-run for a run of `arch`; `latest` looks under `runs` (the arch's default
/// report dir, `target/onboard/<arch>`).
pub fn failed_cases(from: &RerunFrom, arch: Arch, runs: &Path) -> Result<RerunSet, RerunError> {
    let path = match from {
        RerunFrom::Dir(d) if d.is_file() => d.clone(),
        RerunFrom::Dir(d) => {
            let p = d.join(REPORT_JSON);
            if !p.is_file() {
                return Err(RerunError::NoReport { dir: d.clone() });
            }
            p
        }
        RerunFrom::Latest => newest(runs).ok_or_else(|| RerunError::NoLatest {
            arch,
            root: runs.to_owned(),
        })?,
    };
    let report = read_report(&path).map_err(|source| RerunError::Read {
        path: path.clone(),
        source: Box::new(source),
    })?;
    if report.arch != arch {
        return Err(RerunError::OtherArch {
            path,
            report: report.arch,
            run: arch,
        });
    }
    let ids = report
        .cases
        .iter()
        .filter(|c| RERUN_OUTCOMES.contains(&c.outcome))
        .map(|c| c.id.clone())
        .collect();
    Ok(RerunSet {
        report: path,
        run_id: report.run_id,
        ids,
    })
}

/// The `report.json` written last among the dirs of `runs` (ties: the greater dir name, a run id
/// beginning with its date and time).
fn newest(runs: &Path) -> Option<PathBuf> {
    let entries = std::fs::read_dir(runs).ok()?;
    entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let report = e.path().join(REPORT_JSON);
            let meta = std::fs::metadata(&report).ok()?;
            let written = meta.modified().ok()?;
            meta.is_file().then(|| (written, e.file_name(), report))
        })
        .max_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)))
        .map(|(_, _, report)| report)
}

/// `selection` cut down to the cases of `set`; also the ids of `set` the suite no longer has at
/// all (for a warning; those it has but the other filters leave out are simply not selected).
pub fn restrict(suite: &Suite, selection: &Selection, set: &RerunSet) -> (Selection, Vec<String>) {
    let mut out = selection.clone();
    for sc in &mut out.classes {
        let class = &suite.classes[sc.class];
        sc.cases
            .retain(|&i| set.ids.contains(&class.case_id(&class.cases[i])));
    }
    out.classes.retain(|sc| !sc.cases.is_empty());
    let gone = set
        .ids
        .iter()
        .filter(|id| suite.find_case(id).is_none())
        .cloned()
        .collect();
    (out, gone)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::{CaseSpec, ClassSpec, Runtime};
    use crate::select::{select, Filter};

    fn suite() -> Suite {
        let rt = Runtime::new("r");
        Suite::new()
            .class(ClassSpec::pooled("A", rt.clone()).cases([CaseSpec::trivial("x"), CaseSpec::trivial("y")]))
            .class(ClassSpec::pooled("B", rt).case(CaseSpec::trivial("z")))
    }

    fn set(ids: &[&str]) -> RerunSet {
        RerunSet {
            report: PathBuf::from("r/report.json"),
            run_id: "r".into(),
            ids: ids.iter().map(|s| (*s).to_owned()).collect(),
        }
    }

    #[test]
    fn a_rerun_keeps_exactly_the_named_cases_the_other_filters_select() {
        let s = suite();
        let all = select(&s, Arch::A5, &Filter::default()).unwrap();
        let (sel, gone) = restrict(&s, &all, &set(&["A::y", "B::z", "Old::case"]));
        assert_eq!(sel.ids(&s), ["A::y", "B::z"]);
        assert_eq!(gone, ["Old::case"]);
        let only_b = select(
            &s,
            Arch::A5,
            &Filter {
                selectors: vec!["B".parse().unwrap()],
                ..Filter::default()
            },
        )
        .unwrap();
        let (sel, gone) = restrict(&s, &only_b, &set(&["A::y", "B::z"]));
        assert_eq!(sel.ids(&s), ["B::z"]);
        assert!(gone.is_empty(), "excluded by a filter is not gone");
        let (sel, _) = restrict(&s, &all, &set(&[]));
        assert!(sel.is_empty());
    }

    #[test]
    fn latest_and_dir_name_the_report_or_say_what_is_missing() {
        let tmp = tempfile::tempdir().unwrap();
        assert_eq!(RerunFrom::from_arg(Path::new("latest")), RerunFrom::Latest);
        assert_eq!(
            RerunFrom::from_arg(Path::new("./latest")),
            RerunFrom::Dir("./latest".into())
        );
        let e = failed_cases(&RerunFrom::Latest, Arch::A5, tmp.path()).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("--rerun-failed latest: no run of a5 under "),
            "{e}"
        );
        let e = failed_cases(&RerunFrom::Dir(tmp.path().to_owned()), Arch::A5, tmp.path()).unwrap_err();
        assert!(e.to_string().ends_with("no report.json there"), "{e}");
        std::fs::create_dir(tmp.path().join("1")).unwrap();
        std::fs::create_dir(tmp.path().join("2")).unwrap();
        std::fs::create_dir(tmp.path().join("3")).unwrap();
        let t0 = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_800_000_000);
        for (dir, secs) in [("1", 20), ("2", 10)] {
            let f = std::fs::File::create(tmp.path().join(dir).join("report.json")).unwrap();
            std::io::Write::write_all(&mut &f, b"{}").unwrap();
            f.set_modified(t0 + std::time::Duration::from_secs(secs)).unwrap();
        }
        // Written last, whatever the names say; a dir without a report does not count.
        assert!(newest(tmp.path()).unwrap().ends_with("1/report.json"));
        let e = failed_cases(&RerunFrom::Latest, Arch::A5, tmp.path()).unwrap_err();
        assert!(matches!(e, RerunError::Read { .. }), "{e}");
    }
}
