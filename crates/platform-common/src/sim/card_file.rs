//! The cross-process state of one simulated card: a small JSON file under the sim root.
//!
//! This file owns the card record (reset generation, the installed faults, the run's counters and
//! which launch faults fired) and the only way to change it: read-modify-write under the record's
//! exclusive lock, written back whole by a rename (`record_file.rs`), so a process killed at any
//! moment leaves the old record or the new one, never an empty or half-written file. Readers take
//! no lock. A card file that was never written is a fresh card; one that cannot be read (empty,
//! not UTF-8, not JSON: another tool's, or an older version's write cut short) is never a crash:
//! it is reset to a fresh card, with one `warn` line naming the file, and the run goes on (a run
//! installs its plan and zeroes its counters at its start anyway). What the record *means* for a
//! driver call is decided by the driver, not here.

use serde::{Deserialize, Serialize};

use super::config::{card_file_name, SimConfig};
use super::error::SimError;
use super::plan::{Fault, FaultPlan};
use super::record_file::RecordFile;
use crate::driver::DeviceId;
use crate::visible::VisibleDevices;

/// The run's counters of one card. [`super::start_run`] zeroes them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CardCounters {
    /// `LaunchOrigin::Case` launches (the K of launch faults).
    #[serde(default)]
    pub case_launches: u64,
    /// `LaunchOrigin::Internal` launches (probes and other internal kernels; never count for K).
    #[serde(default)]
    pub internal_launches: u64,
    /// Force resets attempted (the K of `force_reset_fail`).
    #[serde(default)]
    pub force_resets: u64,
    /// Force resets that returned 0, each followed by a post-reset probe (the K of `probe_fail`).
    #[serde(default)]
    pub post_reset_probes: u64,
    /// Case SDMA copies (the K of `sdma_fault`).
    #[serde(default)]
    pub sdma_copies: u64,
    /// SDMA warm-ups (the copy a worker makes at init).
    #[serde(default)]
    pub sdma_warmups: u64,
    /// Calls that blocked for the remote-event timeout on a wedged SDMA engine (force resets
    /// before the handoff window, `aclFinalize` after one).
    #[serde(default)]
    pub remote_event_waits: u64,
}

/// The card's SDMA engine is wedged: an SDMA fault happened and no force reset after the handoff
/// window has cleared it yet. Every SDMA copy on the card fails while it lasts, in any process;
/// compute is untouched in a context the fault did not poison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SdmaWedge {
    /// When the fault happened, in milliseconds since the Unix epoch.
    pub unix_ms: u64,
    /// Whether the host observed the fault before the device went down: the faulting copy's
    /// stream stops on failure, so its next sync reports it (507015). An unobserved fault makes
    /// every force reset block for the remote-event timeout, whenever it comes.
    pub observed: bool,
}

/// Everything a card file records.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CardState {
    /// Bumped by every force reset that returned 0; never zeroed by a run start.
    #[serde(default)]
    pub generation: u64,
    /// The faults installed for this card by the current run.
    #[serde(default)]
    pub faults: Vec<Fault>,
    /// Indices into `faults` of the launch faults that already fired this run.
    #[serde(default)]
    pub fired: Vec<usize>,
    /// The run's counters.
    #[serde(default)]
    pub counters: CardCounters,
    /// The SDMA engine's wedge, while it lasts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sdma_wedge: Option<SdmaWedge>,
}

impl CardState {
    /// Whether a setting-kind fault like `probe` is installed.
    pub fn has(&self, probe: impl Fn(&Fault) -> bool) -> bool {
        self.faults.iter().any(probe)
    }

    /// The `force_reset_fail` count, 0 when none.
    pub fn force_reset_fail(&self) -> u64 {
        self.faults
            .iter()
            .find_map(|f| match f {
                Fault::ForceResetFail { count } => Some(*count),
                _ => None,
            })
            .unwrap_or(0)
    }

    /// The `probe_fail` count, 0 when none.
    pub fn probe_fail(&self) -> u64 {
        self.faults
            .iter()
            .find_map(|f| match f {
                Fault::ProbeFail { count } => Some(*count),
                _ => None,
            })
            .unwrap_or(0)
    }

    /// The `init_delay_ms` setting, 0 when none.
    pub fn init_delay_ms(&self) -> u64 {
        self.faults
            .iter()
            .find_map(|f| match f {
                Fault::InitDelayMs { ms } => Some(*ms),
                _ => None,
            })
            .unwrap_or(0)
    }

