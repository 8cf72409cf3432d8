//! The run's order glue between the app and the duration history: where the history file is,
//! the estimates `--order smart` plans from, and the run added to the history at its end.
//!
//! This file never plans (`dispatch::policy::planner` does) and never parses the history's
//! format (`history` does).

use std::path::{Path, PathBuf};

use crate::case::Suite;
use crate::cli::{self, error_chain, Cli};
use crate::dispatch;
use crate::history::{self, History};
use crate::output;
use crate::partition::{Partition, PartitionBy};
use crate::report::{Event, RunReport};
use crate::select::Selection;

/// The duration history of this suite and arch: `--history`, else in the report root (the
/// directory of the arches' run dirs, which hold nothing else) for the default report dir, or
/// beside an explicit `--report-dir`.
pub fn history_path(report_dir: Option<&Path>, cli: &Cli, default_root: PathBuf) -> PathBuf {
    if let Some(p) = &cli.history {
        return p.clone();
    }
    let dir = match report_dir {
        Some(d) => d
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf),
        None => default_root,
    };
    history::path_in(&dir, cli.suite.name(), cli.arch.name())
}

/// The estimates `--order` plans from: `smart` (the default when the history holds durations)
/// estimates every selected case (an explicit `smart` without a history plans by case count);
/// `suite`, or no history and no `--order`: none (suite order).
pub fn estimates(
    order: Option<cli::OrderArg>,
    history: Option<&History>,
    suite: &Suite,
    selection: &Selection,
) -> Option<dispatch::Estimates> {
    let usable = history.filter(|h| h.has_durations());
    let smart = match order {
        Some(cli::OrderArg::Smart) => true,
        Some(cli::OrderArg::Suite) => false,
        None => usable.is_some(),
    };
    if !smart {
        return None;
    }
    if usable.is_none() {
        output::err(format_args!(
            "note: --order smart without a duration history: planned by case count and runtime"
        ));
    }
    let empty = History::default();
    let h = usable.unwrap_or(&empty);
    let ids: Vec<(String, &str)> = selection
        .classes
        .iter()
        .flat_map(|sc| {
            let class = &suite.classes[sc.class];
            sc.cases
                .iter()
                .map(move |&ci| (class.case_id(&class.cases[ci]), class.name.as_str()))
        })
        .collect();
    let case_ms = h.estimates(ids.iter().map(|(id, class)| (id.as_str(), *class)));
    let init_ms = suite
        .classes
        .iter()
        .map(|c| c.runtime.name.clone())
        .filter(|r| h.inits.contains_key(r))
        .map(|r| {
            let ms = h.init_estimate(&r);
            (r, ms)
        })
        .collect();
    Some(dispatch::Estimates { case_ms, init_ms })
}

/// Adds the run to the duration history and writes it (a failure is a warning: the run's
/// verdicts stand). The init times come from the journal's `worker` lines.
pub fn record_history(history: Option<History>, path: &Path, report: &RunReport, report_dir: &Path) {
    let mut h = history.unwrap_or_default();
    let journal = report_dir.join(crate::report::JOURNAL_JSONL);
    let inits = std::fs::read_to_string(&journal)
        .map(|text| {
            text.lines()
                // Only the lines that can hold an init time are parsed.
                .filter(|l| l.contains("\"init_ms\""))
                .filter_map(|l| serde_json::from_str::<Event>(l).ok())
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    h.record(&report.cases, &inits);
    if let Err(e) = h.write(path) {
        output::err(format_args!("warning: {}", error_chain(&e)));
    }
}

/// The partition a run applies: `duration:K/N` needs a history with durations; without one it is
/// `hash:K/N`, said on stderr.
pub fn effective_partition(
    partition: Option<Partition>,
    history: Option<&History>,
    path: &Path,
) -> Option<Partition> {
    let p = partition?;
    if p.by == PartitionBy::Duration && !history.is_some_and(History::has_durations) {
        output::err(format_args!(
            "note: --partition {p} without a duration history ({}): shares by hash:{}/{}",
            path.display(),
            p.k,
            p.n
        ));
        return Some(Partition::hash(p.k, p.n));
    }
    Some(p)
}

/// Cuts a `duration:K/N` share from `selection` (every class of the run): the classes estimated
/// as the planner estimates them (case history, else class median, else suite median), shared
/// by [`crate::partition::duration_shares`]. Any other partition leaves it as it is.
pub fn cut_duration_share(
    partition: Option<Partition>,
    history: Option<&History>,
    suite: &Suite,
    selection: Selection,
) -> Selection {
    let (Some(p), Some(h)) = (partition, history) else {
        return selection;
    };
    if p.by != PartitionBy::Duration {
        return selection;
    }
    let per_class: Vec<(&str, u64)> = selection
        .classes
        .iter()
        .map(|sc| {
            let class = &suite.classes[sc.class];
            let ids: Vec<String> = sc
                .cases
                .iter()
                .map(|&ci| class.case_id(&class.cases[ci]))
                .collect();
            let ms = h
                .estimates(ids.iter().map(|id| (id.as_str(), class.name.as_str())))
                .iter()
                .sum();
            (class.name.as_str(), ms)
        })
        .collect();
    let shares = crate::partition::duration_shares(&per_class, p.n);
    let classes = selection
        .classes
        .iter()
        .zip(shares)
        .filter(|(_, s)| *s == p.k - 1)
        .map(|(sc, _)| sc.clone())
        .collect();
    Selection { classes }
}
