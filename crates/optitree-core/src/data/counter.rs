//! Class counts of the children of one row set under every candidate split, the inner loop of
//! the sparse-tree searches.
//!
//! Built once per row set: the indices of its non-zero words and, per class, those words masked
//! by the class. Counting the rows of class k with feature f = v then reads two compact arrays
//! and skips every empty word, which matters deep in a search where row sets are sparse.

use crate::data::{Bitset, Dataset};

/// Per-class masked words of one row set.
pub struct SubsetCounter {
    index: Vec<u32>,
    n_classes: usize,
    /// `masked[j * n_classes + k]` = word `index[j]` of the rows, masked by class `k`.
    masked: Vec<u64>,
}

impl SubsetCounter {
    /// A counter for no rows, to be [`SubsetCounter::reset`] before use.
    pub fn empty() -> Self {
        SubsetCounter {
            index: Vec::new(),
            n_classes: 0,
            masked: Vec::new(),
        }
    }

    /// Prepares counting for the rows in `rows`.
    pub fn new(data: &Dataset, rows: &Bitset) -> Self {
        let mut counter = SubsetCounter::empty();
        counter.reset(data, rows);
        counter
    }

    /// Prepares counting for `rows`, reusing this counter's buffers (searches count many row
    /// sets in a row, and allocating for each one shows up in their profiles).
    pub fn reset(&mut self, data: &Dataset, rows: &Bitset) {
        let words = rows.words();
        self.n_classes = data.n_classes();
        self.index.clear();
        self.index.extend(
            (0..words.len())
                .filter(|&i| words[i] != 0)
                .map(|i| i as u32),
        );
        self.masked.clear();
        for &i in &self.index {
            for k in 0..self.n_classes {
                self.masked
                    .push(words[i as usize] & data.rows_of_class(k).words()[i as usize]);
            }
        }
    }

    /// Writes the class counts of `rows ∩ (feature f = v)` into `out`; returns their sum.
    pub fn counts(&self, data: &Dataset, f: usize, v: usize, out: &mut [u64]) -> u64 {
        let values = data.rows_with(f, v).words();
        if let [first, second] = out {
            // Two classes (most data): the running counts stay in registers.
            let (mut a, mut b) = (0u64, 0u64);
            for (&i, classes) in self.index.iter().zip(self.masked.chunks_exact(2)) {
                let value = values[i as usize];
                a += u64::from((classes[0] & value).count_ones());
                b += u64::from((classes[1] & value).count_ones());
            }
            (*first, *second) = (a, b);
            return *first + *second;
        }
        out.iter_mut().for_each(|x| *x = 0);
        // One pass over the words, every class at once (the value word is loaded once).
        for (&i, classes) in self
            .index
            .iter()
            .zip(self.masked.chunks_exact(self.n_classes))
        {
            let value = values[i as usize];
            for (slot, &m) in out.iter_mut().zip(classes) {
                *slot += u64::from((m & value).count_ones());
            }
        }
        out.iter().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn agrees_with_plain_intersections(
            n in 1usize..200, seed in any::<u64>(), keep in prop::collection::vec(any::<bool>(), 200),
        ) {
            let mut s = seed | 1;
            let mut next = |m: u32| { s ^= s << 13; s ^= s >> 7; s ^= s << 17; (s % u64::from(m)) as u32 };
            let codes: Vec<u32> = (0..n * 2).map(|_| next(3)).collect();
            let labels: Vec<u32> = (0..n).map(|_| next(3)).collect();
            let data = Dataset::new(&codes, 2, &labels, Some(&[3, 3]), Some(3), None).expect("valid");
            let rows = Bitset::from_indices(n, (0..n).filter(|&r| keep[r]));
            let counter = SubsetCounter::new(&data, &rows);
            let mut out = [0u64; 3];
            for f in 0..2 {
                for v in 0..3 {
                    let total = counter.counts(&data, f, v, &mut out);
                    let child = rows.and(data.rows_with(f, v));
                    prop_assert_eq!(out.to_vec(), data.class_counts(&child));
                    prop_assert_eq!(total, child.count());
                }
            }
        }
    }
}