    /// The installed faults (by index into `faults`) that did not fire this run, each with why it
    /// did not: a launch fault whose launch never came, a `force_reset_fail` with no force reset, a
    /// `probe_fail` with no post-reset probe. `dead`, `init_delay_ms` and `drain=false_negative`
    /// act on every init or drain of the card and are not judged here.
    pub fn unfired(&self) -> Vec<(usize, String)> {
        let c = &self.counters;
        self.faults
            .iter()
            .enumerate()
            .filter_map(|(i, f)| {
                let why = match f {
                    _ if f.launch_number().is_some() => (!self.fired.contains(&i))
                        .then(|| format!("the card made {} case launch(es)", c.case_launches)),
                    Fault::ForceResetFail { .. } => {
                        (c.force_resets == 0).then(|| "the card was never force-reset".to_owned())
                    }
                    Fault::ProbeFail { .. } => {
                        (c.post_reset_probes == 0).then(|| "the card had no post-reset probe".to_owned())
                    }
                    Fault::SdmaFault { .. } => (!self.fired.contains(&i))
                        .then(|| format!("the card made {} case SDMA copies", c.sdma_copies)),
                    Fault::SdmaWarmupFault => {
                        (!self.fired.contains(&i)).then(|| "the card had no SDMA warm-up".to_owned())
                    }
                    _ => None,
                };
                why.map(|w| (i, w))
            })
            .collect()
    }

    /// Counts one case launch and returns the launch fault that fires at it, marking it fired.
    pub fn count_case_launch(&mut self) -> (u64, Option<Fault>) {
        self.counters.case_launches += 1;
        let k = self.counters.case_launches;
        let hit = self
            .faults
            .iter()
            .enumerate()
            .find(|(i, f)| f.launch_number() == Some(k) && !self.fired.contains(i))
            .map(|(i, f)| (i, *f));
        match hit {
            Some((i, f)) => {
                self.fired.push(i);
                (k, Some(f))
            }
            None => (k, None),
        }
    }
}

impl CardState {
    /// Counts one SDMA copy of `origin` and says whether the plan faults it (an `sdma_fault@K` at
    /// this case copy, or the run's `sdma_warmup_fault` at a warm-up), marking the rule fired.
    /// Probe copies are not counted and never fault by plan.
    pub fn count_sdma_copy(&mut self, origin: crate::driver::SdmaOrigin) -> bool {
        use crate::driver::SdmaOrigin;
        let hit = match origin {
            SdmaOrigin::Case => {
                self.counters.sdma_copies += 1;
                let k = self.counters.sdma_copies;
                self.faults
                    .iter()
                    .enumerate()
                    .position(|(i, f)| f.sdma_copy_number() == Some(k) && !self.fired.contains(&i))
            }
            SdmaOrigin::Warmup => {
                self.counters.sdma_warmups += 1;
                self.faults
                    .iter()
                    .enumerate()
                    .position(|(i, f)| *f == Fault::SdmaWarmupFault && !self.fired.contains(&i))
            }
            SdmaOrigin::Probe => None,
        };
        match hit {
            Some(i) => {
                self.fired.push(i);
                true
            }
            None => false,
        }
    }
}

/// What a card file held when read.
#[derive(Debug)]
enum Loaded {
    /// A record.
    State(CardState),
    /// No file yet: a fresh card.
    Fresh,
    /// A file that is not a record; why.
    Unreadable(String),
}

/// An open card file.
#[derive(Debug)]
pub(crate) struct CardFile {
    record: RecordFile,
}

impl CardFile {
    /// Opens the state file of `card` (the sim root is created on demand).
    pub(crate) fn open(cfg: &SimConfig, card: DeviceId) -> Result<Self, SimError> {
        Ok(Self {
            record: RecordFile::open(&cfg.root, &card_file_name(card))?,
        })
    }

    /// Reads the record. An unreadable file is reset (under the lock) to a fresh card.
    pub(crate) fn read(&mut self) -> Result<CardState, SimError> {
        match self.load()? {
            Loaded::State(state) => Ok(state),
            Loaded::Fresh => Ok(CardState::default()),
            Loaded::Unreadable(_) => self.update(|_| ()).map(|((), state)| state),
        }
    }

