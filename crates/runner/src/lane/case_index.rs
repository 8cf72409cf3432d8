//! A lane's suite with its cases found by id in constant time: each assignment names its cases by
//! `Class::case`, and a linear search over the suite's classes and cases made a lane's lookups
//! grow with the suite (at 100,000 cases in 1,000 classes, a fifth of a lane's time).
//!
//! This file owns the lookup only: classes by name up front, a class's cases by name the first
//! time one of them is looked up (a lane indexes only the classes it runs), and each case's
//! position in the whole suite (the breadcrumb's case number) both ways. It never changes the
//! suite and never checks it (`Suite::validate` did).

use std::ops::Deref;
use std::sync::OnceLock;

use rustc_hash::FxHashMap;

use crate::case::{CaseSpec, ClassSpec, Suite};

/// A suite and its id lookup. It is shared by the lane's card thread and its channel reader (which
/// names the running case from its position when the dispatcher asks).
#[derive(Debug)]
pub struct IndexedSuite {
    suite: Suite,
    classes: FxHashMap<String, usize>,
    cases: Vec<OnceLock<FxHashMap<String, usize>>>,
    /// The position of each class's first case in the whole suite, in class order.
    first: Vec<u32>,
}

impl IndexedSuite {
    /// Indexes `suite`'s classes (the first of a duplicated name wins, as a linear search would).
    pub fn new(suite: Suite) -> Self {
        let mut classes = FxHashMap::default();
        for (i, c) in suite.classes.iter().enumerate() {
            classes.entry(c.name.clone()).or_insert(i);
        }
        let cases = suite.classes.iter().map(|_| OnceLock::new()).collect();
        let mut first = Vec::with_capacity(suite.classes.len());
        let mut n = 0u32;
        for c in &suite.classes {
            first.push(n);
            n = n.saturating_add(u32::try_from(c.cases.len()).unwrap_or(u32::MAX));
        }
        Self {
            suite,
            classes,
            cases,
            first,
        }
    }

    /// The class and case with id `Class::case`.
    pub fn find_case(&self, id: &str) -> Option<(&ClassSpec, &CaseSpec)> {
        let (ci, k) = self.locate(id)?;
        let spec = &self.suite.classes[ci];
        Some((spec, &spec.cases[k]))
    }

    /// The position of case `id` in the whole suite (classes in order, then their cases), the
    /// number the breadcrumb records; `None` for an id the suite does not have.
    pub fn position(&self, id: &str) -> Option<u32> {
        let (ci, k) = self.locate(id)?;
        self.first[ci].checked_add(u32::try_from(k).ok()?)
    }

    /// The id (`Class::case`) of the case at `position`, as [`IndexedSuite::position`] numbers it.
    pub fn id_at(&self, position: u32) -> Option<String> {
        // The last class whose first position is at or before `position` (an empty class shares
        // its first position with the class after it, which comes later and so wins).
        let ci = self.first.partition_point(|&f| f <= position).checked_sub(1)?;
        let class = &self.suite.classes[ci];
        let k = usize::try_from(position - self.first[ci]).ok()?;
        class.cases.get(k).map(|case| class.case_id(case))
    }

    /// The class index and case index of id `Class::case`.
    fn locate(&self, id: &str) -> Option<(usize, usize)> {
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
        Some((ci, *names.get(case)?))
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
            let position = indexed.position(id).expect(id);
            assert_eq!(
                indexed.id_at(position).as_deref(),
                Some(id.as_str()),
                "{position}"
            );
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
            assert!(indexed.position(&bad).is_none(), "{bad:?}");
        }
        let positions: Vec<u32> = ids.iter().map(|id| indexed.position(id).unwrap()).collect();
        let n = u32::try_from(ids.len()).unwrap();
        assert_eq!(
            positions,
            (0..n).collect::<Vec<_>>(),
            "the suite's order, no gaps"
        );
        assert_eq!(indexed.id_at(n), None, "past the last case");
        assert_eq!(
            indexed.len(),
            300 + compute,
            "the suite is reachable through the index"
        );
    }
}
