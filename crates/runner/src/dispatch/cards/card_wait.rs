//! `--wait-for-cards SECS` (issue 9, item 3): a run whose cards are held by others waits for them
//! in the host-wide queue of the lock dir instead of exiting, and every run respects the runs that
//! wait.
//!
//! - Every run reads the queue before it takes a card (when one exists): a free card that a run
//!   waiting longer wants is that run's to take first ([`super::leases::try_take`]), so the head of
//!   the queue takes cards first and a stream of short runs cannot starve a long-waiting one. A
//!   run that does not wait (`--wait-for-cards 0`, the default) and finds a card held or reserved
//!   exits 2 naming the holder (or the waiter), as before.
//! - A run that waits joins the queue (a ticket, `platform_common::lease::CardQueue`), prints once
//!   which card is held by whom, then keeps a live line of what it still awaits (on a terminal,
//!   without `--no-progress`; else a plain line whenever that changes), takes each card as it
//!   frees and keeps it, and at the deadline gives up (exit 2 naming the holders), releasing what
//!   it took. SIGINT / SIGTERM end the wait as they end a run (exit 130 / 143).
//! - The wait polls: POSIX has no `flock` with a timeout, and a thread blocked in `flock` cannot
//!   be cancelled, so each card is tried without blocking, with a backoff from 25 ms up to 250 ms
//!   between tries (a card freed is taken within 250 ms; a signal is seen as fast).
//!
//! This file owns the waiting and its lines. It never parses `--devices` (`leases` does) and never
//! starts a lane.

use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use platform_common::lease::{CardQueue, LeaseConfig, LeaseError, Ticket};
use platform_common::DeviceLease;
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

use platform_common::visible::VisibleDevices;

use super::leases::{try_take, AutoCount, DeviceSpec, Progress, TakeError, Want};
use crate::report::model::Interruption;

/// The first pause between two tries of a waiting run.
const FIRST_BACKOFF: Duration = Duration::from_millis(25);
/// The longest pause between two tries.
const MAX_BACKOFF: Duration = Duration::from_millis(250);

