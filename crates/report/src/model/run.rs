//! The run as a whole: its identity, the six counts, the partitions of a merged report, a stress
//! run's iterations, and `report.json`'s top level.
//!
//! This file owns `report.json`'s run-level fields and the run's start time format (RFC 3339 UTC,
//! milliseconds, from `humantime`). It never collects attempts (the builder does) and never
//! writes a file.

use std::collections::BTreeMap;
use std::fmt;
use std::time::SystemTime;

use platform_common::driver::{DeviceId, DriverInfo};
use platform_common::Arch;
use serde::{Deserialize, Serialize};

use super::attempt::CaseReport;
use super::health::HealthRecord;
use super::outcome::{FlakyResult, Outcome};
use super::verdict::verdict;

/// Which cards a run used: simulated or real.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Platform {
    /// Simulated cards.
    Sim,
    /// Real cards through CANN.
    Onboard,
}

impl Platform {
    /// The name as the CLI and the report spell it.
    pub fn name(self) -> &'static str {
        match self {
            Platform::Sim => "sim",
            Platform::Onboard => "onboard",
        }
    }
}

impl fmt::Display for Platform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The signal that interrupted a run (`report.json`'s `interrupted`, spelled as the signal).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Interruption {
    /// SIGINT (Ctrl-C): exit status 130.
    #[serde(rename = "SIGINT")]
    Sigint,
    /// SIGTERM: exit status 143.
    #[serde(rename = "SIGTERM")]
    Sigterm,
}

impl Interruption {
    /// The interruption of signal number `sig`, if it is one.
    pub fn from_signal(sig: i32) -> Option<Self> {
        match sig {
            2 => Some(Self::Sigint),
            15 => Some(Self::Sigterm),
            _ => None,
        }
    }

    /// The signal's number.
    pub fn signal(self) -> i32 {
        match self {
            Self::Sigint => 2,
            Self::Sigterm => 15,
        }
    }

    /// The signal's name (`SIGINT`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Sigint => "SIGINT",
            Self::Sigterm => "SIGTERM",
        }
    }

    /// The exit status of a run it interrupted: 128 + the signal's number, whatever the verdicts.
    pub fn exit_code(self) -> u8 {
        128 + self.signal() as u8
    }

    /// The `skip_reason` of every case it left without a verdict.
    pub fn skip_reason(self) -> String {
        format!("run interrupted by {}", self.name())
    }
}

impl fmt::Display for Interruption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The six outcome counts and their total.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of cases; the six counts add up to it.
    pub total: u64,
    /// Cases `passed`.
    pub passed: u64,
    /// Cases `failed`.
    pub failed: u64,
    /// Cases `flaky`.
    pub flaky: u64,
    /// Cases `skipped`.
    pub skipped: u64,
    /// Cases `timed_out`.
    pub timed_out: u64,
    /// Cases `crashed`.
    pub crashed: u64,
}

impl Summary {
    /// Counts the cases' outcomes.
    pub fn from_cases(cases: &[CaseReport]) -> Self {
        let mut s = Summary::default();
        for c in cases {
            s.add(c.outcome);
        }
        s
    }

    /// Counts one more case.
    pub fn add(&mut self, outcome: Outcome) {
        self.total += 1;
        *self.count_mut(outcome) += 1;
    }

    /// The count of one outcome.
    pub fn count(&self, outcome: Outcome) -> u64 {
        match outcome {
            Outcome::Passed => self.passed,
            Outcome::Failed => self.failed,
            Outcome::Flaky => self.flaky,
            Outcome::Skipped => self.skipped,
            Outcome::TimedOut => self.timed_out,
            Outcome::Crashed => self.crashed,
        }
    }

    fn count_mut(&mut self, outcome: Outcome) -> &mut u64 {
        match outcome {
            Outcome::Passed => &mut self.passed,
            Outcome::Failed => &mut self.failed,
            Outcome::Flaky => &mut self.flaky,
            Outcome::Skipped => &mut self.skipped,
            Outcome::TimedOut => &mut self.timed_out,
            Outcome::Crashed => &mut self.crashed,
        }
    }

    /// Whether the six counts add up to `total`.
    pub fn is_consistent(&self) -> bool {
        Outcome::ALL.iter().map(|o| self.count(*o)).sum::<u64>() == self.total
    }

