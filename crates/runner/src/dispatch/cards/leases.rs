//! Taking the run's cards: every lease first, held for the whole run.
//!
//! This file owns taking what `--devices LIST|auto` and `--device-num N` name (the list's value
//! and parser are `crate::settings`'s, re-exported here): named cards must all be free (a taken
//! one is a usage error naming its holder); `auto` takes the first N free cards, or without
//! `--device-num` on real cards every free card (an error naming the holders only when none is
//! free). A range is checked before it is expanded, so a huge one is a usage error, never an
//! allocation (the parser's rule). One try ([`try_take`]) never takes a free card that a run waiting longer wants
//! (the host-wide queue of `--wait-for-cards`, read by `card_wait`), and keeps what it took, so a
//! waiting run takes each card as it frees. It never waits and never starts a lane.

use platform_common::lease::{LeaseConfig, LeaseError, Waiter, Wanted};
use platform_common::visible::VisibleDevices;
use platform_common::{DeviceId, DeviceLease};

pub use crate::settings::{BadDeviceList, DeviceSpec, MAX_RANGE_CARDS};

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
    /// A named card is beyond the process's visible-device map.
    #[error(
        "--devices: card {card} is not visible under {}: the map lets this process see {visible} card(s)",
        platform_common::visible::ENV_VISIBLE_DEVICES
    )]
    NotVisible {
        /// The card (logical id).
        card: DeviceId,
        /// Cards the map makes visible.
        visible: u32,
    },
    /// A named card is held by someone else (the lease error in the message, with the flag that
    /// waits for it: not a `source`, so the chain does not repeat it).
    #[error("--devices: {0}; --wait-for-cards SECS waits for it")]
    Held(LeaseError),
    /// A named card is wanted by a run that has waited longer (`--wait-for-cards`): it is that
    /// run's to take first.
    #[error(
        "--devices: card {card} is reserved for a run waiting longer for it: {waiter} \
         (--wait-for-cards SECS queues behind it)"
    )]
    Reserved {
        /// The card.
        card: DeviceId,
        /// The earliest waiter that wants it.
        waiter: Box<Waiter>,
    },
    /// `--devices auto` on real cards without `--device-num`: not one card is free.
    #[error(
        "--devices auto: none of the {cards} cards is free ({holders}); --wait-for-cards SECS waits for one"
    )]
    NoneFree {
        /// Cards of the platform.
        cards: u32,
        /// Who holds them (or waits for them longer), card by card.
        holders: String,
    },
    /// Not enough free cards for `auto`.
    #[error(
        "--devices auto: only {free} of the {cards} cards are free, --device-num asks for {want}{}; \
         --wait-for-cards SECS waits for them",
        reserved_note(*reserved)
    )]
    NotEnough {
        /// Free cards found (not counting those reserved for earlier waiters).
        free: usize,
        /// Cards asked for.
        want: u32,
        /// Cards of the platform.
        cards: u32,
        /// Cards left to runs that have waited longer.
        reserved: usize,
    },
    /// The lock directory cannot be used.
    #[error("cannot take a card lease: {0}")]
    Io(#[source] LeaseError),
    /// `--device-num` without `auto`, or zero, or more than the platform's cards.
    #[error("--device-num {0}: {1}")]
    DeviceNum(u32, String),
}

fn reserved_note(reserved: usize) -> String {
    match reserved {
        0 => String::new(),
        n => format!(" ({n} card(s) are reserved for runs waiting longer)"),
    }
}

/// How many cards `--devices auto` takes without `--device-num`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AutoCount {
    /// Exactly this many (simulated cards: 2).
    Exactly(u32),
    /// Every free card, at least one (real cards).
    AllFree,
}

/// What a run wants, checked against the platform before any lock is taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Want {
    /// Exactly these cards, in this order.
    List(Vec<DeviceId>),
    /// This many free cards, the lowest first.
    Count(u32),
    /// Every free card, at least one.
    AllFree,
}

