//! The order in which the search stores the rows.
//!
//! Row sets are bitsets, and counting a subset's children costs one step per non-empty 64-row
//! word. Deep in the search a subset is a conjunction of a few feature values; if the rows are
//! sorted by those values, its members sit together in few words. So the rows are sorted
//! lexicographically by their codes, taking first the features a split on which classifies the
//! most rows correctly (those the search is most likely to use near the root). On mushroom this
//! roughly halves the words a depth-3 subset spans. Nothing in the objective depends on the
//! order of the rows, so the search returns the same tree either way.

use crate::data::Dataset;

/// Fewest rows for which sorting pays: a handful of 64-row words has little to gain.
pub const WORTH_SORTING: usize = 256;

/// The row order (row `i` of the sorted data is row `order[i]` of `data`).
pub fn clustered(data: &Dataset) -> Vec<usize> {
    let mut features: Vec<(u64, usize)> = (0..data.n_features())
        .map(|f| (one_split_correct(data, f), f))
        .collect();
    // Most useful first; the lower index first on ties (a stable, data-only order).
    features.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    // Sort keys: the codes packed into 128 bits, most useful feature in the highest bits, as
    // many features as fit (a sort by key is several times faster than comparing columns).
    let mut keys = vec![0u128; data.n_rows()];
    let mut bits_left = 128u32;
    for &(_, f) in &features {
        let width = usize::BITS - (data.n_values(f).max(2) - 1).leading_zeros();
        if width > bits_left {
            break;
        }
        bits_left -= width;
        for (key, &code) in keys.iter_mut().zip(data.column(f)) {
            *key = (*key << width) | u128::from(code);
        }
    }
    // Rows with equal keys keep their input order: the index breaks ties, so an unstable sort
    // of the pairs (without indirection) gives the stable order.
    let mut pairs: Vec<(u128, usize)> = keys.into_iter().zip(0..).collect();
    pairs.sort_unstable();
    pairs.into_iter().map(|(_, r)| r).collect()
}

/// Rows (unweighted) that a one-split tree on feature `f` classifies correctly.
fn one_split_correct(data: &Dataset, f: usize) -> u64 {
    (0..data.n_values(f))
        .map(|v| {
            (0..data.n_classes())
                .map(|k| {
                    data.rows_with(f, v)
                        .intersection_count(data.rows_of_class(k))
                })
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
        let data = Dataset::new(&codes, 2, &labels, None, None, None).unwrap();
        assert_eq!(clustered(&data), vec![1, 4, 2, 3, 0]);
    }
}
