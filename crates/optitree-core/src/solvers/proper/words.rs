//! Row sets as plain `u64` word slices: the hot loops of both engines work on borrowed slices of
//! one flat buffer, so no set is ever allocated inside a search.
//!
//! Invariant (kept by every writer): bits at positions `>= n_rows` are zero.

/// Words needed for `n` rows.
pub fn count(n: usize) -> usize {
    n.div_ceil(64)
}

/// Adds row `i`.
#[inline]
pub fn insert(w: &mut [u64], i: usize) {
    w[i / 64] |= 1u64 << (i % 64);
}

/// Whether row `i` is present.
#[inline]
pub fn contains(w: &[u64], i: usize) -> bool {
    w[i / 64] >> (i % 64) & 1 == 1
}

/// Number of rows present.
#[inline]
pub fn popcount(w: &[u64]) -> u64 {
    w.iter().map(|x| u64::from(x.count_ones())).sum()
}

/// `|a ∩ b|`.
#[inline]
pub fn and_count(a: &[u64], b: &[u64]) -> u64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| u64::from((x & y).count_ones()))
        .sum()
}

/// `|a ∩ b ∩ c|`.
#[inline]
pub fn and3_count(a: &[u64], b: &[u64], c: &[u64]) -> u64 {
    a.iter()
        .zip(b)
        .zip(c)
        .map(|((x, y), z)| u64::from((x & y & z).count_ones()))
        .sum()
}

/// `out = a ∩ b`.
#[inline]
pub fn and_into(a: &[u64], b: &[u64], out: &mut [u64]) {
    for ((o, x), y) in out.iter_mut().zip(a).zip(b) {
        *o = x & y;
    }
}

/// `out = a ∖ b`.
#[inline]
pub fn and_not_into(a: &[u64], b: &[u64], out: &mut [u64]) {
    for ((o, x), y) in out.iter_mut().zip(a).zip(b) {
        *o = x & !y;
    }
}

/// The set of all `n` rows.
pub fn full(n: usize) -> Vec<u64> {
    let mut w = vec![0u64; count(n)];
    for i in 0..n {
        insert(&mut w, i);
    }
    w
}

/// The rows present, in increasing order.
pub fn members(w: &[u64]) -> impl Iterator<Item = usize> + '_ {
    w.iter().enumerate().flat_map(|(k, &word)| {
        let mut rest = word;
        std::iter::from_fn(move || {
            if rest == 0 {
                return None;
            }
            let b = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            Some(k * 64 + b)
        })
    })
}