/// Why a run did not get its cards.
#[derive(Debug, thiserror::Error)]
pub enum WaitError {
    /// The cards could not be taken and the run does not wait (or the request is bad).
    #[error(transparent)]
    Take(#[from] TakeError),
    /// The queue in the lock dir cannot be used.
    #[error("cannot use the card queue: {0}")]
    Queue(#[source] LeaseError),
    /// `--wait-for-cards` ran out.
    #[error("--wait-for-cards {secs}: gave up after {secs} s waiting for {wanted}: {awaited}")]
    GaveUp {
        /// The bound, in seconds.
        secs: f64,
        /// What the run waited for.
        wanted: String,
        /// The cards still awaited and who holds them.
        awaited: String,
    },
    /// SIGINT or SIGTERM ended the wait.
    #[error("{0} while waiting for cards: nothing ran")]
    Interrupted(Interruption),
}

impl WaitError {
    /// The exit status: 130 / 143 for a signal, 2 (bad usage or input) otherwise.
    pub fn exit_code(&self) -> u8 {
        match self {
            WaitError::Interrupted(i) => i.exit_code(),
            _ => 2,
        }
    }
}

/// How a run takes its cards.
#[derive(Debug, Clone)]
pub struct CardRequest<'a> {
    /// The lock dir.
    pub cfg: &'a LeaseConfig,
    /// `--devices`.
    pub spec: &'a DeviceSpec,
    /// `--device-num`.
    pub device_num: Option<u32>,
    /// How many `auto` takes without `--device-num`.
    pub default: AutoCount,
    /// Cards of the platform.
    pub cards: u32,
    /// The run's id (its holder records and ticket).
    pub run_id: &'a str,
    /// `--wait-for-cards` (zero: do not wait).
    pub wait: Duration,
    /// Whether a live line may be drawn (stderr a terminal, no `--no-progress`).
    pub live: bool,
    /// The process's visible-device map (`ASCEND_RT_VISIBLE_DEVICES`): `--devices` names logical
    /// ids, the leases are taken on the physical cards they map to.
    pub visible: &'a VisibleDevices,
}

/// Takes the run's cards, waiting in the queue up to `req.wait` (see the module docs).
pub fn take_cards(req: &CardRequest<'_>) -> Result<Vec<DeviceLease>, WaitError> {
    let want = Want::of(req.spec, req.device_num, req.default, req.cards)?;
    let queue = if req.wait.is_zero() {
        CardQueue::open_existing(req.cfg)
    } else {
        CardQueue::open(req.cfg).map(Some)
    }
    .map_err(WaitError::Queue)?;
    let mut held = Vec::new();
    // The first try, and the ticket when it falls short, under one hold of the queue lock: no
    // waiter takes a card between them.
    let (first, ticket) = {
        let guard = queue
            .as_ref()
            .map(CardQueue::lock)
            .transpose()
            .map_err(WaitError::Queue)?;
        let ahead = guard.as_ref().map(|g| g.waiters()).unwrap_or_default();
        let progress = try_take(
            req.cfg,
            req.visible,
            &want,
            req.cards,
            req.run_id,
            &mut held,
            &ahead,
        )?;
        if progress.done {
            return Ok(held);
        }
        if req.wait.is_zero() {
            let n = held.len();
            drop(held);
            return Err(progress.into_error(&want, n, req.cards).into());
        }
        let ticket = match &guard {
            Some(g) => g
                .enqueue(req.run_id, &want.ticket(req.visible))
                .map_err(WaitError::Queue)?,
            None => unreachable!("a waiting run opened the queue"),
        };
        (progress, ticket)
    };
    let queue = queue.unwrap_or_else(|| unreachable!("a waiting run opened the queue"));
    let mut wait = Wait::start(req, &want, &first, &ticket)?;
    loop {
        if let Some(i) = wait.pause() {
            return Err(WaitError::Interrupted(i));
        }
        let progress = {
            let guard = queue.lock().map_err(WaitError::Queue)?;
            let ahead: Vec<_> = guard
                .waiters()
                .into_iter()
                .filter(|w| w.seq < ticket.seq())
                .collect();
            try_take(
                req.cfg,
                req.visible,
                &want,
                req.cards,
                req.run_id,
                &mut held,
                &ahead,
            )?
        };
        if progress.done {
            drop(ticket);
            wait.got(&held);
            return Ok(held);
        }
        if wait.past_deadline() {
            drop(ticket);
            drop(held);
            wait.finish();
            return Err(WaitError::GaveUp {
                secs: req.wait.as_secs_f64(),
                wanted: want.wanted().to_string(),
                awaited: progress.describe(),
            });
        }
        wait.show(&progress, held.len());
    }
}

/// A wait under way: its clock, its signals and its lines.
struct Wait {
    since: Instant,
    deadline: Instant,
    backoff: Duration,
    signals: Option<Signals>,
    bar: Option<ProgressBar>,
    wanted: String,
    last: String,
}

impl Wait {
    /// Starts waiting: the first line says what is awaited and who holds it.
    fn start(
        req: &CardRequest<'_>,
        want: &Want,
        first: &Progress,
        ticket: &Ticket,
    ) -> Result<Self, WaitError> {
        let signals = match Signals::new([SIGINT, SIGTERM]) {
            Ok(s) => Some(s),
            Err(e) => {
                tracing::warn!("cannot watch SIGINT and SIGTERM while waiting ({e})");
                None
            }
        };
        let wanted = want.wanted().to_string();
        let awaited = first.describe();
        crate::output::err(format_args!(
            "waiting up to {} s for {wanted} (ticket {} in the card queue): {awaited}",
            req.wait.as_secs_f64(),
            ticket.seq()
        ));
        let bar = req.live.then(|| {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template("{spinner} {elapsed} {wide_msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            bar.enable_steady_tick(Duration::from_millis(200));
            bar
        });
        let now = Instant::now();
        Ok(Self {
            since: now,
            deadline: now + req.wait,
            backoff: FIRST_BACKOFF,
            signals,
            bar,
            wanted,
            last: awaited,
        })
    }

    /// Pauses before the next try (never past the deadline); a signal ends the wait.
    fn pause(&mut self) -> Option<Interruption> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        std::thread::sleep(self.backoff.min(left));
        self.backoff = (self.backoff * 2).min(MAX_BACKOFF);
        let sig = self
            .signals
            .as_mut()
            .and_then(|s| s.pending().find_map(Interruption::from_signal));
        if sig.is_some() {
            self.finish();
        }
        sig
    }

