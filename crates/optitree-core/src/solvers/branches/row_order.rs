//! The order in which the search stores the rows.
//!
//! Row sets are bitsets, and counting a subset's children costs one step per non-empty 64-row
//! word. Deep in the search a subset is a conjunction of a few feature values; if the rows are
//! sorted by those values, its members sit together in few words. So the rows are sorted
//! lexicographically by their codes, taking first the features a split on which classifies the
//! most rows correctly (those the search is most likely to use near the root; on many rows,
//! as counted on a sample of them). On mushroom this roughly halves the words a depth-3 subset
//! spans. Nothing in the objective depends on the order of the rows, so the search returns the
//! same tree either way.

use crate::data::Table;

/// Fewest rows for which sorting pays: a handful of 64-row words has little to gain.
pub const WORTH_SORTING: usize = 256;

/// The row order (row `i` of the sorted data is row `order[i]` of `data`).
pub fn clustered(data: &Table) -> Vec<usize> {
    let stride = data.n_rows().div_ceil(RANKING_ROWS);
    let mut features: Vec<(u64, usize)> = (0..data.n_features())
        .map(|f| (one_split_correct(data, f, stride), f))
        .collect();
    // Most useful first; the lower index first on ties (a stable, data-only order).
    features.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    // Sort keys: the codes packed into 32 bits, most useful feature in the highest bits, as
    // many features as fit (a sort by key is several times faster than comparing columns).
    // Past the first 32 binary features the groups of equal keys are a few rows each, well
    // within a word: 64-bit keys took mushroom (117 features) 0.3 ms longer to order (8
    // passes of the sort instead of 4) and no search shorter (mushroom, kr-vs-kp, careval,
    // nursery, lymph-o, balance-f), 128-bit keys 1.1 ms longer again.
    let mut packed = Vec::new();
    let mut bits = 0u32;
    for &(_, f) in &features {
        let width = usize::BITS - (data.n_values(f).max(2) - 1).leading_zeros();
        if bits + width > u32::BITS {
            break;
        }
        bits += width;
        packed.push((f, width));
    }
    sorted_rows(packed_keys(data, &packed), bits)
}

/// The 8 bits of `key` from `shift` up.
fn byte(key: u32, shift: u32) -> usize {
    (key >> shift) as usize & 0xff
}

/// Each row's key: the codes of `packed` (feature, bit width), the first in the highest bits.
fn packed_keys(data: &Table, packed: &[(usize, u32)]) -> Vec<u32> {
    let mut keys = vec![0u32; data.n_rows()];
    for &(f, width) in packed {
        data.column(f)
            .for_each(|r, code| keys[r] = keys[r].checked_shl(width).unwrap_or(0) | code);
    }
    keys
}

/// The rows in increasing order of their keys (`bits` wide), rows with equal keys in index
/// order: a least-significant-byte-first radix sort, whose passes are stable. One pass counts
/// every byte's values; a byte that all keys share is skipped.
fn sorted_rows(mut keys: Vec<u32>, bits: u32) -> Vec<usize> {
    let n = keys.len();
    let shifts: Vec<u32> = (0..bits).step_by(8).collect();
    let mut counts = vec![[0usize; 256]; shifts.len()];
    for key in &keys {
        for (count, &shift) in counts.iter_mut().zip(&shifts) {
            count[byte(*key, shift)] += 1;
        }
    }
    let mut rows: Vec<usize> = (0..n).collect();
    let (mut spare_keys, mut spare_rows) = (vec![0u32; n], vec![0; n]);
    for (next, &shift) in counts.iter_mut().zip(&shifts) {
        if next.contains(&n) {
            continue;
        }
        let mut start = 0;
        for slot in next.iter_mut() {
            (*slot, start) = (start, start + *slot);
        }
        for (&key, &row) in keys.iter().zip(&rows) {
            let at = &mut next[byte(key, shift)];
            (spare_keys[*at], spare_rows[*at]) = (key, row);
            *at += 1;
        }
        std::mem::swap(&mut keys, &mut spare_keys);
        std::mem::swap(&mut rows, &mut spare_rows);
    }
    rows
}

