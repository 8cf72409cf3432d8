//! The recovery state machine of one device runner: its states, its legal transitions, and the
//! proof a recovery needs.
//!
//! This file owns the runner's state and first cause, and emits one [`HealthEvent`] per
//! transition (to the subscriber and to `tracing`). It never calls the driver and never decides
//! *when* to transition: the runner base does ([`crate::runner_base`]).

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::event::{acl_rc, Capability, DrainOutcome, HealthEvent, HealthEventKind, HealthSubscriber};
use crate::arch::Arch;
use crate::driver::DeviceId;
use crate::error::DriverError;

/// The health of one runner.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HealthState {
    /// Runs are admitted.
    Healthy,
    /// A launch or sync error was seen; the drain is in progress. Runs are refused.
    Faulted,
    /// Marked unusable: every run is refused until finalize force-resets the card.
    Unusable,
    /// Finalize is force-resetting and probing the card.
    Resetting,
    /// A probe confirmed the card after a force reset (terminal for this runner).
    Recovered,
    /// Every reset attempt failed to confirm; the card stays unusable in this process (terminal).
    Failed,
}

impl HealthState {
    /// Whether runs are refused in this state (the "unusable flag").
    pub fn refuses_runs(self) -> bool {
        !matches!(self, Self::Healthy | Self::Recovered)
    }

    /// The state's name as events and reports spell it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Healthy => "healthy",
            Self::Faulted => "faulted",
            Self::Unusable => "unusable",
            Self::Resetting => "resetting",
            Self::Recovered => "recovered",
            Self::Failed => "failed",
        }
    }
}

impl fmt::Display for HealthState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A transition the state machine does not allow from its current state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("illegal health transition {action} from state {from}")]
pub struct IllegalTransition {
    /// The state the machine was in (and stays in).
    pub from: HealthState,
    /// The transition that was asked for.
    pub action: &'static str,
}

/// Proof that a post-reset probe confirmed the card. Only the runner base's probe constructs it,
/// so [`Health::recovered`] cannot be reached without one.
#[derive(Debug)]
pub struct ProbeConfirmed {
    pub(crate) attempt: u32,
}

/// The health of one runner on one card: state, first cause, and where events go.
#[derive(Debug)]
pub struct Health {
    device: DeviceId,
    arch: Arch,
    state: HealthState,
    first_cause: Option<DriverError>,
    subscriber: Option<HealthSubscriber>,
}

impl Health {
    /// A healthy runner's health.
    pub fn new(device: DeviceId, arch: Arch, subscriber: Option<HealthSubscriber>) -> Self {
        Self {
            device,
            arch,
            state: HealthState::Healthy,
            first_cause: None,
            subscriber,
        }
    }

    /// The current state.
    pub fn state(&self) -> HealthState {
        self.state
    }

    /// The error that first took the runner out of `healthy`, if any.
    pub fn first_cause(&self) -> Option<DriverError> {
        self.first_cause
    }

    /// Whether runs are refused (the "unusable flag").
    pub fn is_unusable(&self) -> bool {
        self.state.refuses_runs()
    }

    /// The first cause when runs are refused, `None` when they are admitted. Every state that
    /// refuses runs is reached through [`Health::fault`], which records the cause, so a refusing
    /// machine always has one.
    pub fn refusal_cause(&self) -> Option<DriverError> {
        if self.state.refuses_runs() {
            self.first_cause
        } else {
            None
        }
    }

    fn require(&self, ok: bool, action: &'static str) -> Result<(), IllegalTransition> {
        if ok {
            Ok(())
        } else {
            Err(IllegalTransition {
                from: self.state,
                action,
            })
        }
    }

    fn emit(&self, event: HealthEvent) {
        match event.kind {
            HealthEventKind::Recovered { .. } | HealthEventKind::Probe { ok: true, .. } => tracing::info!(
                device = event.device, arch = %event.arch, kind = event.kind_name(),
                "{}", event.detail
            ),
            HealthEventKind::ForceReset { rc: Some(0), .. } => tracing::info!(
                device = event.device, arch = %event.arch, kind = event.kind_name(),
                "{}", event.detail
            ),
            _ => tracing::warn!(
                device = event.device, arch = %event.arch, kind = event.kind_name(),
                "{}", event.detail
            ),
        }
        if let Some(sub) = &self.subscriber {
            sub.notify(&event);
        }
    }

