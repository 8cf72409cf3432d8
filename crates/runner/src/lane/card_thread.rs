//! One further card of the multi-card lane, driven from a thread of its own for the lane's whole
//! life.
//!
//! CANN keeps one current device per *thread* (`aclrtSetDevice`). The device runner selects its
//! card again before every run, so two cards on one thread would work, but they would run one
//! after the other and a stuck call on one card would stall the other. The rule of the lane is
//! therefore one card, one thread: the lane's own card is driven from the lane's main thread (its
//! pool, its standalone and multi-card workers), and every further card a multi-card lane holds is
//! driven from its [`CardThread`], which builds that card's [`ChipWorker`], runs the case's work on
//! it (and the post-case health check the job asks for), says whether it is still usable (a
//! pooled class's next multi-card case reuses it) and closes it (finalize, with the card's lease),
//! each step a request on a channel answered on a channel of its own.
//!
//! This file owns that thread and its requests. It never judges a case, never escalates and never
//! talks to the dispatcher (the session does). A case body's panic is caught by the executor on
//! this thread, as on the lane's own; any other panic on the thread is carried over to the caller
//! (the lane then dies as a crash, which the dispatcher handles).

use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;

use platform_common::runner_base::{FinalizeError, FinalizeReport, InitError};
use platform_common::{DeviceId, DeviceLease, FailureClass};

use super::heal::HealthCheck;
use super::post_check;
use crate::case::{CaseSpec, DeviceSetup, FixtureData, Runtime};
use crate::exec::{self, CaseInput, CaseRun, Executed};
use crate::report::model::ErrorReport;
use crate::worker::{ChipWorker, WorkerEnv};

/// What closing a card's worker gave (`None`: no worker was built).
pub type Closed = Option<Result<FinalizeReport, FinalizeError>>;

/// A case for a card's thread: what the executor's [`CaseInput`] borrows, owned.
#[derive(Clone)]
pub struct RunJob {
    /// `Class::case`.
    pub id: String,
    /// The class's name.
    pub class: String,
    /// The case.
    pub case: CaseSpec,
    /// The class fixture's host data (built once, on the lane's thread).
    pub host_fixture: Option<FixtureData>,
    /// The class fixture's device part.
    pub device_setup: Option<DeviceSetup>,
    /// Whether the card's worker is health-checked after the case.
    pub health_check: HealthCheck,
}

impl std::fmt::Debug for RunJob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunJob")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

/// A request to a card's thread, with the channel its answer goes back on.
enum Job {
    /// Build the card's worker for this runtime (closing any previous one first).
    Init(Runtime, Sender<Result<(), InitError>>),
    /// Run this case on the worker.
    Run(Box<RunJob>, Sender<Executed>),
    /// Close the worker.
    Close(Sender<Closed>),
    /// Whether a worker is built and not marked unusable (kept for the next case).
    Usable(Sender<bool>),
}

/// An answer still to come from a card's thread.
#[derive(Debug)]
#[must_use = "a request's answer must be waited for"]
pub struct Pending<T>(Receiver<T>);

/// The thread driving one further card of a multi-card lane. Dropping it lets the thread end
/// once its requests stop, without waiting for it (a thread stuck in a stalled run must not hold
/// the lane); [`CardThread::shutdown`] waits.
#[derive(Debug)]
pub struct CardThread {
    card: DeviceId,
    jobs: Option<Sender<Job>>,
    handle: Option<JoinHandle<()>>,
}

impl CardThread {
    /// Starts the thread of `env.device`, which owns `env` (the card's own driver value) for its
    /// whole life and closes workers with `lease` (that card's lease).
    pub fn spawn(env: WorkerEnv, lease: Arc<DeviceLease>) -> std::io::Result<Self> {
        let card = env.device;
        let (jobs, inbox) = mpsc::channel();
        let handle = std::thread::Builder::new()
            .name(format!("lane-card-{card}"))
            .spawn(move || serve(env, &lease, &inbox))?;
        Ok(Self {
            card,
            jobs: Some(jobs),
            handle: Some(handle),
        })
    }

