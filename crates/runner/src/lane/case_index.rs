//! A lane's suite with its cases found by id in constant time: each assignment names its cases by
//! `Class::case`, and a linear search over the suite's classes and cases made a lane's lookups
//! grow with the suite (at 100,000 cases in 1,000 classes, a fifth of a lane's time).
//!
//! This file owns the lookup only: classes by name up front, a class's cases by name the first
//! time one of them is looked up (a lane indexes only the classes it runs). It never changes the
//! suite and never checks it (`Suite::validate` did).

use std::cell::OnceCell;
use std::ops::Deref;

use rustc_hash::FxHashMap;

use crate::case::{CaseSpec, ClassSpec, Suite};

/// A suite and its id lookup.
#[derive(Debug)]
pub struct IndexedSuite {
    suite: Suite,
    classes: FxHashMap<String, usize>,
    cases: Vec<OnceCell<FxHashMap<String, usize>>>,
}

impl IndexedSuite {
    /// Indexes `suite`'s classes (the first of a duplicated name wins, as a linear search would).
    pub fn new(suite: Suite) -> Self {
        let mut classes = FxHashMap::default();
        for (i, c) in suite.classes.iter().enumerate() {
            classes.entry(c.name.clone()).or_insert(i);
        }
        let cases = suite.classes.iter().map(|_| OnceCell::new()).collect();
        Self {
            suite,
            classes,
            cases,
        }
    }

    /// The class and case with id `Class::case`.
    pub fn find_case(&self, id: &str) -> Option<(&ClassSpec, &CaseSpec)> {
        let (class, case) = id.split_once("::")?;
        let ci = *self.classes.get(class)?;
        let spec = &self.suite.classes[ci];
        let names = self.cases[ci].get_or_init(|| {
            let mut m = FxHashMap::default();
            for (i, c) in spec.cases.iter().enumerate() {
                m.entry(c.name.clone()).or_insert(i);
            }
            m
        });
        Some((spec, &spec.cases[*names.get(case)?]))
    }
}

impl Deref for IndexedSuite {
    type Target = Suite;

    fn deref(&self) -> &Suite {
        &self.suite
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench_suite;

    #[test]
    fn every_case_is_found_by_its_id_and_nothing_else_is() {
        let suite = bench_suite::sized(300, 7);
        let ids: Vec<String> = suite
            .classes
            .iter()
            .flat_map(|c| c.cases.iter().map(move |k| c.case_id(k)))
            .collect();
        let indexed = IndexedSuite::new(suite.clone());
        let compute = bench_suite::COMPUTE_CLASSES * bench_suite::COMPUTE_CASES_PER_CLASS;
        assert_eq!(ids.len(), 300 + compute);
        for id in &ids {
            let (class, case) = indexed.find_case(id).expect(id);
            assert_eq!(&class.case_id(case), id);
            let (c2, k2) = suite.find_case(id).unwrap();
            assert_eq!(
                (&c2.name, &k2.name),
                (&class.name, &case.name),
                "as the linear search"
            );
        }
        let (class, _) = ids[0].split_once("::").unwrap();
        for bad in [
            format!("{class}::nope"),
            "Nope::case000".into(),
            class.to_owned(),
            String::new(),
        ] {
            assert!(indexed.find_case(&bad).is_none(), "{bad:?}");
        }
        assert_eq!(
            indexed.len(),
            300 + compute,
            "the suite is reachable through the index"
        );
    }
}