    /// Reads, changes and writes back the record under the exclusive lock; returns what `change`
    /// returned and the record as written.
    pub(crate) fn update<T>(
        &mut self,
        change: impl FnOnce(&mut CardState) -> T,
    ) -> Result<(T, CardState), SimError> {
        let held = self.record.exclusive()?;
        let mut state = match self.load()? {
            Loaded::State(state) => state,
            Loaded::Fresh => CardState::default(),
            Loaded::Unreadable(why) => {
                tracing::warn!(
                    "sim card file {} is unreadable ({why}); reset to a fresh card",
                    self.record.path().display()
                );
                CardState::default()
            }
        };
        let out = change(&mut state);
        let text = serde_json::to_vec(&state).map_err(|e| SimError::Io {
            path: self.record.path().to_owned(),
            source: e.into(),
        })?;
        self.record.replace(&held, &text)?;
        Ok((out, state))
    }

    /// Removes what writers killed mid-rewrite left behind (their temp files).
    fn remove_strays(&mut self) -> Result<(), SimError> {
        let held = self.record.exclusive()?;
        let removed = self.record.remove_strays(&held)?;
        if removed > 0 {
            tracing::debug!(file = %self.record.path().display(), removed, "stray temp files removed");
        }
        Ok(())
    }

    fn load(&self) -> Result<Loaded, SimError> {
        let Some(bytes) = self.record.read()? else {
            return Ok(Loaded::Fresh);
        };
        let text = match std::str::from_utf8(&bytes) {
            Ok(t) if t.trim().is_empty() => return Ok(Loaded::Unreadable("empty".to_owned())),
            Ok(t) => t,
            Err(_) => return Ok(Loaded::Unreadable("not UTF-8".to_owned())),
        };
        Ok(match serde_json::from_str(text) {
            Ok(state) => Loaded::State(state),
            Err(e) => Loaded::Unreadable(format!("not a card record: {e}")),
        })
    }
}

/// The current record of `card` (for reports and tests).
pub fn card_state(cfg: &SimConfig, card: DeviceId) -> Result<CardState, SimError> {
    check_card(cfg, card)?;
    CardFile::open(cfg, card)?.read()
}

/// Starts a run on `cards` of a process that sees every card as itself (no
/// `ASCEND_RT_VISIBLE_DEVICES` map): [`start_run_mapped`] with the identity.
pub fn start_run(cfg: &SimConfig, cards: &[DeviceId], plan: &FaultPlan) -> Result<(), SimError> {
    start_run_mapped(cfg, &VisibleDevices::identity(), cards, plan)
}

/// Starts a run on the logical `cards` of a process whose map is `visible`: installs `plan`'s
/// faults for each of them and zeroes their counters and fired marks, and clears an SDMA wedge an
/// earlier run left. A rule `dev=N` names logical card N, the number `--devices` takes and a
/// report shows first (`card N (physical P)`); its faults go to the file of N's physical card,
/// where that card's state lives. The reset generation is kept (contexts of earlier processes
/// stay stale). Temp files that writers killed mid-rewrite left beside the card files are
/// removed.
pub fn start_run_mapped(
    cfg: &SimConfig,
    visible: &VisibleDevices,
    cards: &[DeviceId],
    plan: &FaultPlan,
) -> Result<(), SimError> {
    plan.check_cards(visible.count().unwrap_or(cfg.cards))?;
    let mut physical = Vec::with_capacity(cards.len());
    for &card in cards {
        let p = visible.physical(card).ok_or(SimError::NotVisible {
            card,
            visible: visible.count().unwrap_or(cfg.cards),
        })?;
        check_card(cfg, p)?;
        physical.push((card, p));
    }
    for (card, p) in physical {
        let faults = plan.faults_for(card);
        let mut file = CardFile::open(cfg, p)?;
        file.remove_strays()?;
        file.update(|s| {
            s.faults = faults;
            s.fired.clear();
            s.counters = CardCounters::default();
            s.sdma_wedge = None;
        })?;
        tracing::debug!(card, physical = p, plan = %plan, "sim run started");
    }
    Ok(())
}

pub(crate) fn check_card(cfg: &SimConfig, card: DeviceId) -> Result<(), SimError> {
    if card < cfg.cards {
        Ok(())
    } else {
        Err(SimError::CardOutOfRange {
            card,
            cards: cfg.cards,
        })
    }
}
