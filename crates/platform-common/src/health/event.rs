//! The health events of a device runner: what happened to a card, as the state machine emits it,
//! and where the events go.
//!
//! This file owns the event vocabulary (serialised with an `event` tag, so the runner's reports
//! embed an event whole) and the subscriber. It never decides a transition (`machine` does).

use std::fmt;
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::arch::Arch;
use crate::driver::{DeviceId, DriverCall};
use crate::error::{Code, CodeSpace, DriverError};

/// What kind of thing happened to a card. Serialised as the event's `event` field (the name the
/// runner's reports use for every health record).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum HealthEventKind {
    /// A launch, sync or other driver error poisoned the context (`call`/`code` say which).
    Poisoned,
    /// The runner was marked unusable, whatever the bounded drain said.
    MarkedUnusable {
        /// What the drain reported (never trusted).
        drain: DrainReport,
    },
    /// One `aclrtResetDeviceForce` attempt.
    ForceReset {
        /// 1-based attempt number.
        attempt: u32,
        /// The ACL rc of the force reset (0 = success). Absent when it failed with a code of
        /// another space (a missing symbol never reached CANN): the event's `code` carries it,
        /// with its space.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rc: Option<i32>,
        /// How long the whole attempt (drain, reset, probe) took.
        duration_ms: u64,
    },
    /// The post-reset probe of one attempt.
    Probe {
        /// 1-based attempt number.
        attempt: u32,
        /// Whether the probe confirmed the card.
        ok: bool,
    },
    /// A probe confirmed the card: the unusable flag is cleared.
    Recovered {
        /// Attempts it took (the number of the attempt whose probe confirmed; serialised as
        /// `attempt`, as every reset step's number is).
        #[serde(rename = "attempt")]
        attempts: u32,
    },
    /// Before the one force-reset attempt of an SDMA-provisioned card, the runner waited the
    /// handoff window `max(10 s, applied op-execute timeout + 5 s)` (a sim scale on the
    /// simulator): the CP-process streams have no retirement fence (hw-native-sys/simpler
    /// `device_runner.cpp`, `finalize`; #1664).
    SdmaHandoffWait {
        /// How long it waited.
        wait_ms: u64,
        /// The applied op-execute timeout it was computed from.
        op_execute_ms: u64,
    },
    /// No attempt confirmed: the card stays unusable in this process.
    ResetFailed {
        /// Attempts made (the number of the last one; serialised as `attempt`).
        #[serde(rename = "attempt")]
        attempts: u32,
    },
}

/// Which capability of a card a failure was met in: its compute path (streams, memory, kernels)
/// or its SDMA engine (a warm-up, a copy or the SDMA probe). A compute-only probe passes a card
/// whose SDMA engine is wedged (hw-native-sys/pypto-lib #1240), so a card's health says which one
/// failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Capability {
    /// Streams, device memory, kernel launches.
    #[default]
    Compute,
    /// The SDMA engine.
    Sdma,
}

impl Capability {
    /// The name as reports spell it (`compute`, `sdma`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Compute => "compute",
            Self::Sdma => "sdma",
        }
    }
}

impl fmt::Display for Capability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One health event of one card.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HealthEvent {
    /// The card.
    pub device: DeviceId,
    /// The runner's arch.
    pub arch: Arch,
    /// What happened (flattened: `"event": "force_reset", "attempt": 1, ...`).
    #[serde(flatten)]
    pub kind: HealthEventKind,
    /// The driver call involved, when one is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<DriverCall>,
    /// The raw code involved, when one is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<Code>,
    /// A one-line human explanation.
    pub detail: String,
    /// When, in milliseconds since the Unix epoch.
    pub unix_ms: u64,
    /// The capability a failure was met in, when the event is one and the runner knows it (a
    /// failed SDMA probe says `sdma`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capability: Option<Capability>,
}

impl HealthEvent {
    /// An event of `kind` on `device`, stamped now.
    pub fn new(device: DeviceId, arch: Arch, kind: HealthEventKind, detail: impl Into<String>) -> Self {
        Self {
            device,
            arch,
            kind,
            call: None,
            code: None,
            detail: detail.into(),
            unix_ms: unix_ms_now(),
            capability: None,
        }
    }

    /// The same event naming the capability its failure was met in.
    pub fn with_capability(mut self, capability: Capability) -> Self {
        self.capability = Some(capability);
        self
    }

    /// The same event naming the driver error involved.
    pub fn with_error(mut self, error: DriverError) -> Self {
        self.call = Some(error.call);
        self.code = Some(error.code);
        self
    }

    /// The `event` tag as serialised (`poisoned`, `force_reset`, ...).
    pub fn kind_name(&self) -> &'static str {
        match self.kind {
            HealthEventKind::Poisoned => "poisoned",
            HealthEventKind::MarkedUnusable { .. } => "marked_unusable",
            HealthEventKind::ForceReset { .. } => "force_reset",
            HealthEventKind::Probe { .. } => "probe",
            HealthEventKind::Recovered { .. } => "recovered",
            HealthEventKind::ResetFailed { .. } => "reset_failed",
            HealthEventKind::SdmaHandoffWait { .. } => "sdma_handoff_wait",
        }
    }
}