impl Want {
    /// `--devices` and `--device-num` (with `auto`, `want` of them, else as `default` says),
    /// checked against the `cards` of the platform.
    pub fn of(
        spec: &DeviceSpec,
        want: Option<u32>,
        default: AutoCount,
        cards: u32,
    ) -> Result<Self, TakeError> {
        match spec {
            DeviceSpec::List(list) => {
                if let Some(n) = want {
                    if usize::try_from(n).ok() != Some(list.len()) {
                        return Err(TakeError::DeviceNum(
                            n,
                            "only goes with --devices auto (or matches the list)".to_owned(),
                        ));
                    }
                }
                if let Some(&card) = list.iter().find(|c| **c >= cards) {
                    return Err(TakeError::OutOfRange { card, cards });
                }
                Ok(Want::List(list.clone()))
            }
            DeviceSpec::Auto => match (want, default) {
                (Some(0), _) | (None, AutoCount::Exactly(0)) => {
                    Err(TakeError::DeviceNum(0, "must be at least 1".to_owned()))
                }
                (Some(n), _) | (None, AutoCount::Exactly(n)) if n > cards => Err(TakeError::DeviceNum(
                    n,
                    format!("this platform has only {cards} cards"),
                )),
                (Some(n), _) | (None, AutoCount::Exactly(n)) => Ok(Want::Count(n)),
                (None, AutoCount::AllFree) => Ok(Want::AllFree),
            },
        }
    }

    /// What this run waits for, in its own card numbers (for its messages).
    pub fn wanted(&self) -> Wanted {
        self.ticket(&VisibleDevices::identity())
    }

    /// The queue's form of it (what a ticket says this run waits for). The queue is host-wide,
    /// so a list is named by its physical ids under `visible` (a card the map does not show is
    /// left out: the run is refused for it before it ever waits).
    pub fn ticket(&self, visible: &VisibleDevices) -> Wanted {
        match self {
            Want::List(l) => Wanted::Cards(l.iter().filter_map(|&c| visible.physical(c)).collect()),
            Want::Count(n) => Wanted::Any(Some(*n)),
            Want::AllFree => Wanted::Any(None),
        }
    }
}

/// Why a wanted card was not taken in one try.
#[derive(Debug)]
pub enum Blocker {
    /// Another holder has it (the refusal names it).
    Held(LeaseError),
    /// An earlier waiter wants it (it is that waiter's to take first, free or not).
    Reserved(Box<Waiter>),
}

/// What one try took and what it still lacks.
#[derive(Debug, Default)]
pub struct Progress {
    /// Whether the run has every card it wants now.
    pub done: bool,
    /// The cards it could not take, and why (for `auto`: the cards tried, all of them).
    pub missing: Vec<(DeviceId, Blocker)>,
}

impl Progress {
    /// The awaited cards and their blockers, on one line (`card 0 is held by ...; card 1 is
    /// reserved for ...`).
    pub fn describe(&self) -> String {
        let parts: Vec<String> = self
            .missing
            .iter()
            .map(|(card, b)| match b {
                Blocker::Held(LeaseError::Held { holder, .. }) => format!("card {card} is held by {holder}"),
                Blocker::Held(e) => format!("card {card}: {e}"),
                Blocker::Reserved(w) => {
                    format!("card {card} is reserved for a run waiting longer: {}", w.record)
                }
            })
            .collect();
        parts.join("; ")
    }

    /// The error of a run that does not wait (or waited in vain): the first blocked named card,
    /// or for `auto` how many were free.
    pub fn into_error(self, want: &Want, held: usize, cards: u32) -> TakeError {
        match want {
            Want::List(_) => match self.missing.into_iter().next() {
                Some((_, Blocker::Held(e @ LeaseError::Held { .. }))) => TakeError::Held(e),
                Some((_, Blocker::Held(e))) => TakeError::Io(e),
                Some((card, Blocker::Reserved(waiter))) => TakeError::Reserved { card, waiter },
                None => TakeError::NotEnough {
                    free: held,
                    want: 0,
                    cards,
                    reserved: 0,
                },
            },
            Want::Count(n) => TakeError::NotEnough {
                free: held,
                want: *n,
                cards,
                reserved: self
                    .missing
                    .iter()
                    .filter(|(_, b)| matches!(b, Blocker::Reserved(_)))
                    .count(),
            },
            Want::AllFree => TakeError::NoneFree {
                cards,
                holders: self.describe(),
            },
        }
    }
}

