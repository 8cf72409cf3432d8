//! The skip decision (DESIGN section 3 "what counts"): a selected case that cannot run for a
//! stated reason. Three reasons exist: a skip condition of the case (or its class) holds for the
//! run, the case needs more cards than the run holds, or one of its kernels has no binary for the
//! run's platform.
//!
//! This file owns the rule as a pure function of those facts (the run evaluates a case's skip
//! conditions and asks the kernel registry first). It never records the skip (the run does,
//! before any lane starts) and legitimate skips never reach a lane or a poison sink.

/// What the skip rule needs to know about one selected case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SkipFacts<'a> {
    /// Cards it needs.
    pub needs: u32,
    /// Cards the run holds.
    pub run_cards: usize,
    /// The reason of its first skip condition that holds for the run, if one does.
    pub skip_if: Option<&'a str>,
    /// Why a kernel of it has no binary for the platform, if one has none.
    pub missing_kernel: Option<&'a str>,
}

/// Why the case is skipped, if it is: its own skip condition first (its author's words), then
/// the cards it needs, then a missing kernel binary.
pub fn skip_reason(f: &SkipFacts<'_>) -> Option<String> {
    if let Some(why) = f.skip_if {
        return Some(why.to_owned());
    }
    if f.needs as usize > f.run_cards {
        return Some(format!("needs {} cards, the run has {}", f.needs, f.run_cards));
    }
    f.missing_kernel.map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skip_table() {
        type Row = (
            u32,
            usize,
            Option<&'static str>,
            Option<&'static str>,
            Option<&'static str>,
        );
        #[rustfmt::skip]
        let rows: &[Row] = &[
            // needs, run cards, skip_if,        missing kernel,   skipped because
            (1, 1, None,                         None,             None),
            (2, 2, None,                         None,             None),
            (2, 4, None,                         None,             None),
            (2, 1, None,                         None,             Some("needs 2 cards, the run has 1")),
            (4, 2, None,                         None,             Some("needs 4 cards, the run has 2")),
            (1, 2, Some("no SDMA on a5"),        None,             Some("no SDMA on a5")),
            (4, 2, Some("no SDMA on a5"),        Some("no .o"),    Some("no SDMA on a5")),
            (1, 2, None,                         Some("no .o"),    Some("no .o")),
            (4, 2, None,                         Some("no .o"),    Some("needs 4 cards, the run has 2")),
        ];
        for &(needs, run_cards, skip_if, missing_kernel, want) in rows {
            let f = SkipFacts {
                needs,
                run_cards,
                skip_if,
                missing_kernel,
            };
            assert_eq!(skip_reason(&f).as_deref(), want, "{f:?}");
        }
    }
}