    fn event(&self, kind: HealthEventKind, detail: String) -> HealthEvent {
        HealthEvent::new(self.device, self.arch, kind, detail)
    }

    /// `healthy -> faulted`: a driver error poisoned the context. Emits `poisoned`.
    pub fn fault(&mut self, cause: DriverError) -> Result<(), IllegalTransition> {
        self.require(self.state == HealthState::Healthy, "fault")?;
        self.state = HealthState::Faulted;
        self.first_cause = Some(cause);
        let detail = format!("card {} poisoned: {cause}", self.device);
        self.emit(self.event(HealthEventKind::Poisoned, detail).with_error(cause));
        Ok(())
    }

    /// `faulted -> unusable`, always, whatever the drain said. Emits `marked_unusable`.
    pub fn mark_unusable(&mut self, drain: DrainOutcome) -> Result<(), IllegalTransition> {
        self.require(self.state == HealthState::Faulted, "mark_unusable")?;
        self.state = HealthState::Unusable;
        let drained = match drain {
            DrainOutcome::ReportedSuccess => {
                "the bounded drain reported success, which is not trusted".to_owned()
            }
            DrainOutcome::Failed(e) => format!("the bounded drain failed too ({e})"),
        };
        let mut ev = self.event(
            HealthEventKind::MarkedUnusable { drain: drain.into() },
            format!(
                "card {} marked unusable: {drained}; runs are refused until finalize force-resets it",
                self.device
            ),
        );
        if let Some(cause) = self.first_cause {
            ev = ev.with_error(cause);
        }
        self.emit(ev);
        Ok(())
    }