    fn past_deadline(&self) -> bool {
        Instant::now() >= self.deadline
    }

    /// What is still awaited: the live line, or a plain line when it changed.
    fn show(&mut self, progress: &Progress, held: usize) {
        let awaited = progress.describe();
        let left = self.deadline.saturating_duration_since(Instant::now()).as_secs();
        let took = if held > 0 {
            format!(" (holding {held} card(s) already)")
        } else {
            String::new()
        };
        match &self.bar {
            Some(bar) => bar.set_message(format!(
                "waiting for {}{took}, {left} s left: {awaited}",
                self.wanted
            )),
            None if awaited != self.last => crate::output::err(format_args!(
                "still waiting for {}{took}, {left} s left: {awaited}",
                self.wanted
            )),
            None => {}
        }
        self.last = awaited;
    }

    /// The cards were had.
    fn got(&mut self, held: &[DeviceLease]) {
        self.finish();
        let cards: Vec<String> = held.iter().map(|l| l.card().to_string()).collect();
        crate::output::err(format_args!(
            "took card(s) {} after waiting {:.1} s",
            cards.join(", "),
            self.since.elapsed().as_secs_f64()
        ));
    }

    fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
        self.signals = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(tmp: &tempfile::TempDir) -> LeaseConfig {
        LeaseConfig {
            dir: tmp.path().join("locks"),
        }
    }

    static IDENTITY: VisibleDevices = VisibleDevices::identity();

