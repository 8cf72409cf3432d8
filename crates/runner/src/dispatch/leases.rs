//! Taking the run's cards: every lease first, held for the whole run.
//!
//! This file owns `--devices LIST|auto` and `--device-num N`: named cards must all be free (a taken
//! one is a usage error naming its holder); `auto` takes the first N free cards, or without
//! `--device-num` on real cards every free card (an error naming the holders only when none is
//! free). A range is checked before it is expanded, so a huge one is a usage error, never an
//! allocation. It never starts a lane.

use std::fmt;
use std::str::FromStr;

use platform_common::lease::{LeaseConfig, LeaseError};
use platform_common::{DeviceId, DeviceLease};

/// `--devices`: a list of cards or `auto`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeviceSpec {
    /// Take free cards.
    Auto,
    /// Exactly these cards, in this order.
    List(Vec<DeviceId>),
}

/// The widest range a `--devices` list may name (no host has more cards); checked before the
/// range is expanded.
pub const MAX_RANGE_CARDS: u32 = 1024;

/// A `--devices` value that cannot be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad device list {0:?}: {1} (expected auto, 0-3 or 0,2,5)")]
pub struct BadDeviceList(pub String, pub &'static str);

impl FromStr for DeviceSpec {
    type Err = BadDeviceList;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = |why| BadDeviceList(s.to_owned(), why);
        if s.trim() == "auto" {
            return Ok(DeviceSpec::Auto);
        }
        let mut out: Vec<DeviceId> = Vec::new();
        for part in s.split(',') {
            let part = part.trim();
            if part.is_empty() {
                return Err(bad("empty entry"));
            }
            let num = |t: &str| platform_common::number::whole_u32(t).ok_or_else(|| bad("not a card number"));
            match part.split_once('-') {
                Some((a, b)) => {
                    let (a, b) = (num(a)?, num(b)?);
                    if a > b {
                        return Err(bad("a range must go up"));
                    }
                    if b - a >= MAX_RANGE_CARDS || out.len() + ((b - a) as usize) >= MAX_RANGE_CARDS as usize
                    {
                        return Err(bad("names more than 1024 cards"));
                    }
                    out.extend(a..=b);
                }
                None => out.push(num(part)?),
            }
        }
        let mut seen = std::collections::HashSet::new();
        if !out.iter().all(|d| seen.insert(*d)) {
            return Err(bad("a card is named twice"));
        }
        Ok(DeviceSpec::List(out))
    }
}

impl fmt::Display for DeviceSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceSpec::Auto => f.write_str("auto"),
            DeviceSpec::List(l) => {
                let s: Vec<String> = l.iter().map(ToString::to_string).collect();
                f.write_str(&s.join(","))
            }
        }
    }
}

