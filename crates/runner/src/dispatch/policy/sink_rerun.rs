//! DESIGN section 5 step 5, "fresh-process retry": which of a dead lane's cases its poison sink
//! sends to a fresh lane, and which go back to the queue.
//!
//! This file owns the mapping from the sink's selectors (already read, deduplicated in order and
//! deleted by [`crate::sink::Sink::take`]) to cases, as a pure function. It never reads the file
//! and never starts the fresh lane (the event loop does both).

use crate::select::Selector;

/// One case the lane had been given and not finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outstanding<'a> {
    /// Its index in the run.
    pub index: usize,
    /// Its class.
    pub class: &'a str,
    /// Its name after `Class::`.
    pub name: &'a str,
}

/// What the sink sends where.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SinkRerun {
    /// Cases for the fresh lane on the same card, in sink order, each once.
    pub fresh: Vec<usize>,
    /// The lane's other unfinished cases, for the queue, in their order.
    pub requeue: Vec<usize>,
    /// Selectors that did not parse (ignored, with a warning).
    pub bad: Vec<String>,
}

/// Splits the lane's unfinished cases between a fresh lane (the ones the sink names) and the
/// queue (the rest). Only cases the lane still had are re-run: a selector naming a case that
/// finished, or that was never this lane's, re-runs nothing.
pub fn rerun_from_sink(selectors: &[String], outstanding: &[Outstanding<'_>]) -> SinkRerun {
    let mut out = SinkRerun::default();
    for s in selectors {
        match s.parse::<Selector>() {
            Ok(sel) => {
                for c in outstanding {
                    if sel.matches(c.class, c.name) && !out.fresh.contains(&c.index) {
                        out.fresh.push(c.index);
                    }
                }
            }
            Err(e) => out.bad.push(format!("{s:?}: {e}")),
        }
    }
    out.requeue = outstanding
        .iter()
        .map(|c| c.index)
        .filter(|i| !out.fresh.contains(i))
        .collect();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lane() -> Vec<Outstanding<'static>> {
        [(0, "A", "x"), (1, "A", "y"), (2, "B", "z")]
            .into_iter()
            .map(|(index, class, name)| Outstanding { index, class, name })
            .collect()
    }

    /// Every row of step 5's sink reading.
    #[test]
    fn sink_table() {
        type Row = (
            &'static str,
            &'static [&'static str],
            &'static [usize],
            &'static [usize],
            usize,
        );
        #[rustfmt::skip]
        let rows: &[Row] = &[
            // what,                                     selectors,             fresh,     requeued,  bad
            ("no sink records: everything requeued",     &[],                   &[],       &[0, 1, 2], 0),
            ("a whole class not yet started",            &["A::"],              &[0, 1],   &[2],      0),
            ("single cases of a started class",          &["A::y", "B::z"],     &[1, 2],   &[0],      0),
            ("duplicates re-run once, in sink order",    &["B::z", "A::", "B::"], &[2, 0, 1], &[],   0),
            ("a case the lane no longer has",            &["C::w"],             &[],       &[0, 1, 2], 0),
            ("a malformed selector is skipped",          &["::", "A::x"],       &[0],      &[1, 2],   1),
        ];
        for &(what, selectors, fresh, requeue, bad) in rows {
            let sel: Vec<String> = selectors.iter().map(|s| (*s).to_owned()).collect();
            let r = rerun_from_sink(&sel, &lane());
            assert_eq!(r.fresh, fresh, "{what}");
            assert_eq!(r.requeue, requeue, "{what}");
            assert_eq!(r.bad.len(), bad, "{what}: {:?}", r.bad);
        }
    }
}