    /// The card.
    pub fn card(&self) -> DeviceId {
        self.card
    }

    /// Asks the thread to build the card's worker for `runtime`.
    pub fn init(&mut self, runtime: &Runtime) -> Pending<Result<(), InitError>> {
        let (tx, rx) = mpsc::channel();
        self.send(Job::Init(runtime.clone(), tx));
        Pending(rx)
    }

    /// Asks the thread to run `job` on the card's worker.
    pub fn run(&mut self, job: RunJob) -> Pending<Executed> {
        let (tx, rx) = mpsc::channel();
        self.send(Job::Run(Box::new(job), tx));
        Pending(rx)
    }

    /// Asks the thread to close the card's worker.
    pub fn close(&mut self) -> Pending<Closed> {
        let (tx, rx) = mpsc::channel();
        self.send(Job::Close(tx));
        Pending(rx)
    }

    /// Asks the thread whether the card's worker is built and not marked unusable.
    pub fn usable(&mut self) -> Pending<bool> {
        let (tx, rx) = mpsc::channel();
        self.send(Job::Usable(tx));
        Pending(rx)
    }

    /// Waits for the answer to a request. If the thread died (a panic), its panic goes on here.
    pub fn wait<T>(&mut self, pending: Pending<T>) -> T {
        match pending.0.recv() {
            Ok(v) => v,
            Err(_) => self.resume_panic(),
        }
    }

    /// Ends the thread once it has answered everything (call with no worker left open) and waits
    /// for it.
    pub fn shutdown(mut self) {
        self.jobs = None;
        if let Some(h) = self.handle.take() {
            if h.join().is_err() {
                tracing::warn!(card = self.card, "the card's thread panicked while shutting down");
            }
        }
    }

    fn send(&mut self, job: Job) {
        let sent = self.jobs.as_ref().is_some_and(|j| j.send(job).is_ok());
        if !sent {
            self.resume_panic();
        }
    }

    /// The thread is gone without answering: it can only have panicked. Its panic goes on in the
    /// caller's thread.
    fn resume_panic(&mut self) -> ! {
        self.jobs = None;
        let card = self.card;
        match self.handle.take().map(JoinHandle::join) {
            Some(Err(payload)) => std::panic::resume_unwind(payload),
            _ => panic!("the thread of card {card} stopped answering without a panic"),
        }
    }
}

/// The thread's loop: one card, one worker at a time, every driver call on this thread.
fn serve(mut env: WorkerEnv, lease: &DeviceLease, inbox: &Receiver<Job>) {
    let mut worker: Option<ChipWorker> = None;
    for job in inbox {
        match job {
            Job::Init(runtime, reply) => {
                let closed = close(&mut worker, lease);
                if let Some(Err(e)) = closed {
                    tracing::warn!(card = env.device, "closing the previous worker: {e}");
                }
                let built = ChipWorker::init(&env, &runtime).map(|w| {
                    worker = Some(w);
                });
                let _ = reply.send(built);
            }
            Job::Run(job, reply) => {
                let executed = match worker.as_mut() {
                    Some(w) => {
                        let input = CaseInput {
                            id: &job.id,
                            class: &job.class,
                            case: &job.case,
                            host_fixture: job.host_fixture.clone(),
                            device_setup: job.device_setup.clone(),
                        };
                        let mut executed = exec::execute(w, &mut env, &input);
                        executed.raw = post_check::apply(job.health_check, w, executed.raw);
                        executed
                    }
                    None => Executed {
                        raw: CaseRun::failed(ErrorReport::new(
                            FailureClass::Infrastructure,
                            format!("card {}: no worker was built for case {:?}", env.device, job.id),
                        )),
                        notes: Vec::new(),
                    },
                };
                let _ = reply.send(executed);
            }
            Job::Close(reply) => {
                let _ = reply.send(close(&mut worker, lease));
            }
            Job::Usable(reply) => {
                let _ = reply.send(worker.as_ref().is_some_and(|w| !w.is_unusable()));
            }
        }
    }
    if let Some(Err(e)) = close(&mut worker, lease) {
        tracing::warn!(card = env.device, "closing the worker as the lane ends: {e}");
    }
}

