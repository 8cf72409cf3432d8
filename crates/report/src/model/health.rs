//! A card's health record in the report: the device runner's own [`HealthEvent`], embedded whole,
//! or one of the few events that only the runner sees.
//!
//! This file owns `devices_health` in `report.json` and the journal's `health` events. There is
//! one vocabulary of health: the platform's state machine names what happens inside a device
//! runner (`poisoned`, `marked_unusable`, `force_reset`, `probe`, `recovered`, `reset_failed`)
//! and this file adds only what lanes and the dispatcher know ([`RunnerEventKind`]: a fresh
//! process, a quarantine, a failed or timed-out init, a preflight's verdict). It never translates one into the other and never
//! decides when an event happens.

use platform_common::driver::DriverCall;
use platform_common::health::{Capability, HealthEvent, HealthEventKind};
use platform_common::Code;
use serde::{Deserialize, Serialize};

/// The health events only the runner sees (never a device runner's state machine). Adding one is
/// one line here; the console and the timeline show an event they have no special form for by
/// its name and detail.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, strum::IntoStaticStr, strum::EnumIter,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum RunnerEventKind {
    /// A replacement lane process started on the card (after an unclean exit, or to re-run a
    /// poison sink).
    FreshProcess,
    /// The card was taken out of the run.
    Quarantined,
    /// Initialising a worker on the card failed (a card event, not an attempt of any case).
    InitFailed,
    /// Initialising a worker on the card took longer than `--init-timeout`: its lane was ended
    /// (a card event, not an attempt of any case).
    InitTimedOut,
    /// The card's health record said quarantined (by an earlier run) and its preflight (init and
    /// probe in a lane of its own, before any work) passed: the record was cleared and the card
    /// gets work.
    PreflightOk,
    /// The card's health record said quarantined and its preflight failed: the card was taken out
    /// of the run before any work went to it.
    QuarantinedAtStart,
}

impl RunnerEventKind {
    /// The name as the report spells it.
    pub fn name(self) -> &'static str {
        self.into()
    }
}

/// One health event only the runner sees.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunnerEvent {
    /// What happened.
    #[serde(rename = "event")]
    pub kind: RunnerEventKind,
    /// The driver call involved, when one is (a failed init).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<DriverCall>,
    /// The code involved, with its space, when one is (a failed init).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<Code>,
    /// A one-line human explanation.
    pub detail: String,
    /// The card's capability a failure was met in, when one is known (a failed init: `sdma`
    /// for an SDMA warm-up, `compute` for the rest).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capability: Option<Capability>,
}

/// What happened to a card: a device runner's event, or one only the runner sees. Serialised
/// flat into the record; both forms carry `event` (their name), `detail` and, when one is
/// involved, `call` and `code`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum CardEvent {
    /// An event of a device runner's state machine, as the platform emitted it (with its card,
    /// arch, Unix time and the fields of its kind).
    Device(HealthEvent),
    /// An event of a lane or the dispatcher.
    Runner(RunnerEvent),
}

/// One health event of a card, in the report and the journal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HealthRecord {
    /// When, in ms since the run started (a device event: the time it happened in the lane).
    pub at_ms: u64,
    /// What happened.
    #[serde(flatten)]
    pub event: CardEvent,
    /// The case running when it happened (`Class::case`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case: Option<String>,
    /// The lane process it happened in, or the one it concerns (a fresh process).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
}

impl HealthRecord {
    /// A device runner's event at `at_ms` (ms since the run started).
    pub fn device(at_ms: u64, event: HealthEvent) -> Self {
        Self {
            at_ms,
            event: CardEvent::Device(event),
            case: None,
            pid: None,
        }
    }

    /// An event only the runner sees, at `at_ms`, with no call or code.
    pub fn runner(at_ms: u64, kind: RunnerEventKind, detail: impl Into<String>) -> Self {
        Self {
            at_ms,
            event: CardEvent::Runner(RunnerEvent {
                kind,
                call: None,
                code: None,
                detail: detail.into(),
                capability: None,
            }),
            case: None,
            pid: None,
        }
    }

    /// Sets the call and code of a runner event (a device event carries its own).
    pub fn with_error(mut self, call: Option<DriverCall>, code: Option<Code>) -> Self {
        if let CardEvent::Runner(r) = &mut self.event {
            r.call = call;
            r.code = code;
        }
        self
    }

    /// Sets the capability of a runner event (a device event carries its own).
    pub fn with_capability(mut self, capability: Option<Capability>) -> Self {
        if let CardEvent::Runner(r) = &mut self.event {
            r.capability = capability;
        }
        self
    }

    /// The capability a failure was met in, when the event names one.
    pub fn capability(&self) -> Option<Capability> {
        match &self.event {
            CardEvent::Device(e) => e.capability,
            CardEvent::Runner(r) => r.capability,
        }
    }

    /// Sets `case`.
    pub fn with_case(mut self, case: Option<String>) -> Self {
        self.case = case;
        self
    }

    /// Sets `pid`.
    pub fn with_pid(mut self, pid: u32) -> Self {
        self.pid = Some(pid);
        self
    }

