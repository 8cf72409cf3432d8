//! A run on card 0 with `sdma_fault@K` on both arches: the SDMA case whose copy faulted is the only flaky
//! case (failed with 507015 at its SDMA stream's sync, passed on its retry), every other case
//! passed at its one attempt, and card 0's story has the SDMA handoff wait before its one force
//! reset, which recovered the card.

mod common;

use common::*;
use platform_common::error::codes;
use platform_common::FailureClass;
use runner::report::model::{AttemptOutcome, Outcome};

#[test]
fn an_sdma_fault_makes_its_case_flaky_and_touches_no_other_case() {
    for arch in ["a5", "a2a3"] {
        let sb = Sandbox::new();
        let extra = ["--faults", "dev=0:sdma_fault@1"];
        let (ids, run) = sb.list_and_run(arch, "0", &["SdmaCopy", "VectorAdd"], &extra);
        let r = run.consistent_report(0);
        assert_eq!(r.summary.total as usize, ids.len(), "{arch}");
        let flaky: Vec<_> = r.cases.iter().filter(|c| c.outcome == Outcome::Flaky).collect();
        assert_eq!(flaky.len(), 1, "{arch}: one flaky case: {:?}", r.summary);
        let t = flaky[0];
        assert!(t.id.starts_with("SdmaCopy::"), "{arch}: {}", t.id);
        assert_eq!(
            t.attempts.iter().map(|a| a.outcome).collect::<Vec<_>>(),
            [AttemptOutcome::Failed, AttemptOutcome::Passed],
            "{arch}: {}",
            t.id
        );
        let first = &t.attempts[0];
        assert_eq!(first.device, Some(0), "{arch}");
        let err = first.error.as_ref().unwrap();
        assert_eq!(err.class, FailureClass::DeviceRuntime, "{arch}: {err}");
        assert_eq!(err.code, Some(codes::RT_AICORE_EXCEPTION), "{arch}: {err}");
        assert_others_passed_once(&r, &ids, &t.id);
        let h0 = health(&r, 0);
        let at = |step: &str| h0.iter().position(|s| *s == step);
        let (wait, reset) = (at("sdma_handoff_wait"), at("force_reset"));
        assert!(wait.is_some() && wait < reset, "{arch}: {h0:?}");
        assert_eq!(
            h0.iter().filter(|s| **s == "force_reset").count(),
            1,
            "{arch}: {h0:?}"
        );
        assert!(at("recovered").is_some(), "{arch}: {h0:?}");
        assert!(
            run.stdout.contains("SDMA handoff wait"),
            "{arch}: the console shows the wait:\n{}",
            run.stdout
        );
    }
}