fn close(worker: &mut Option<ChipWorker>, lease: &DeviceLease) -> Closed {
    worker.take().map(|w| w.close(lease))
}

#[cfg(all(test, feature = "sim"))]
mod tests {
    use platform_common::kernel::load_builtin;
    use platform_common::lease::LeaseConfig;
    use platform_common::sim::{start_run, CurrentDevice, FaultPlan, SimConfig, SimDriver};
    use platform_common::{Arch, Driver};

    use super::*;
    use crate::case::ClassSpec;
    use crate::report::model::AttemptOutcome;

    /// Two simulated cards behind one driver value that keeps the current device per thread, as
    /// CANN does, with both cards' leases.
    struct Machine {
        _dir: tempfile::TempDir,
        driver: Arc<dyn Driver>,
        cfg: SimConfig,
        leases: Vec<Arc<DeviceLease>>,
    }

    fn machine() -> Machine {
        machine_with(FaultPlan::default())
    }

    fn machine_with(plan: FaultPlan) -> Machine {
        let dir = tempfile::tempdir().unwrap();
        let cfg = crate::platform::arch_entry(Arch::A5)
            .sim_config(dir.path().join("sim"))
            .with_cards(2);
        start_run(&cfg, &[0, 1], &plan).unwrap();
        let locks = LeaseConfig {
            dir: dir.path().join("locks"),
        };
        let leases = (0..2)
            .map(|c| Arc::new(DeviceLease::try_acquire(&locks, c, "card-thread-test").unwrap()))
            .collect();
        let driver = SimDriver::new(cfg.clone()).with_current_device(CurrentDevice::PerThread);
        Machine {
            _dir: dir,
            driver: Arc::new(driver),
            cfg,
            leases,
        }
    }

    fn env(m: &Machine, card: DeviceId) -> WorkerEnv {
        let mut env = WorkerEnv::new(Arch::A5, Arc::clone(&m.driver), card, m.cfg.timeouts);
        env.probe_kernel = Some(load_builtin(Arch::A5, "noop").unwrap());
        env
    }

    /// The built-in multi-card class and its case.
    fn multi_card() -> (ClassSpec, CaseSpec) {
        let suite = crate::suite::builtin(Arch::A5);
        let class = suite
            .classes
            .iter()
            .find(|c| c.cases.iter().any(|k| k.device_count > 1))
            .expect("the built-in suite has a multi-card case")
            .clone();
        let case = class.cases.iter().find(|k| k.device_count > 1).unwrap().clone();
        (class, case)
    }

    fn job(class: &ClassSpec, case: &CaseSpec) -> RunJob {
        RunJob {
            id: class.case_id(case),
            class: class.name.clone(),
            case: case.clone(),
            host_fixture: None,
            device_setup: None,
            health_check: HealthCheck::Each,
        }
    }

    fn compute(w: &mut ChipWorker, env: &mut WorkerEnv, class: &ClassSpec, case: &CaseSpec) -> CaseRun {
        let id = class.case_id(case);
        let input = CaseInput {
            id: &id,
            class: &class.name,
            case,
            host_fixture: None,
            device_setup: None,
        };
        exec::execute(w, env, &input).raw
    }

    #[test]
    fn each_card_is_driven_from_its_own_thread_on_one_driver_value() {
        let m = machine();
        let (class, case) = multi_card();
        let mut own_env = env(&m, 0);
        let mut card = CardThread::spawn(env(&m, 1), Arc::clone(&m.leases[1])).unwrap();
        assert_eq!(card.card(), 1);

        let built = card.init(&class.runtime);
        let mut own = ChipWorker::init(&own_env, &class.runtime).unwrap();
        card.wait(built).unwrap();
        let ran = card.run(job(&class, &case));
        let own_run = compute(&mut own, &mut own_env, &class, &case);
        let other_run = card.wait(ran).raw;
        assert_eq!(own_run, CaseRun::passed());
        assert_eq!(other_run, CaseRun::passed());
        let closed = card.close();
        own.close(&m.leases[0]).unwrap();
        assert!(matches!(card.wait(closed), Some(Ok(_))));
        // Nothing is left to close.
        let closed = card.close();
        assert!(card.wait(closed).is_none());
        card.shutdown();
    }