    fn req<'a>(cfg: &'a LeaseConfig, spec: &'a DeviceSpec, run_id: &'a str, wait_ms: u64) -> CardRequest<'a> {
        CardRequest {
            cfg,
            spec,
            device_num: None,
            default: AutoCount::Exactly(1),
            cards: 4,
            run_id,
            wait: Duration::from_millis(wait_ms),
            live: false,
            visible: &IDENTITY,
        }
    }

    #[test]
    fn a_free_card_a_run_waiting_longer_wants_is_left_to_it() {
        let tmp = tempfile::tempdir().unwrap();
        let cfg = cfg(&tmp);
        let queue = CardQueue::open(&cfg).unwrap();
        let ticket = queue
            .lock()
            .unwrap()
            .enqueue("waiter", &platform_common::lease::Wanted::Cards(vec![1]))
            .unwrap();
        // Card 1 is free but reserved: a run that does not wait is refused, naming the waiter.
        let one: DeviceSpec = "1".parse().unwrap();
        let e = take_cards(&req(&cfg, &one, "newcomer", 0)).unwrap_err();
        assert!(
            matches!(e, WaitError::Take(TakeError::Reserved { card: 1, .. })),
            "{e}"
        );
        assert!(e.to_string().contains("(run waiter)"), "{e}");
        // Card 2 is nobody's: taken at once; `auto` skips the reserved card.
        let two: DeviceSpec = "2".parse().unwrap();
        let held = take_cards(&req(&cfg, &two, "newcomer", 0)).unwrap();
        assert_eq!(held[0].card(), 2);
        let auto = DeviceSpec::Auto;
        let mut r = req(&cfg, &auto, "auto-run", 0);
        r.device_num = Some(2);
        let got = take_cards(&r).unwrap();
        assert_eq!(got.iter().map(DeviceLease::card).collect::<Vec<_>>(), [0, 3]);
        drop(got);
        // The waiter gone, card 1 is anyone's.
        drop(ticket);
        assert_eq!(take_cards(&req(&cfg, &one, "newcomer", 0)).unwrap()[0].card(), 1);
    }

    #[test]
    fn a_wait_gives_up_at_its_deadline_naming_the_holder_and_leaves_the_queue() {
        let tmp = tempfile::tempdir().unwrap();
        let cfg = cfg(&tmp);
        let _holder = DeviceLease::try_acquire(&cfg, 0, "holder-run").unwrap();
        let spec: DeviceSpec = "0,1".parse().unwrap();
        let started = Instant::now();
        let e = take_cards(&req(&cfg, &spec, "waiter", 300)).unwrap_err();
        assert!(started.elapsed() >= Duration::from_millis(300));
        let msg = e.to_string();
        assert!(matches!(e, WaitError::GaveUp { .. }), "{msg}");
        assert!(
            msg.starts_with(
                "--wait-for-cards 0.3: gave up after 0.3 s waiting for cards 0, 1: card 0 is held by uid "
            ),
            "{msg}"
        );
        assert!(msg.contains("(run holder-run)") && !msg.contains('\n'), "{msg}");
        assert_eq!(e.exit_code(), 2);
        // Card 1, taken while waiting, was let go; the ticket is gone.
        assert!(DeviceLease::try_acquire(&cfg, 1, "next").is_ok());
        let q = CardQueue::open(&cfg).unwrap();
        assert!(q.lock().unwrap().waiters().is_empty());
    }

    #[test]
    fn a_card_freed_during_the_wait_is_taken() {
        let tmp = tempfile::tempdir().unwrap();
        let cfg = cfg(&tmp);
        let holder = DeviceLease::try_acquire(&cfg, 3, "holder-run").unwrap();
        let spec: DeviceSpec = "3".parse().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let waiter = {
            let cfg = cfg.clone();
            std::thread::spawn(move || {
                let got = take_cards(&req(&cfg, &spec, "waiter", 120_000));
                let _ = tx.send(());
                got.map(|l| l.iter().map(DeviceLease::card).collect::<Vec<_>>())
            })
        };
        // The waiter's ticket shows it waiting; then the holder lets go.
        let q = CardQueue::open(&cfg).unwrap();
        loop {
            if !q.lock().unwrap().waiters().is_empty() {
                break;
            }
            std::thread::yield_now();
        }
        assert!(rx.try_recv().is_err(), "still waiting while the card is held");
        drop(holder);
        assert_eq!(waiter.join().unwrap().unwrap(), [3]);
        assert!(q.lock().unwrap().waiters().is_empty(), "its ticket left with it");
    }

    /// The queue is host-wide: a ticket names physical cards, and a waiter's reservation holds
    /// against a run whose map calls the same physical card by another number.
    #[test]
    fn a_waiters_reservation_is_on_the_physical_card_whatever_the_map() {
        let tmp = tempfile::tempdir().unwrap();
        let cfg = cfg(&tmp);
        // A run under `ASCEND_RT_VISIBLE_DEVICES=5` waits for its card 0: its ticket says 5.
        let five = VisibleDevices::parse("5").unwrap();
        let wanted = Want::List(vec![0]).ticket(&five);
        assert_eq!(wanted, platform_common::lease::Wanted::Cards(vec![5]));
        assert_eq!(
            Want::List(vec![0]).wanted().to_string(),
            "card 0",
            "its own words"
        );
        let queue = CardQueue::open(&cfg).unwrap();
        let _ticket = queue.lock().unwrap().enqueue("waiter", &wanted).unwrap();
        // A run under `2,5` asks for its card 1 (physical 5): reserved for the waiter.
        let map = VisibleDevices::parse("2,5").unwrap();
        let one: DeviceSpec = "1".parse().unwrap();
        let e = take_cards(&CardRequest {
            visible: &map,
            ..req(&cfg, &one, "newcomer", 0)
        })
        .unwrap_err();
        assert!(
            matches!(e, WaitError::Take(TakeError::Reserved { card: 1, .. })),
            "{e}"
        );
        // Its card 0 is physical 2, which nobody waits for; card 1 under the identity map is
        // physical 1, nobody's either.
        let zero: DeviceSpec = "0".parse().unwrap();
        let held = take_cards(&CardRequest {
            visible: &map,
            ..req(&cfg, &zero, "newcomer", 0)
        })
        .unwrap();
        assert_eq!((held[0].card(), held[0].physical()), (0, 2));
        assert!(take_cards(&req(&cfg, &one, "third", 0)).is_ok());
    }
}
