//! The skip decision (DESIGN section 3 "what counts"): a selected case that cannot run for a
//! stated reason. Today one reason exists: the case needs more cards than the run holds.
//!
//! This file owns the rule as a pure function. It never records the skip (the run does, before
//! any lane starts) and legitimate skips never reach a lane or a poison sink.

/// Why a case that needs `needs` cards is skipped in a run of `run_cards`, if it is.
pub fn skip_reason(needs: u32, run_cards: usize) -> Option<String> {
    (needs as usize > run_cards).then(|| format!("needs {needs} cards, the run has {run_cards}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skip_table() {
        #[rustfmt::skip]
        let rows: &[(u32, usize, Option<&str>)] = &[
            // needs, run cards, skipped because
            (1, 1, None),
            (2, 2, None),
            (2, 4, None),
            (2, 1, Some("needs 2 cards, the run has 1")),
            (4, 2, Some("needs 4 cards, the run has 2")),
        ];
        for &(needs, cards, want) in rows {
            assert_eq!(skip_reason(needs, cards).as_deref(), want, "{needs} of {cards}");
        }
    }
}
