//! The one rule for a number a user writes (a flag value, an environment variable, a fault-plan
//! rule): ASCII digits only, no sign (a leading `+` is refused like a `-`), no exponent, no
//! digit separators, no whitespace around it (`" 1"` is refused: a value a script padded is a
//! mistake to name, not to guess at). A fractional number (seconds) is digits, a
//! point and digits (`0.5`, `2`, never `.5`, `1e3` or `inf`).
//!
//! This file owns the grammar only. It never decides a range or a unit: callers check those and
//! name the bad value in their own errors.

/// A whole number of ASCII digits (nothing around them), or `None`.
pub fn whole(text: &str) -> Option<u64> {
    let t = text;
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    t.parse().ok()
}

/// A whole number that fits a `u32`, or `None`.
pub fn whole_u32(text: &str) -> Option<u32> {
    whole(text).and_then(|n| u32::try_from(n).ok())
}

/// `DIGITS` or `DIGITS.DIGITS` (nothing around them) as a finite `f64`, or `None`.
pub fn decimal(text: &str) -> Option<f64> {
    let t = text;
    let (int, frac) = match t.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (t, None),
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(int) || frac.is_some_and(|f| !digits(f)) {
        return None;
    }
    t.parse::<f64>().ok().filter(|v| v.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_numbers_are_digits_only() {
        for (text, want) in [
            ("0", Some(0)),
            ("42", Some(42)),
            (" 7 ", None),
            ("7 ", None),
            ("\t7", None),
            ("007", Some(7)),
            ("+1", None),
            ("-1", None),
            ("1_000", None),
            ("1e3", None),
            ("0x10", None),
            ("", None),
            (" ", None),
            ("１", None),
            ("18446744073709551616", None),
        ] {
            assert_eq!(whole(text), want, "{text:?}");
        }
        assert_eq!(whole_u32("4294967295"), Some(u32::MAX));
        assert_eq!(whole_u32("4294967296"), None);
    }

    #[test]
    fn decimals_are_digits_a_point_and_digits() {
        for (text, want) in [
            ("2", Some(2.0)),
            ("0.5", Some(0.5)),
            (" 1.25 ", None),
            ("1.25 ", None),
            ("0.001", Some(0.001)),
            ("+1", None),
            ("-0.5", None),
            (".5", None),
            ("5.", None),
            ("1e-10", None),
            ("inf", None),
            ("NaN", None),
            ("1.2.3", None),
            ("", None),
        ] {
            assert_eq!(decimal(text), want, "{text:?}");
        }
    }
}