    /// Whether any verdict is failed, timed out or crashed (exit status 1).
    pub fn has_failures(&self) -> bool {
        self.failed + self.timed_out + self.crashed > 0
    }
}

/// The driver a run used, as the report shows it.
pub type DriverReport = DriverInfo;

/// One partition joined into a merged report (empty for a single run).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionReport {
    /// The partition's run id.
    pub run_id: String,
    /// The directory its report was read from.
    pub source: String,
    /// Its cards.
    pub devices: Vec<DeviceId>,
    /// When it started.
    pub started_at: String,
    /// Its wall time.
    pub duration_ms: u64,
    /// Its own summary.
    pub summary: Summary,
}

/// A fault rule of the run's plan that did not fire on one of its cards by the end of the run
/// (`faults_unfired` in `report.json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnfiredFault {
    /// The rule as the plan's canonical form writes it (`dev=0:op_timeout@50`, `dev=*:crash@3`).
    pub rule: String,
    /// The card it did not fire on.
    pub card: DeviceId,
    /// Why, in words (`the card made 10 case launch(es)`).
    pub detail: String,
}

/// `report.json`: one run (or several merged).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunReport {
    /// `a5` or `a2a3`.
    pub arch: Arch,
    /// `sim` or `onboard`.
    pub platform: Platform,
    /// Which driver and which library.
    pub driver: DriverReport,
    /// The cards the run held.
    pub devices: Vec<DeviceId>,
    /// Each held card's physical id (key: the card number, as in `devices_health`), for the
    /// cards whose number under `ASCEND_RT_VISIBLE_DEVICES` is not their physical id; absent
    /// when every card's number is its physical id.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub devices_physical: BTreeMap<String, u32>,
    /// The run's id (also the default report directory's name).
    #[serde(default)]
    pub run_id: String,
    /// Start time, RFC 3339 UTC.
    #[serde(default)]
    pub started_at: String,
    /// Wall time of the whole run.
    #[serde(default)]
    pub duration_ms: u64,
    /// What a flaky case counted as.
    #[serde(default)]
    pub flaky_result: FlakyResult,
    /// The six counts and their total, derived from `cases`.
    pub summary: Summary,
    /// Every selected case, in selection order.
    pub cases: Vec<CaseReport>,
    /// Per card (key: the card number, or `<run_id>/<card>` in a merged report), its health events
    /// in order.
    pub devices_health: BTreeMap<String, Vec<HealthRecord>>,
    /// The partitions a merged report joined; absent for a single run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub partitions: Vec<PartitionReport>,
    /// The signal that ended the run early (`"SIGINT"`, `"SIGTERM"`); absent for a run that went
    /// to its end. Every case it left without a verdict is `skipped`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<Interruption>,
    /// The fault rules that did not fire by the end of the run, per card (empty without a plan,
    /// and on platforms that cannot tell).
    #[serde(default)]
    pub faults_unfired: Vec<UnfiredFault>,
    /// A stress run's iterations and each case across them (`--stress-count`,
    /// `--stress-duration`); absent for a single run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stress: Option<StressReport>,
}

impl RunReport {
    /// Exit status the run calls for: 130 / 143 when a signal interrupted it, whatever the
    /// verdicts; else 0 when every verdict is passed, flaky or skipped, 1 otherwise. (Usage errors,
    /// exit 2, never reach a report.)
    pub fn exit_code(&self) -> u8 {
        match self.interrupted {
            Some(i) => i.exit_code(),
            None => u8::from(self.summary.has_failures()),
        }
    }

    /// Cases with the given outcome, in order.
    pub fn cases_with(&self, outcome: Outcome) -> impl Iterator<Item = &CaseReport> {
        self.cases.iter().filter(move |c| c.outcome == outcome)
    }

    /// Recomputes every case's outcome from its attempts and the summary from the cases.
    pub fn rederive(&mut self) {
        for c in &mut self.cases {
            c.outcome = verdict(&c.attempts, c.skip_reason.as_deref(), self.flaky_result);
        }
        self.summary = Summary::from_cases(&self.cases);
    }
}