    /// The control of the test above: the same driver value driven for both cards from one
    /// thread. Every device-runner run, registration and finalize makes its own card current
    /// first (`aclrtSetDevice`), so the first card's worker no longer acts on the second card's
    /// context: both work and close cleanly.
    #[test]
    fn two_cards_from_one_thread_each_make_their_card_current() {
        let m = machine();
        let (class, case) = multi_card();
        let mut env0 = env(&m, 0);
        let env1 = env(&m, 1);
        let mut first = ChipWorker::init(&env0, &class.runtime).unwrap();
        let second = ChipWorker::init(&env1, &class.runtime).unwrap();
        let run = compute(&mut first, &mut env0, &class, &case);
        assert_eq!(run.outcome, AttemptOutcome::Passed, "{:?}", run.error);
        assert!(second.close(&m.leases[1]).unwrap().reset.is_none());
        assert!(first.close(&m.leases[0]).unwrap().reset.is_none());
    }

    #[test]
    fn a_body_panic_on_the_card_thread_fails_only_its_attempt() {
        let m = machine();
        let (class, _) = multi_card();
        let boom = CaseSpec::compute("boom", &[], |_: Arch, _: u64| -> crate::case::Workload {
            panic!("generator exploded")
        });
        let mut card = CardThread::spawn(env(&m, 1), Arc::clone(&m.leases[1])).unwrap();
        let built = card.init(&class.runtime);
        card.wait(built).unwrap();
        let ran = card.run(job(&class, &boom));
        let raw = card.wait(ran).raw;
        let e = raw.error.expect("the panic fails the attempt");
        assert_eq!(e.class, FailureClass::Result);
        assert!(e.message.contains("generator exploded"), "{}", e.message);
        // The thread and its worker go on.
        let (_, case) = multi_card();
        let ran = card.run(job(&class, &case));
        assert_eq!(card.wait(ran).raw, CaseRun::passed());
        let closed = card.close();
        assert!(matches!(card.wait(closed), Some(Ok(_))));
        card.shutdown();
    }

    #[test]
    fn a_card_thread_says_whether_its_worker_can_serve_the_next_case() {
        let m = machine();
        let (class, case) = multi_card();
        let mut card = CardThread::spawn(env(&m, 1), Arc::clone(&m.leases[1])).unwrap();
        let usable = card.usable();
        assert!(!card.wait(usable), "no worker built yet");
        let built = card.init(&class.runtime);
        card.wait(built).unwrap();
        let ran = card.run(job(&class, &case));
        assert_eq!(card.wait(ran).raw, CaseRun::passed());
        let usable = card.usable();
        assert!(card.wait(usable), "a passing case leaves it usable: it is kept");
        let closed = card.close();
        assert!(matches!(card.wait(closed), Some(Ok(_))));
        let usable = card.usable();
        assert!(!card.wait(usable), "closed");
        card.shutdown();
    }

    #[test]
    fn a_worker_a_device_fault_left_unusable_is_not_kept() {
        let m = machine_with(FaultPlan::parse_for_cards("dev=1:launch_fail@1", 2).unwrap());
        let (class, case) = multi_card();
        let mut card = CardThread::spawn(env(&m, 1), Arc::clone(&m.leases[1])).unwrap();
        let built = card.init(&class.runtime);
        card.wait(built).unwrap();
        let ran = card.run(job(&class, &case));
        let raw = card.wait(ran).raw;
        assert_eq!(
            raw.error.as_ref().map(|e| e.class),
            Some(FailureClass::DeviceRuntime),
            "{raw:?}"
        );
        let usable = card.usable();
        assert!(!card.wait(usable), "the fault left the runner unusable");
        let closed = card.close();
        let _ = card.wait(closed);
        card.shutdown();
    }
}