/// Most rows the ranking of features counts: the order only has to put the strongest
/// features first, which a regular sample of this many rows shows as well as all of them, and
/// counting every row of a large table cost as much as building its bitsets.
const RANKING_ROWS: usize = 2048;

/// Most (value, class) cells a feature's ranking counts.
const MAX_RANKING_CELLS: usize = 1 << 16;

/// Rows in a block of the ranking's sample: a cache line of codes (spreading single rows
/// out would still read every line).
const SAMPLE_BLOCK: usize = 16;

/// Rows (unweighted) that a one-split tree on feature `f` classifies correctly, counted from
/// every `stride`-th block of [`SAMPLE_BLOCK`] rows.
fn one_split_correct(data: &Table, f: usize, stride: usize) -> u64 {
    let k = data.n_classes();
    // A (value, class) table this large costs more than the order is worth: the feature
    // goes last.
    let cells = match data.n_values(f).checked_mul(k) {
        Some(cells) if cells <= MAX_RANKING_CELLS => cells,
        _ => return 0,
    };
    // Four tables, rows taking turns: sorted data repeat a (value, class) cell row after row,
    // and with one table each increment would wait for the previous one's store.
    let mut counts = vec![0u64; 4 * cells];
    let (column, labels) = (data.column(f), data.labels());
    let n = column.len();
    for start in (0..n).step_by(SAMPLE_BLOCK * stride) {
        for r in start..(start + SAMPLE_BLOCK).min(n) {
            counts[(r & 3) * cells + column.get(r) as usize * k + labels[r] as usize] += 1;
        }
    }
    (0..data.n_values(f))
        .map(|v| {
            (0..k)
                .map(|j| (0..4).map(|t| counts[t * cells + v * k + j]).sum::<u64>())
                .max()
                .unwrap_or(0)
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_by_the_most_useful_feature_first() {
        // Feature 1 predicts the label exactly, feature 0 does not: rows sort by feature 1,
        // then by feature 0, then by index.
        let codes = [1, 1, 0, 0, 1, 0, 0, 1, 0, 0];
        let labels = [1, 0, 0, 1, 0];
        let data = Table::from_row_major(&codes, 2, &labels, None, None, None).unwrap();
        assert_eq!(clustered(&data), vec![1, 4, 2, 3, 0]);
    }

    #[test]
    fn a_sample_of_many_rows_still_ranks_the_predictive_feature_first() {
        // 10,000 rows (a sample of 2,048 ranks them): feature 2 gives the label but for one row
        // in 20, features 0 and 1 are noise with more values. The rows sort by feature 2 first.
        let n = 10_000u32;
        let mut next = crate::oracle::xorshift(0x2545_f491_4f6c_dd1d);
        let labels: Vec<u32> = (0..n).map(|_| (next() % 2) as u32).collect();
        let codes: Vec<u32> = (0..n as usize)
            .flat_map(|r| {
                let flipped = next() % 20 == 0;
                [
                    (next() % 5) as u32,
                    (next() % 7) as u32,
                    labels[r] ^ u32::from(flipped),
                ]
            })
            .collect();
        let data = Table::from_row_major(&codes, 3, &labels, None, None, None).unwrap();
        let order = clustered(&data);
        let first: Vec<u32> = order.iter().map(|&r| data.column(2).get(r)).collect();
        assert!(
            first.windows(2).all(|w| w[0] <= w[1]),
            "sorted by feature 2"
        );
    }

    #[test]
    fn the_radix_sort_orders_as_sorting_key_index_pairs() {
        // Keys over 3 to 32 bits, with many repeats, against the plain sort of (key, row).
        let mut next = crate::oracle::xorshift(0x9e37_79b9_7f4a_7c15);
        for bits in [3u32, 8, 13, 24, 31, 32] {
            let keys: Vec<u32> = (0..2000)
                .map(|_| {
                    let key = next() as u32 & (u32::MAX >> (32 - bits));
                    key & !0xf0 // a byte range with few values
                })
                .collect();
            let mut pairs: Vec<(u32, usize)> = keys.iter().copied().zip(0..).collect();
            pairs.sort_unstable();
            let expected: Vec<usize> = pairs.into_iter().map(|(_, r)| r).collect();
            assert_eq!(sorted_rows(keys, bits), expected, "{bits} bits");
        }
    }
}
