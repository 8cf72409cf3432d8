//! Did-you-mean for a `--case` or `--exclude` selector that matches nothing: the suite's nearest
//! class, case and tag selectors. This file owns the likeness rule; it never selects a case
//! (`crate::select` does, and calls it only for its error).

use crate::case::Suite;

/// What a selector asked for, by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wanted<'a> {
    /// A bare name (`relu`, `Relu::`): a class, or a case or tag of that name.
    Name(&'a str),
    /// `Class::case`.
    Case {
        /// The class.
        class: &'a str,
        /// The case.
        case: &'a str,
    },
    /// `tag:NAME`.
    Tag(&'a str),
}

/// The error's hint: the suggestions, or where to look.
pub fn hint(suggestions: &[String]) -> String {
    match suggestions {
        [] => "--list shows them".to_owned(),
        s => format!("did you mean {}? --list shows them", s.join(" or ")),
    }
}

/// At most three selectors of `suite` nearest to `wanted` (its classes as `Class::`, its cases as
/// `Class::case`, its tags as `tag:NAME`), best first: a name that differs only in case, or one
/// whose normalized edit distance (`strsim`'s Damerau-Levenshtein) is small. A bare `relu` is
/// compared with case names too (the class it was meant for may be the case's).
pub fn nearest(suite: &Suite, wanted: Wanted<'_>) -> Vec<String> {
    let sim = |a: &str, b: &str| {
        let (a, b) = (a.to_lowercase(), b.to_lowercase());
        if a == b {
            1.0
        } else {
            strsim::normalized_damerau_levenshtein(&a, &b)
        }
    };
    let mut scored: Vec<(f64, String)> = Vec::new();
    let mut tags: Vec<&str> = Vec::new();
    for class in &suite.classes {
        match wanted {
            Wanted::Name(c) => {
                scored.push((sim(c, &class.name), format!("{}::", class.name)));
                for case in &class.cases {
                    scored.push((sim(c, &case.name), class.case_id(case)));
                }
            }
            // Both halves must be near: one shared class name is no likeness of two cases.
            Wanted::Case { class: c, case: k } => {
                let of_class = sim(c, &class.name);
                for case in &class.cases {
                    scored.push((of_class * sim(k, &case.name), class.case_id(case)));
                }
            }
            Wanted::Tag(_) => {}
        }
        tags.extend(class.settings.tags.iter().map(String::as_str));
        for case in &class.cases {
            tags.extend(case.settings.tags.iter().map(String::as_str));
        }
    }
    tags.sort_unstable();
    tags.dedup();
    if let Wanted::Name(t) | Wanted::Tag(t) = wanted {
        scored.extend(tags.into_iter().map(|tag| (sim(t, tag), format!("tag:{tag}"))));
    }
    scored.retain(|(score, _)| *score >= 0.6);
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let mut out: Vec<String> = Vec::new();
    for (_, s) in scored {
        if !out.contains(&s) {
            out.push(s);
        }
        if out.len() == 3 {
            break;
        }
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::case::{CaseSpec, ClassSpec};
    use crate::runtime::Runtime;

    /// Two classes of one runtime, with class and case tags: names and tags to suggest from (the
    /// selector tests in `select` use it too).
    pub(crate) fn suite() -> Suite {
        let rt = Runtime::new("a");
        Suite::new()
            .class(
                ClassSpec::pooled("Dma", rt.clone())
                    .tags(["sdma"])
                    .cases([CaseSpec::trivial("copy"), CaseSpec::trivial("big").tags(["slow"])]),
            )
            .class(
                ClassSpec::pooled("Math", rt)
                    .case(CaseSpec::trivial("add"))
                    .case(CaseSpec::trivial("huge").tags(["slow"])),
            )
    }

    #[test]
    fn the_nearest_names_are_suggested_best_first() {
        let s = suite();
        assert_eq!(nearest(&s, Wanted::Name("math")), ["Math::"]);
        assert_eq!(nearest(&s, Wanted::Tag("slwo")), ["tag:slow"]);
        let case = Wanted::Case {
            class: "Math",
            case: "ad",
        };
        assert_eq!(nearest(&s, case), ["Math::add"]);
        // A bare case name suggests its id; a bare tag name its tag selector.
        assert_eq!(nearest(&s, Wanted::Name("huge2")), ["Math::huge"]);
        assert_eq!(nearest(&s, Wanted::Name("slow")), ["tag:slow"]);
        // Nothing near: no guess.
        assert!(nearest(&s, Wanted::Name("Zzzzzz")).is_empty());
    }
}