/// One try at taking what `want` asks for: every card it can take goes into `held` (kept across
/// tries: a waiting run takes each card as it frees), never a card an earlier waiter of `ahead`
/// reserves. The lock dir's errors end the try.
pub fn try_take(
    cfg: &LeaseConfig,
    visible: &VisibleDevices,
    want: &Want,
    cards: u32,
    run_id: &str,
    held: &mut Vec<DeviceLease>,
    ahead: &[Waiter],
) -> Result<Progress, TakeError> {
    let mut progress = Progress::default();
    let candidates: Vec<DeviceId> = match want {
        Want::List(l) => l.clone(),
        Want::Count(_) | Want::AllFree => (0..cards).collect(),
    };
    for card in candidates {
        if held.iter().any(|l| l.card() == card) {
            continue;
        }
        if let Want::Count(n) = want {
            if held.len() >= *n as usize {
                break;
            }
        }
        // A card this process cannot see under its map is no card of the run's.
        let Some(physical) = visible.physical(card) else {
            if let Want::List(_) = want {
                return Err(TakeError::NotVisible {
                    card,
                    visible: visible.count().unwrap_or(0),
                });
            }
            continue;
        };
        // Waiters are host-wide: they reserve physical cards.
        if let Some(w) = ahead.iter().find(|w| w.reserves(physical)) {
            // Not even tried: a try would lock it for a moment under the waiter's nose.
            progress
                .missing
                .push((card, Blocker::Reserved(Box::new(w.clone()))));
            continue;
        }
        match DeviceLease::try_acquire_as(cfg, card, physical, run_id) {
            Ok(l) => held.push(l),
            Err(e @ LeaseError::Held { .. }) => {
                tracing::debug!(card, "{e}");
                progress.missing.push((card, Blocker::Held(e)));
            }
            Err(e) => return Err(TakeError::Io(e)),
        }
    }
    progress.done = match want {
        Want::List(l) => held.len() == l.len(),
        Want::Count(n) => held.len() == *n as usize,
        Want::AllFree => !held.is_empty(),
    };
    if progress.done {
        progress.missing.clear();
    }
    // The run's cards in the order asked for (a list's order; else by number).
    if let Want::List(l) = want {
        held.sort_by_key(|lease| l.iter().position(|c| *c == lease.card()));
    } else {
        held.sort_by_key(DeviceLease::card);
    }
    Ok(progress)
}

/// Takes the cards of `spec` at once, without waiting and without a queue to respect (with
/// `auto`, `want` of them, else as `default` says). `card_wait` is the run's way in: it
/// respects the runs that wait.
pub fn take(
    cfg: &LeaseConfig,
    spec: &DeviceSpec,
    want: Option<u32>,
    default: AutoCount,
    cards: u32,
    run_id: &str,
) -> Result<Vec<DeviceLease>, TakeError> {
    let want = Want::of(spec, want, default, cards)?;
    let mut held = Vec::new();
    let progress = try_take(
        cfg,
        &VisibleDevices::identity(),
        &want,
        cards,
        run_id,
        &mut held,
        &[],
    )?;
    if progress.done {
        Ok(held)
    } else {
        let n = held.len();
        drop(held);
        Err(progress.into_error(&want, n, cards))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// Item 5 of issue 18: two runs whose visible-device maps name the same physical card under
    /// different logical ids exclude each other; the lease says both ids.
    #[test]
    fn runs_with_different_visible_maps_exclude_each_other_on_the_physical_card() {
        let tmp = tempfile::tempdir().unwrap();
        let cfg = LeaseConfig {
            dir: tmp.path().join("locks"),
        };
        let first_map = VisibleDevices::parse("5,2").unwrap();
        let second_map = VisibleDevices::parse("2").unwrap();
        let list = |c: u32| Want::List(vec![c]);
        let mut first = Vec::new();
        let p = try_take(&cfg, &first_map, &list(1), 8, "run-a", &mut first, &[]).unwrap();
        assert!(p.done);
        assert_eq!((first[0].card(), first[0].physical()), (1, 2));
        assert!(
            first[0].path().ends_with("card-2.lock"),
            "{}",
            first[0].path().display()
        );
        // The other run calls physical card 2 its card 0: it is held.
        let mut second = Vec::new();
        let p = try_take(&cfg, &second_map, &list(0), 8, "run-b", &mut second, &[]).unwrap();
        assert!(!p.done && second.is_empty());
        let err = p.into_error(&list(0), 0, 8).to_string();
        assert!(
            err.contains("card 2"),
            "the holder is named by its physical card: {err}"
        );
        // Its logical 0 under the first map is physical 5: free for the first run's map only.
        let p = try_take(&cfg, &first_map, &list(0), 8, "run-b", &mut second, &[]).unwrap();
        assert!(p.done);
        assert_eq!(second[0].physical(), 5);
        drop(first);
        let mut third = Vec::new();
        let p = try_take(&cfg, &second_map, &list(0), 8, "run-c", &mut third, &[]).unwrap();
        assert!(p.done, "freed with the first run");
        // A card beyond the map is named as such.
        let e = try_take(&cfg, &second_map, &list(1), 8, "run-d", &mut Vec::new(), &[]).unwrap_err();
        assert!(matches!(e, TakeError::NotVisible { card: 1, visible: 1 }), "{e}");
    }
}
