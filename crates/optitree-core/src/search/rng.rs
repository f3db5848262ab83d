//! A small deterministic random generator for seeded choices (tie-breaking) and tests: the same
//! seed gives the same sequence on every platform.

/// SplitMix64 (Steele, Lea & Flood): fast, and good enough for tie-breaking.
#[derive(Debug, Clone)]
pub struct SplitMix(u64);

impl SplitMix {
    /// A generator started from `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix(seed)
    }
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// A uniform index in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        // Multiply-shift: unbiased enough for tie-breaking among a handful of queries.
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }
}
