//! Comparing outputs with expected values within tolerances.

/// How `actual` differs from `expected`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Mismatch {
    /// The slices differ in length.
    #[error("{actual} values where {expected} were expected")]
    Length {
        /// Values present.
        actual: usize,
        /// Values expected.
        expected: usize,
    },
    /// Some values are outside the tolerance.
    #[error(
        "{count} of {len} values out of tolerance; first at [{index}]: got {actual}, expected {expected}"
    )]
    Values {
        /// Index of the first bad value.
        index: usize,
        /// The value found there.
        actual: f32,
        /// The value expected there.
        expected: f32,
        /// How many values are bad.
        count: usize,
        /// How many values were compared.
        len: usize,
    },
}

/// Whether one value is close: `|a - e| <= atol + rtol * |e|` (as numpy's `isclose`); equal
/// infinities are close; a NaN is never close.
pub fn is_close(actual: f32, expected: f32, rtol: f32, atol: f32) -> bool {
    if actual == expected {
        return true;
    }
    let diff = (actual - expected).abs();
    diff <= atol + rtol * expected.abs()
}

/// Checks that every `actual[i]` is close to `expected[i]` (see [`is_close`]).
pub fn allclose(actual: &[f32], expected: &[f32], rtol: f32, atol: f32) -> Result<(), Mismatch> {
    if actual.len() != expected.len() {
        return Err(Mismatch::Length {
            actual: actual.len(),
            expected: expected.len(),
        });
    }
    let mut bad = actual
        .iter()
        .zip(expected)
        .enumerate()
        .filter(|(_, (&a, &e))| !is_close(a, e, rtol, atol));
    let Some((index, (&a, &e))) = bad.next() else {
        return Ok(());
    };
    Err(Mismatch::Values {
        index,
        actual: a,
        expected: e,
        count: 1 + bad.count(),
        len: expected.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_slices_are_close() {
        assert_eq!(
            allclose(&[1.0, -2.5, f32::INFINITY], &[1.0, -2.5, f32::INFINITY], 0.0, 0.0),
            Ok(())
        );
    }

    #[test]
    fn tolerance_is_absolute_plus_relative() {
        assert!(is_close(100.1, 100.0, 1e-3, 0.0));
        assert!(!is_close(100.2, 100.0, 1e-3, 0.0));
        assert!(is_close(0.05, 0.0, 0.0, 0.1));
        assert!(!is_close(0.2, 0.0, 0.5, 0.1));
    }

    #[test]
    fn reports_first_bad_index_values_and_count() {
        let err = allclose(&[1.0, 2.0, 9.0, 4.0, 7.0], &[1.0, 2.0, 3.0, 4.0, 5.0], 1e-5, 1e-5).unwrap_err();
        assert_eq!(
            err,
            Mismatch::Values {
                index: 2,
                actual: 9.0,
                expected: 3.0,
                count: 2,
                len: 5
            }
        );
        assert!(err.to_string().contains("first at [2]"), "{err}");
    }

    #[test]
    fn nan_is_never_close() {
        assert!(allclose(&[f32::NAN], &[1.0], 1.0, 1.0).is_err());
        assert!(allclose(&[f32::NAN], &[f32::NAN], 1.0, 1.0).is_err());
    }

    #[test]
    fn length_difference_is_reported() {
        assert_eq!(
            allclose(&[1.0], &[1.0, 2.0], 0.0, 0.0),
            Err(Mismatch::Length {
                actual: 1,
                expected: 2
            })
        );
    }
}
