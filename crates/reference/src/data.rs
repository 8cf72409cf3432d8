//! Deterministic inputs from a seed, and packing values to and from the bytes a kernel sees.
//!
//! Bytes are native-endian: kernels run on the host (simulated AICore threads) and read the
//! buffers as host `float` / `int32_t` arrays.

/// SplitMix64 (Steele, Lea, Flood 2014): a tiny, fast, well-mixed generator. The same seed gives
/// the same sequence on every platform, so cases are reproducible from their seed alone.
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform f32 in [0, 1) with 24 random bits.
    pub fn next_unit_f32(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }

    /// A uniform f32 in [lo, hi).
    pub fn uniform(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.next_unit_f32()
    }

    /// `len` uniform f32 values in [lo, hi).
    pub fn f32_vec(&mut self, len: usize, lo: f32, hi: f32) -> Vec<f32> {
        (0..len).map(|_| self.uniform(lo, hi)).collect()
    }

    /// A uniform integer in [0, n) (`n` > 0; slightly biased for huge `n`, which cases never use).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// Shuffles `items` in place (Fisher-Yates).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            items.swap(i, j);
        }
    }
}

/// A byte buffer whose length is not a whole number of 4-byte values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{0} bytes is not a whole number of 4-byte values")]
pub struct BadByteLength(pub usize);

/// `values` as native-endian bytes.
pub fn f32s_to_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_ne_bytes()).collect()
}

/// `values` as native-endian bytes.
pub fn i32s_to_bytes(values: &[i32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_ne_bytes()).collect()
}

/// Native-endian bytes as f32 values.
pub fn bytes_to_f32s(bytes: &[u8]) -> Result<Vec<f32>, BadByteLength> {
    if bytes.len() % 4 != 0 {
        return Err(BadByteLength(bytes.len()));
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|c| f32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_sequence_other_seed_other_sequence() {
        let a = SplitMix64::new(7).f32_vec(16, -1.0, 1.0);
        assert_eq!(a, SplitMix64::new(7).f32_vec(16, -1.0, 1.0));
        assert_ne!(a, SplitMix64::new(8).f32_vec(16, -1.0, 1.0));
    }

    #[test]
    fn splitmix_matches_the_published_sequence() {
        // First outputs of SplitMix64 seeded with 0 (as in the reference C implementation).
        let mut g = SplitMix64::new(0);
        assert_eq!(g.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(g.next_u64(), 0x6E78_9E6A_A1B9_65F4);
    }

    #[test]
    fn uniform_stays_in_range() {
        let mut g = SplitMix64::new(1);
        for _ in 0..10_000 {
            let v = g.uniform(-2.0, 3.0);
            assert!((-2.0..3.0).contains(&v), "{v}");
        }
    }

    #[test]
    fn shuffle_is_a_permutation() {
        let mut v: Vec<u32> = (0..50).collect();
        SplitMix64::new(3).shuffle(&mut v);
        assert_ne!(v, (0..50).collect::<Vec<_>>());
        v.sort_unstable();
        assert_eq!(v, (0..50).collect::<Vec<_>>());
    }

    #[test]
    fn bytes_round_trip() {
        let v = [1.5f32, -0.0, f32::MAX, 3.25e-7];
        let bytes = f32s_to_bytes(&v);
        assert_eq!(bytes.len(), 16);
        assert_eq!(bytes_to_f32s(&bytes).unwrap(), v);
        assert_eq!(bytes_to_f32s(&bytes[..5]), Err(BadByteLength(5)));
        assert_eq!(
            i32s_to_bytes(&[-1, 2]),
            [(-1i32).to_ne_bytes(), 2i32.to_ne_bytes()].concat()
        );
    }
}