/// `report.json`'s `stress`: each iteration, and each case across them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StressReport {
    /// The iterations, in order.
    pub iterations: Vec<StressIteration>,
    /// Every selected case, in selection order.
    pub cases: Vec<StressCase>,
}

/// One iteration of a stress run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StressIteration {
    /// Its number, from 1.
    pub iteration: u32,
    /// Its own report directory, relative to the stress run's (`iteration-1`).
    pub report_dir: String,
    /// When it started, RFC 3339 UTC.
    pub started_at: String,
    /// Its wall time.
    pub duration_ms: u64,
    /// Its own summary.
    pub summary: Summary,
}

/// One case across a stress run's iterations.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StressCase {
    /// `Class::case`.
    pub id: String,
    /// Its verdict in each iteration, in order.
    pub outcomes: Vec<Outcome>,
    /// The iterations whose verdict was failed, timed out or crashed.
    pub failed: u32,
    /// The iterations whose verdict was flaky (passed on a retry).
    pub flaky: u32,
    /// Per card (key: the card number), how many of the case's attempts failed, timed out or
    /// crashed on it, over every iteration (a retried attempt counts too).
    pub devices: BTreeMap<String, u32>,
}

/// The run's identity and setting, known when it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunInfo {
    /// The arch.
    pub arch: Arch,
    /// The platform.
    pub platform: Platform,
    /// The driver.
    pub driver: DriverReport,
    /// The cards held.
    pub devices: Vec<DeviceId>,
    /// Each held card's physical id, keyed as `devices_health` is, where it differs from the
    /// card's number (under `ASCEND_RT_VISIBLE_DEVICES`); empty otherwise.
    pub devices_physical: BTreeMap<String, u32>,
    /// The run's id.
    pub run_id: String,
    /// Start time, RFC 3339 UTC (see [`rfc3339_utc`]).
    pub started_at: String,
}

/// Formats a time as RFC 3339 UTC with millisecond precision (`2024-05-01T12:00:00.000Z`).
pub fn rfc3339_utc(t: SystemTime) -> String {
    humantime::format_rfc3339_millis(t).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::UNIX_EPOCH;

    #[test]
    fn rfc3339_formats_known_instants() {
        use std::time::Duration;
        assert_eq!(rfc3339_utc(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let t = UNIX_EPOCH + Duration::from_millis(951_827_696_789); // 2000-02-29T12:34:56.789Z
        assert_eq!(rfc3339_utc(t), "2000-02-29T12:34:56.789Z");
        let t = UNIX_EPOCH + Duration::from_secs(1_735_689_599); // 2024-12-31T23:59:59Z
        assert_eq!(rfc3339_utc(t), "2024-12-31T23:59:59.000Z");
    }

    /// Step 8: the exit status follows the final verdicts (DESIGN section 3 "exit status").
    #[test]
    fn exit_status_table() {
        #[rustfmt::skip]
        let rows: &[(Outcome, u8)] = &[
            (Outcome::Passed, 0),
            (Outcome::Flaky, 0),
            (Outcome::Skipped, 0),
            (Outcome::Failed, 1),
            (Outcome::TimedOut, 1),
            (Outcome::Crashed, 1),
        ];
        for &(outcome, code) in rows {
            let mut summary = Summary::default();
            summary.add(Outcome::Passed);
            summary.add(outcome);
            assert!(summary.is_consistent());
            assert_eq!(u8::from(summary.has_failures()), code, "a {outcome} verdict");
            assert_eq!(summary.count(outcome), 1 + u64::from(outcome == Outcome::Passed));
        }
        assert_eq!(
            u8::from(Summary::default().has_failures()),
            0,
            "an empty run passes"
        );
    }

    #[test]
    fn interruptions_spell_their_signal_and_exit_128_plus_it() {
        for (i, sig, name, code) in [
            (Interruption::Sigint, 2, "SIGINT", 130),
            (Interruption::Sigterm, 15, "SIGTERM", 143),
        ] {
            assert_eq!(Interruption::from_signal(sig), Some(i));
            assert_eq!(serde_json::to_value(i).unwrap(), name);
            assert_eq!(i.exit_code(), code);
            assert_eq!(i.skip_reason(), format!("run interrupted by {name}"));
        }
        assert_eq!(Interruption::from_signal(9), None);
    }
}