/// The run's cards could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum TakeError {
    /// A card number the platform does not have.
    #[error("--devices: card {card} is out of range (this platform has cards 0 to {})", cards.saturating_sub(1))]
    OutOfRange {
        /// The card.
        card: DeviceId,
        /// Cards of the platform.
        cards: u32,
    },
    /// A named card is held by someone else.
    #[error("--devices: {0}")]
    Held(#[source] LeaseError),
    /// `--devices auto` on real cards without `--device-num`: not one card is free.
    #[error("--devices auto: none of the {cards} cards is free ({holders})")]
    NoneFree {
        /// Cards of the platform.
        cards: u32,
        /// Who holds them, card by card.
        holders: String,
    },
    /// Not enough free cards for `auto`.
    #[error("--devices auto: only {free} of the {cards} cards are free, --device-num asks for {want}")]
    NotEnough {
        /// Free cards found.
        free: usize,
        /// Cards asked for.
        want: u32,
        /// Cards of the platform.
        cards: u32,
    },
    /// The lock directory cannot be used.
    #[error("cannot take a card lease: {0}")]
    Io(#[source] LeaseError),
    /// `--device-num` without `auto`, or zero.
    #[error("--device-num {0}: {1}")]
    DeviceNum(u32, &'static str),
}

/// How many cards `--devices auto` takes without `--device-num`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AutoCount {
    /// Exactly this many (simulated cards: 2).
    Exactly(u32),
    /// Every free card, at least one (real cards).
    AllFree,
}

/// Takes the cards of `spec` (with `auto`, `want` of them, else as `default` says).
pub fn take(
    cfg: &LeaseConfig,
    spec: &DeviceSpec,
    want: Option<u32>,
    default: AutoCount,
    cards: u32,
    run_id: &str,
) -> Result<Vec<DeviceLease>, TakeError> {
    match spec {
        DeviceSpec::List(list) => {
            if let Some(n) = want {
                if usize::try_from(n).ok() != Some(list.len()) {
                    return Err(TakeError::DeviceNum(
                        n,
                        "only goes with --devices auto (or matches the list)",
                    ));
                }
            }
            if let Some(&card) = list.iter().find(|c| **c >= cards) {
                return Err(TakeError::OutOfRange { card, cards });
            }
            let mut leases = Vec::new();
            for &card in list {
                match DeviceLease::try_acquire(cfg, card, run_id) {
                    Ok(l) => leases.push(l),
                    Err(e @ LeaseError::Held { .. }) => return Err(TakeError::Held(e)),
                    Err(e) => return Err(TakeError::Io(e)),
                }
            }
            Ok(leases)
        }
        DeviceSpec::Auto => {
            let want = match (want, default) {
                (Some(n), _) | (None, AutoCount::Exactly(n)) => n,
                (None, AutoCount::AllFree) => return take_all_free(cfg, cards, run_id),
            };
            if want == 0 {
                return Err(TakeError::DeviceNum(0, "must be at least 1"));
            }
            let mut leases = Vec::new();
            for card in 0..cards {
                if leases.len() == want as usize {
                    break;
                }
                match DeviceLease::try_acquire(cfg, card, run_id) {
                    Ok(l) => leases.push(l),
                    Err(LeaseError::Held { holder, .. }) => {
                        tracing::debug!(card, %holder, "card taken; trying the next");
                    }
                    Err(e) => return Err(TakeError::Io(e)),
                }
            }
            if leases.len() < want as usize {
                return Err(TakeError::NotEnough {
                    free: leases.len(),
                    want,
                    cards,
                });
            }
            Ok(leases)
        }
    }
}

/// Every free card of `0..cards`; an error naming the holders when none is.
fn take_all_free(cfg: &LeaseConfig, cards: u32, run_id: &str) -> Result<Vec<DeviceLease>, TakeError> {
    let mut leases = Vec::new();
    let mut holders = Vec::new();
    for card in 0..cards {
        match DeviceLease::try_acquire(cfg, card, run_id) {
            Ok(l) => leases.push(l),
            Err(LeaseError::Held { holder, .. }) => {
                tracing::debug!(card, %holder, "card taken; trying the next");
                holders.push(format!("card {card} is held by {holder}"));
            }
            Err(e) => return Err(TakeError::Io(e)),
        }
    }
    if leases.is_empty() {
        return Err(TakeError::NoneFree {
            cards,
            holders: holders.join("; "),
        });
    }
    Ok(leases)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_lists_parse() {
        assert_eq!("auto".parse::<DeviceSpec>().unwrap(), DeviceSpec::Auto);
        assert_eq!(
            "0-3".parse::<DeviceSpec>().unwrap(),
            DeviceSpec::List(vec![0, 1, 2, 3])
        );
        assert_eq!(
            "0,2,5".parse::<DeviceSpec>().unwrap(),
            DeviceSpec::List(vec![0, 2, 5])
        );
        assert_eq!(
            "1-2,4".parse::<DeviceSpec>().unwrap(),
            DeviceSpec::List(vec![1, 2, 4])
        );
        for bad in [
            "",
            "x",
            "3-1",
            "1,,2",
            "1,1",
            "-1",
            "+1",
            "0-+2",
            "1-",
            "0-4000000000",
            "0-1024",
            "0-600,601-1100",
        ] {
            let e = bad.parse::<DeviceSpec>().unwrap_err();
            assert!(e.to_string().contains(&format!("{bad:?}")), "{e}");
        }
    }

    #[test]
    fn named_cards_must_be_free_and_in_range() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = LeaseConfig {
            dir: dir.path().to_owned(),
        };
        let _held = DeviceLease::try_acquire(&cfg, 1, "other-run").unwrap();
        let e = take(
            &cfg,
            &"0-1".parse().unwrap(),
            None,
            AutoCount::Exactly(2),
            8,
            "me",
        )
        .unwrap_err();
        assert!(e.to_string().contains("held by"), "{e}");
        assert!(e.to_string().contains("other-run"), "{e}");
        let e = take(&cfg, &"9".parse().unwrap(), None, AutoCount::Exactly(2), 8, "me").unwrap_err();
        assert!(matches!(e, TakeError::OutOfRange { card: 9, .. }), "{e}");
        let got = take(&cfg, &DeviceSpec::Auto, Some(2), AutoCount::Exactly(2), 8, "me").unwrap();
        assert_eq!(got.iter().map(DeviceLease::card).collect::<Vec<_>>(), [0, 2]);
        let e = take(&cfg, &DeviceSpec::Auto, Some(7), AutoCount::Exactly(2), 8, "me2").unwrap_err();
        assert!(matches!(e, TakeError::NotEnough { free: 5, want: 7, .. }), "{e}");
    }

    #[test]
    fn a_range_is_capped_before_it_is_expanded() {
        assert_eq!(
            "0-1023".parse::<DeviceSpec>().unwrap(),
            DeviceSpec::List((0..1024).collect())
        );
        let e = "0-4000000000".parse::<DeviceSpec>().unwrap_err();
        assert!(e.to_string().contains("more than 1024 cards"), "{e}");
    }

    #[test]
    fn auto_on_real_cards_takes_every_free_card_and_fails_only_when_none_is() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = LeaseConfig {
            dir: dir.path().to_owned(),
        };
        let held1 = DeviceLease::try_acquire(&cfg, 1, "run-a").unwrap();
        let held3 = DeviceLease::try_acquire(&cfg, 3, "run-b").unwrap();
        let got = take(&cfg, &DeviceSpec::Auto, None, AutoCount::AllFree, 5, "me").unwrap();
        assert_eq!(got.iter().map(DeviceLease::card).collect::<Vec<_>>(), [0, 2, 4]);
        // --device-num still asks for an exact count.
        let e = take(&cfg, &DeviceSpec::Auto, Some(4), AutoCount::AllFree, 5, "me2").unwrap_err();
        assert!(matches!(e, TakeError::NotEnough { free: 0, want: 4, .. }), "{e}");
        drop(got);
        let others: Vec<_> = [0, 2, 4]
            .into_iter()
            .map(|c| DeviceLease::try_acquire(&cfg, c, "run-c").unwrap())
            .collect();
        let e = take(&cfg, &DeviceSpec::Auto, None, AutoCount::AllFree, 5, "me3").unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, TakeError::NoneFree { cards: 5, .. }), "{msg}");
        assert!(!msg.contains('\n'), "{msg}");
        for holder in ["run-a", "run-b", "run-c", "card 4"] {
            assert!(msg.contains(holder), "names {holder}: {msg}");
        }
        drop((held1, held3, others));
    }
}