    /// The event's name as the report spells it (`poisoned`, `fresh_process`, ...).
    pub fn name(&self) -> &'static str {
        match &self.event {
            CardEvent::Device(e) => e.kind_name(),
            CardEvent::Runner(r) => r.kind.name(),
        }
    }

    /// The device runner's kind, when this is a device event.
    pub fn device_kind(&self) -> Option<&HealthEventKind> {
        match &self.event {
            CardEvent::Device(e) => Some(&e.kind),
            CardEvent::Runner(_) => None,
        }
    }

    /// The runner's kind, when this is a runner event.
    pub fn runner_kind(&self) -> Option<RunnerEventKind> {
        match &self.event {
            CardEvent::Device(_) => None,
            CardEvent::Runner(r) => Some(r.kind),
        }
    }

    /// Whether this is the runner's event `kind`.
    pub fn is(&self, kind: RunnerEventKind) -> bool {
        self.runner_kind() == Some(kind)
    }

    /// Whether this event took its card out of the run (`quarantined`, `quarantined_at_start`).
    pub fn is_quarantine(&self) -> bool {
        self.is(RunnerEventKind::Quarantined) || self.is(RunnerEventKind::QuarantinedAtStart)
    }

    /// The code involved, with its space.
    pub fn code(&self) -> Option<Code> {
        match &self.event {
            CardEvent::Device(e) => e.code,
            CardEvent::Runner(r) => r.code,
        }
    }

    /// The driver call involved.
    pub fn call(&self) -> Option<DriverCall> {
        match &self.event {
            CardEvent::Device(e) => e.call,
            CardEvent::Runner(r) => r.call,
        }
    }

    /// The one-line explanation.
    pub fn detail(&self) -> &str {
        match &self.event {
            CardEvent::Device(e) => &e.detail,
            CardEvent::Runner(r) => &r.detail,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use platform_common::error::codes;
    use platform_common::health::DrainReport;
    use platform_common::{Arch, DriverError};
    use strum::IntoEnumIterator;

    fn round_trip(r: &HealthRecord) -> serde_json::Value {
        let json = serde_json::to_value(r).unwrap();
        assert_eq!(
            &serde_json::from_value::<HealthRecord>(json.clone()).unwrap(),
            r,
            "{json}"
        );
        json
    }

    #[test]
    fn a_device_event_is_embedded_whole_with_its_typed_code() {
        let ev = HealthEvent::new(0, Arch::A5, HealthEventKind::Poisoned, "poisoned")
            .with_error(DriverError::new(DriverCall::HalResMap, codes::HAL_NO_PROCESS));
        let r = HealthRecord::device(12, ev)
            .with_case(Some("C::a".into()))
            .with_pid(7);
        let json = round_trip(&r);
        assert_eq!(json["event"], "poisoned");
        assert_eq!(json["at_ms"], 12);
        assert_eq!(json["code"], serde_json::json!({"space": "hal", "raw": 62}));
        assert_eq!(json["call"], "halResMap");
        assert_eq!(json["case"], "C::a");
        assert_eq!(json["pid"], 7);
        assert_eq!(r.name(), "poisoned");
        assert_eq!(r.code(), Some(codes::HAL_NO_PROCESS));
        assert_eq!(r.runner_kind(), None);
    }

    #[test]
    fn every_device_kind_keeps_its_fields_and_reads_back() {
        let kinds = [
            HealthEventKind::MarkedUnusable {
                drain: DrainReport::ReportedSuccess,
            },
            HealthEventKind::ForceReset {
                attempt: 1,
                rc: Some(0),
                duration_ms: 41,
            },
            HealthEventKind::Probe { attempt: 1, ok: true },
            HealthEventKind::Recovered { attempts: 1 },
            HealthEventKind::ResetFailed { attempts: 3 },
        ];
        for kind in kinds {
            let r = HealthRecord::device(5, HealthEvent::new(1, Arch::A2a3, kind.clone(), "d"));
            let json = round_trip(&r);
            assert_eq!(json["event"], r.name(), "{json}");
            assert!(
                json.get("attempt").is_some() || json.get("drain").is_some(),
                "{json}"
            );
        }
    }

    #[test]
    fn every_runner_kind_round_trips_under_its_serde_name() {
        for kind in RunnerEventKind::iter() {
            let r = HealthRecord::runner(9, kind, "why")
                .with_pid(3)
                .with_error(Some(DriverCall::SetDevice), Some(codes::RT_DEV_SETUP_ERROR));
            let json = round_trip(&r);
            assert_eq!(json["event"], kind.name(), "strum and serde agree on the name");
            assert_eq!(json["code"], serde_json::json!({"space": "acl", "raw": 507033}));
            assert!(r.is(kind));
            assert_eq!(r.detail(), "why");
        }
        let plain = HealthRecord::runner(1, RunnerEventKind::Quarantined, "dead card");
        let text = serde_json::to_string(&plain).unwrap();
        assert!(!text.contains("code") && !text.contains("call"), "{text}");
    }
}