fn unix_ms_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Where a runner's health events go (besides `tracing`). Cheap to clone.
#[derive(Clone)]
pub struct HealthSubscriber(Arc<dyn Fn(&HealthEvent) + Send + Sync>);

impl HealthSubscriber {
    /// Calls `f` with every event, on the runner's thread.
    pub fn new(f: impl Fn(&HealthEvent) + Send + Sync + 'static) -> Self {
        Self(Arc::new(f))
    }

    /// Sends a copy of every event down `tx`; a closed receiver is ignored (events still go to
    /// `tracing`).
    pub fn channel(tx: Sender<HealthEvent>) -> Self {
        Self::new(move |e| {
            let _ = tx.send(e.clone());
        })
    }

    /// Delivers one event.
    pub fn notify(&self, event: &HealthEvent) {
        (self.0)(event);
    }
}

impl fmt::Debug for HealthSubscriber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("HealthSubscriber(..)")
    }
}

/// What the bounded device drain returned when a fault was handled. Logged, never trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DrainOutcome {
    /// The drain reported success (possibly a false negative: the card may still be poisoned).
    ReportedSuccess,
    /// The drain failed, as it does on a poisoned context.
    Failed(DriverError),
}

/// What the bounded drain reported when a runner was marked unusable, as events carry it
/// (`"reported_success"`, or `{"failed": {"code": {"space": "acl", "raw": 507046}}}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DrainReport {
    /// Success: possibly a false negative (a2a3), so not trusted.
    ReportedSuccess,
    /// An error, as on a poisoned context.
    Failed {
        /// The drain's code (a5 507046, a2a3 507015 on a poisoned context).
        code: Code,
    },
}

impl From<DrainOutcome> for DrainReport {
    fn from(d: DrainOutcome) -> Self {
        match d {
            DrainOutcome::ReportedSuccess => Self::ReportedSuccess,
            DrainOutcome::Failed(e) => Self::Failed { code: e.code },
        }
    }
}

/// The ACL rc a report shows for a call's outcome: `Some(0)` for success, the raw code of an
/// ACL-space error, `None` for an error of another space (a HAL rc or a loader code is not an
/// ACL rc; the error itself carries it with its space).
pub(crate) fn acl_rc(error: Option<DriverError>) -> Option<i32> {
    match error {
        None => Some(0),
        Some(e) if e.code.space == CodeSpace::Acl => Some(e.code.raw),
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::codes;

    fn cause() -> DriverError {
        DriverError::new(DriverCall::SynchronizeStreamWithTimeout, codes::RT_INTERNAL_ERROR)
    }

    #[test]
    fn events_serialise_with_a_flat_kind() {
        let ev = HealthEvent::new(
            1,
            Arch::A2a3,
            HealthEventKind::ForceReset {
                attempt: 2,
                rc: Some(0),
                duration_ms: 17,
            },
            "x",
        )
        .with_error(cause());
        let json = serde_json::to_value(&ev).unwrap();
        assert_eq!(json["event"], "force_reset");
        assert_eq!(json["attempt"], 2);
        assert_eq!(json["rc"], 0);
        assert_eq!(json["duration_ms"], 17);
        assert_eq!(json["call"], "aclrtSynchronizeStreamWithTimeout");
        assert_eq!(json["code"]["raw"], 507000);
        let back: HealthEvent = serde_json::from_value(json).unwrap();
        assert_eq!(back, ev);
        let marked = HealthEvent::new(
            1,
            Arch::A2a3,
            HealthEventKind::MarkedUnusable {
                drain: DrainReport::ReportedSuccess,
            },
            "m",
        );
        let json = serde_json::to_value(&marked).unwrap();
        assert_eq!(json["event"], "marked_unusable");
        assert_eq!(json["drain"], "reported_success");
        let failed = HealthEvent::new(
            1,
            Arch::A5,
            HealthEventKind::MarkedUnusable {
                drain: DrainReport::Failed {
                    code: codes::RT_STREAM_SYNC_TIMEOUT,
                },
            },
            "m",
        );
        let json = serde_json::to_value(&failed).unwrap();
        assert_eq!(json["drain"]["failed"]["code"]["raw"], 507046);
        assert_eq!(json["drain"]["failed"]["code"]["space"], "acl");
        assert_eq!(serde_json::from_value::<HealthEvent>(json).unwrap(), failed);
        let plain = HealthEvent::new(1, Arch::A5, HealthEventKind::Recovered { attempts: 2 }, "back");
        let text = serde_json::to_string(&plain).unwrap();
        assert!(text.contains(r#""event":"recovered""#), "{text}");
        assert!(text.contains(r#""attempt":2"#), "{text}");
        assert!(!text.contains("code"), "{text}");
        assert_eq!(serde_json::from_str::<HealthEvent>(&text).unwrap(), plain);
    }
}