    /// An SDMA-provisioned unusable card waited `wait` (from the applied op-execute timeout
    /// `op_execute`) before its force reset. Emits `sdma_handoff_wait`; the state is unchanged.
    pub fn sdma_handoff_wait(
        &mut self,
        wait: Duration,
        op_execute: Duration,
    ) -> Result<(), IllegalTransition> {
        self.require(self.state == HealthState::Unusable, "sdma_handoff_wait")?;
        let wait_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX);
        let op_execute_ms = u64::try_from(op_execute.as_millis()).unwrap_or(u64::MAX);
        let detail = format!(
            "card {} provisioned SDMA: waited {wait_ms} ms (max of the floor and op-execute {op_execute_ms} ms + margin) \
             before its one force reset, as its CP-process streams have no retirement fence",
            self.device
        );
        self.emit(self.event(
            HealthEventKind::SdmaHandoffWait {
                wait_ms,
                op_execute_ms,
            },
            detail,
        ));
        Ok(())
    }

    /// `unusable -> resetting`: finalize starts the force-reset attempts. Emits nothing.
    pub fn begin_reset(&mut self) -> Result<(), IllegalTransition> {
        self.require(self.state == HealthState::Unusable, "begin_reset")?;
        self.state = HealthState::Resetting;
        Ok(())
    }

    /// Records one attempt while `resetting`: emits `force_reset` and, when the probe ran,
    /// `probe` (a failed one naming the capability it failed in). `reset_error` is the force
    /// reset's error (`None` when it returned 0).
    pub fn attempt(
        &mut self,
        attempt: u32,
        reset_error: Option<DriverError>,
        probe: Option<Result<(), (DriverError, Capability)>>,
        duration: Duration,
    ) -> Result<(), IllegalTransition> {
        self.require(self.state == HealthState::Resetting, "attempt")?;
        let rc = acl_rc(reset_error);
        let detail = match reset_error {
            None => format!("force reset of card {} attempt {attempt}: rc=0", self.device),
            Some(e) => format!(
                "force reset of card {} attempt {attempt} failed: {e}",
                self.device
            ),
        };
        let mut ev = self.event(
            HealthEventKind::ForceReset {
                attempt,
                rc,
                duration_ms: u64::try_from(duration.as_millis()).unwrap_or(u64::MAX),
            },
            detail,
        );
        if let Some(e) = reset_error {
            ev = ev.with_error(e);
        }
        self.emit(ev);
        if let Some(probe) = probe {
            let ok = probe.is_ok();
            let detail = match probe {
                Ok(()) => format!(
                    "post-reset probe of card {} attempt {attempt} confirmed",
                    self.device
                ),
                Err((e, capability)) => format!(
                    "post-reset probe of card {} attempt {attempt} failed ({capability}): {e}",
                    self.device
                ),
            };
            let mut ev = self.event(HealthEventKind::Probe { attempt, ok }, detail);
            if let Err((e, capability)) = probe {
                ev = ev.with_error(e).with_capability(capability);
            }
            self.emit(ev);
        }
        Ok(())
    }

    /// `resetting -> recovered`, only with a confirmed probe. Clears the unusable flag. Emits
    /// `recovered`.
    pub fn recovered(&mut self, proof: ProbeConfirmed) -> Result<(), IllegalTransition> {
        self.require(self.state == HealthState::Resetting, "recovered")?;
        self.state = HealthState::Recovered;
        let detail = format!(
            "card {} recovered in place: force reset confirmed by the probe of attempt {}",
            self.device, proof.attempt
        );
        self.emit(self.event(
            HealthEventKind::Recovered {
                attempts: proof.attempt,
            },
            detail,
        ));
        Ok(())
    }

    /// `resetting -> failed`: no attempt confirmed. The flag stays set. Emits `reset_failed`.
    pub fn reset_failed(&mut self, attempts: u32) -> Result<(), IllegalTransition> {
        self.require(self.state == HealthState::Resetting, "reset_failed")?;
        self.state = HealthState::Failed;
        let detail = format!(
            "card {} not recovered after {attempts} force-reset attempt(s); it stays unusable in this \
             process: a fresh process is needed",
            self.device
        );
        self.emit(self.event(HealthEventKind::ResetFailed { attempts }, detail));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;

    use super::*;
    use crate::driver::DriverCall;
    use crate::error::codes;
    use crate::health::DrainReport;

    fn machine() -> (Health, mpsc::Receiver<HealthEvent>) {
        let (tx, rx) = mpsc::channel();
        (Health::new(3, Arch::A5, Some(HealthSubscriber::channel(tx))), rx)
    }

    fn cause() -> DriverError {
        DriverError::new(DriverCall::SynchronizeStreamWithTimeout, codes::RT_INTERNAL_ERROR)
    }

    #[test]
    fn a_failed_probe_names_the_capability_it_failed_in() {
        let (mut h, rx) = machine();
        h.fault(cause()).unwrap();
        h.mark_unusable(DrainOutcome::ReportedSuccess).unwrap();
        h.begin_reset().unwrap();
        h.attempt(1, None, Some(Err((cause(), Capability::Sdma))), Duration::ZERO)
            .unwrap();
        let probe = rx
            .try_iter()
            .find(|e| matches!(e.kind, HealthEventKind::Probe { ok: false, .. }))
            .expect("the failed probe's event");
        assert_eq!(probe.capability, Some(Capability::Sdma));
        assert_eq!(probe.code, Some(codes::RT_INTERNAL_ERROR));
        assert!(probe.detail.contains("failed (sdma)"), "{}", probe.detail);
        let json = serde_json::to_value(&probe).unwrap();
        assert_eq!(json["capability"], "sdma");
    }

    #[test]
    fn full_recovery_path_emits_events_in_order() {
        let (mut h, rx) = machine();
        assert!(!h.is_unusable());
        h.fault(cause()).unwrap();
        assert!(h.is_unusable());
        h.mark_unusable(DrainOutcome::Failed(DriverError::new(
            DriverCall::SynchronizeDeviceWithTimeout,
            codes::RT_STREAM_SYNC_TIMEOUT,
        )))
        .unwrap();
        h.begin_reset().unwrap();
        let reset_err = DriverError::new(DriverCall::ResetDeviceForce, codes::RT_DRV_INTERNAL_ERROR);
        h.attempt(1, Some(reset_err), None, Duration::from_millis(4))
            .unwrap();
        h.attempt(2, None, Some(Ok(())), Duration::from_millis(5))
            .unwrap();
        h.recovered(ProbeConfirmed { attempt: 2 }).unwrap();
        assert_eq!(h.state(), HealthState::Recovered);
        assert!(!h.is_unusable());
        assert_eq!(h.first_cause(), Some(cause()));
        let kinds: Vec<_> = rx.try_iter().map(|e| e.kind).collect();
        assert_eq!(
            kinds,
            vec![
                HealthEventKind::Poisoned,
                HealthEventKind::MarkedUnusable {
                    drain: DrainReport::Failed {
                        code: codes::RT_STREAM_SYNC_TIMEOUT
                    }
                },
                HealthEventKind::ForceReset {
                    attempt: 1,
                    rc: Some(507899),
                    duration_ms: 4
                },
                HealthEventKind::ForceReset {
                    attempt: 2,
                    rc: Some(0),
                    duration_ms: 5
                },
                HealthEventKind::Probe { attempt: 2, ok: true },
                HealthEventKind::Recovered { attempts: 2 },
            ]
        );
    }

    #[test]
    fn a_force_reset_failing_outside_the_acl_code_space_has_no_rc() {
        let (mut h, rx) = machine();
        h.fault(cause()).unwrap();
        h.mark_unusable(DrainOutcome::ReportedSuccess).unwrap();
        h.begin_reset().unwrap();
        let missing = DriverError::new(DriverCall::ResetDeviceForce, codes::LOADER_SYMBOL_MISSING);
        h.attempt(1, Some(missing), None, Duration::from_millis(1))
            .unwrap();
        let ev = rx.try_iter().last().unwrap();
        assert_eq!(
            ev.kind,
            HealthEventKind::ForceReset {
                attempt: 1,
                rc: None,
                duration_ms: 1
            }
        );
        assert_eq!(
            ev.code,
            Some(codes::LOADER_SYMBOL_MISSING),
            "the code keeps its space"
        );
        let json = serde_json::to_value(&ev).unwrap();
        assert!(json.get("rc").is_none(), "{json}");
        assert_eq!(json["code"]["space"], "loader");
        assert_eq!(serde_json::from_value::<HealthEvent>(json).unwrap(), ev);
        assert_eq!(acl_rc(None), Some(0));
        assert_eq!(acl_rc(Some(cause())), Some(507000));
        let hal = DriverError::new(DriverCall::HalResMap, codes::HAL_NO_PROCESS);
        assert_eq!(acl_rc(Some(hal)), None);
    }

    #[test]
    fn illegal_transitions_are_errors_and_change_nothing() {
        let (mut h, rx) = machine();
        let e = h.mark_unusable(DrainOutcome::ReportedSuccess).unwrap_err();
        assert_eq!(e.from, HealthState::Healthy);
        assert!(h.begin_reset().is_err());
        assert!(h.attempt(1, None, None, Duration::ZERO).is_err());
        assert!(h.recovered(ProbeConfirmed { attempt: 1 }).is_err());
        assert!(h.reset_failed(1).is_err());
        assert_eq!(h.state(), HealthState::Healthy);
        h.fault(cause()).unwrap();
        assert!(h.fault(cause()).is_err(), "a second fault is not a transition");
        assert!(h.begin_reset().is_err(), "faulted must be marked unusable first");
        h.mark_unusable(DrainOutcome::ReportedSuccess).unwrap();
        h.begin_reset().unwrap();
        h.reset_failed(3).unwrap();
        assert_eq!(h.state(), HealthState::Failed);
        assert!(h.is_unusable(), "a failed reset keeps the flag");
        assert!(h.recovered(ProbeConfirmed { attempt: 4 }).is_err());
        assert_eq!(
            rx.try_iter().count(),
            3,
            "poisoned, marked_unusable, reset_failed"
        );
    }
}
