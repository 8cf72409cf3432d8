//! Class fixtures at run time: the lane's host data ([`HostFixtures`], built once per lane per
//! class) and what each setup step tells the journal ([`FixtureNote`]).
//!
//! The host part runs at the first case of its class in the lane, inside that case's attempt (the
//! case timeout bounds it), and is kept for the lane's life; its failure (an error or a panic) is
//! kept too, so every case of the class in that lane fails with class `infrastructure`: the first
//! with the reason, the others with "setup of class X failed, see CASE". The device part belongs
//! to the worker and is the executor's (`super::run`). This file never touches a device.

use std::collections::HashMap;

use platform_common::{Arch, FailureClass};

use super::panic;
use crate::case::{stable_hash, ClassSpec, FixtureData, SetupInfo};
use crate::report::model::{ErrorReport, FixturePart};

/// A fixture setup step, for the journal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FixtureNote {
    /// The class.
    pub class: String,
    /// Host data or device resources.
    pub part: FixturePart,
    /// The case it ran for.
    pub case: String,
    /// Why it failed, if it did.
    pub error: Option<String>,
}

/// One class's host data in this lane.
#[derive(Debug, Clone)]
enum Slot {
    Ready(FixtureDataDebug),
    Failed { first_case: String },
}

/// Fixture data with a `Debug` that names nothing inside.
#[derive(Clone)]
struct FixtureDataDebug(FixtureData);

impl std::fmt::Debug for FixtureDataDebug {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FixtureData")
    }
}

/// The host data of every class with a fixture that ran in this lane.
#[derive(Debug, Default)]
pub struct HostFixtures {
    slots: HashMap<String, Slot>,
}

/// What a case gets of its class's host fixture.
#[derive(Debug)]
pub struct HostFixture {
    /// The data (`None`: the class has no fixture), or the attempt's failure.
    pub data: Result<Option<FixtureData>, ErrorReport>,
    /// The setup step that ran for this case, if one did.
    pub note: Option<FixtureNote>,
}

impl HostFixtures {
    /// The host data of `class` for its case `id` on `arch`: built at the class's first case in
    /// this lane (a panic in the setup is its failure), then kept.
    pub fn get(&mut self, class: &ClassSpec, id: &str, arch: Arch) -> HostFixture {
        let Some(fixture) = &class.fixture else {
            return HostFixture {
                data: Ok(None),
                note: None,
            };
        };
        match self.slots.get(&class.name) {
            Some(Slot::Ready(d)) => {
                return HostFixture {
                    data: Ok(Some(d.0.clone())),
                    note: None,
                }
            }
            Some(Slot::Failed { first_case, .. }) => {
                return HostFixture {
                    data: Err(ErrorReport::new(
                        FailureClass::Infrastructure,
                        format!("setup of class {} failed, see {first_case}", class.name),
                    )),
                    note: None,
                }
            }
            None => {}
        }
        let info = SetupInfo {
            arch,
            class: class.name.clone(),
            seed: stable_hash(&class.name),
        };
        let built = match panic::catch(|| (fixture.host)(&info)) {
            Ok(Ok(d)) => Ok(d),
            Ok(Err(e)) => Err(e.to_string()),
            Err(p) => Err(p.to_string().replacen("the body", "the setup", 1)),
        };
        let note = |error: Option<String>| FixtureNote {
            class: class.name.clone(),
            part: FixturePart::Host,
            case: id.to_owned(),
            error,
        };
        match built {
            Ok(d) => {
                self.slots
                    .insert(class.name.clone(), Slot::Ready(FixtureDataDebug(d.clone())));
                HostFixture {
                    data: Ok(Some(d)),
                    note: Some(note(None)),
                }
            }
            Err(reason) => {
                tracing::warn!(class = %class.name, case = id, "fixture setup failed: {reason}");
                self.slots.insert(
                    class.name.clone(),
                    Slot::Failed {
                        first_case: id.to_owned(),
                    },
                );
                HostFixture {
                    data: Err(ErrorReport::new(
                        FailureClass::Infrastructure,
                        format!("setup of class {} failed: {reason}", class.name),
                    )),
                    note: Some(note(Some(reason))),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use super::*;
    use crate::case::{CaseSpec, Fixture, Runtime};

    fn class(name: &str, fail: bool, builds: Arc<AtomicUsize>) -> ClassSpec {
        ClassSpec::pooled(name, Runtime::new("rt"))
            .fixture(Fixture::new(move |info: &SetupInfo| {
                builds.fetch_add(1, Ordering::SeqCst);
                if fail {
                    return Err("weights file is missing".into());
                }
                Ok(vec![info.seed; 3])
            }))
            .cases([CaseSpec::trivial("a"), CaseSpec::trivial("b")])
    }

    #[test]
    fn host_data_is_built_once_per_lane_and_class() {
        let builds = Arc::new(AtomicUsize::new(0));
        let c = class("W", false, Arc::clone(&builds));
        let mut lane = HostFixtures::default();
        let first = lane.get(&c, "W::a", Arch::A5);
        let data = first.data.unwrap().unwrap();
        assert_eq!(data.downcast::<Vec<u64>>().unwrap().len(), 3);
        assert_eq!(first.note.unwrap().error, None);
        let second = lane.get(&c, "W::b", Arch::A5);
        assert!(second.data.unwrap().is_some());
        assert!(second.note.is_none(), "no second setup");
        assert_eq!(builds.load(Ordering::SeqCst), 1);
        // Another lane builds its own.
        let mut other = HostFixtures::default();
        other.get(&c, "W::a", Arch::A5).data.unwrap();
        assert_eq!(builds.load(Ordering::SeqCst), 2);
        // A class without a fixture gets none and runs no setup.
        let plain = ClassSpec::pooled("P", Runtime::new("rt"));
        assert!(lane.get(&plain, "P::x", Arch::A5).data.unwrap().is_none());
    }

    #[test]
    fn a_failed_setup_is_reported_once_then_referred_to() {
        let builds = Arc::new(AtomicUsize::new(0));
        let c = class("W", true, Arc::clone(&builds));
        let mut lane = HostFixtures::default();
        let first = lane.get(&c, "W::a", Arch::A5);
        let e = first.data.unwrap_err();
        assert_eq!(e.class, FailureClass::Infrastructure);
        assert_eq!(e.message, "setup of class W failed: weights file is missing");
        assert_eq!(
            first.note.unwrap().error.as_deref(),
            Some("weights file is missing")
        );
        let second = lane.get(&c, "W::b", Arch::A5);
        let e = second.data.unwrap_err();
        assert_eq!(e.message, "setup of class W failed, see W::a");
        assert!(second.note.is_none());
        assert_eq!(
            builds.load(Ordering::SeqCst),
            1,
            "a failed setup is not run again in the lane"
        );
    }

    #[test]
    fn a_panicking_setup_is_a_failed_setup() {
        let c = ClassSpec::pooled("P", Runtime::new("rt")).fixture(Fixture::new(
            |_: &SetupInfo| -> Result<u8, _> { panic!("no weights") },
        ));
        let mut lane = HostFixtures::default();
        let e = lane.get(&c, "P::a", Arch::A5).data.unwrap_err();
        assert!(
            e.message.contains("the setup panicked") && e.message.contains("no weights"),
            "{}",
            e.message
        );
    }
}
