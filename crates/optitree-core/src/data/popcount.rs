//! Intersection counts of bit columns, the inner loop of the pair passes and fresh-node counts,
//! with AVX-512's vector popcount where the processor has it (checked at run time, once per
//! call) and the columns are long enough to fill its vectors.

/// Words from which the vector popcount pays for its set-up.
const WIDE_WORDS: usize = 8;

/// Whether this processor counts bits eight words at a time (AVX-512 VPOPCNTDQ).
#[inline]
pub fn has_vector_popcount() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx512vpopcntdq")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// For each `column.len()`-word column of `others` in order, `Σ popcount(column & other)`,
/// written into `out` (one entry per column).
pub fn intersection_counts(column: &[u64], others: &[u64], out: &mut [u32]) {
    #[cfg(target_arch = "x86_64")]
    if column.len() >= WIDE_WORDS && has_vector_popcount() {
        #[allow(unsafe_code)]
        // SAFETY: the processor has the features the function is compiled for (checked above).
        return unsafe { intersection_counts_avx512(column, others, out) };
    }
    intersection_counts_portable(column, others, out);
}

#[inline(always)]
fn intersection_counts_portable(column: &[u64], others: &[u64], out: &mut [u32]) {
    for (count, other) in out.iter_mut().zip(others.chunks_exact(column.len())) {
        let both = column.iter().zip(other);
        *count = both.map(|(a, b)| (a & b).count_ones()).sum();
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vpopcntdq")]
fn intersection_counts_avx512(column: &[u64], others: &[u64], out: &mut [u32]) {
    intersection_counts_portable(column, others, out);
}

/// `(Σ popcount(rows & ones), Σ popcount(rows & ones & class))` over the words.
pub fn intersection_counts2(rows: &[u64], ones: &[u64], class: &[u64]) -> (u64, u64) {
    #[cfg(target_arch = "x86_64")]
    if rows.len() >= WIDE_WORDS && has_vector_popcount() {
        #[allow(unsafe_code)]
        // SAFETY: the processor has the features the function is compiled for (checked above).
        return unsafe { intersection_counts2_avx512(rows, ones, class) };
    }
    intersection_counts2_portable(rows, ones, class)
}

#[inline(always)]
fn intersection_counts2_portable(rows: &[u64], ones: &[u64], class: &[u64]) -> (u64, u64) {
    let (mut n, mut c) = (0u64, 0u64);
    for ((&r, &o), &k) in rows.iter().zip(ones).zip(class) {
        let w = r & o;
        n += u64::from(w.count_ones());
        c += u64::from((w & k).count_ones());
    }
    (n, c)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vpopcntdq")]
fn intersection_counts2_avx512(rows: &[u64], ones: &[u64], class: &[u64]) -> (u64, u64) {
    intersection_counts2_portable(rows, ones, class)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both paths (short columns stay portable) against a bit-by-bit count.
    #[test]
    fn counts_match_bit_by_bit() {
        let mut s = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        let naive = |a: u64, b: u64| (0..64).filter(|&i| (a >> i) & (b >> i) & 1 == 1).count();
        for width in [1, 3, 7, 8, 9, 16, 31, 64, 130] {
            let column: Vec<u64> = (0..width).map(|_| next() & next()).collect();
            let others: Vec<u64> = (0..width * 5).map(|_| next()).collect();
            let class: Vec<u64> = (0..width).map(|_| next()).collect();
            let mut out = vec![0u32; 5];
            intersection_counts(&column, &others, &mut out);
            for (j, other) in others.chunks_exact(width).enumerate() {
                let want: usize = column.iter().zip(other).map(|(&a, &b)| naive(a, b)).sum();
                assert_eq!(out[j] as usize, want, "width {width}, column {j}");
                let (n, c) = intersection_counts2(&column, other, &class);
                let with_class: usize = (0..width)
                    .map(|w| naive(column[w] & other[w], class[w]))
                    .sum();
                assert_eq!(
                    (n as usize, c as usize),
                    (want, with_class),
                    "width {width}"
                );
            }
        }
    }
}
