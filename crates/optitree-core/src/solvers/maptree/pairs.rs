//! What the whole data say about each pair of binary features, so that a node's pair pass counts
//! only the pairs whose intersection it cannot know otherwise.
//!
//! A quadrant of two columns (both `= 1`, one alone, neither) empty on all rows is empty on every
//! subset of them, and then one intersection count on the subset follows from the two columns'
//! own counts. One-hot columns of one attribute never meet, and many columns of different
//! attributes never meet or nest: on mushroom only 36% of its 6,105 pairs of dividing columns
//! have all four quadrants occupied, so its pair pass counts a third of the pairs.

use crate::data::popcount::intersection_count;
use crate::data::Dataset;

/// Feature counts above which the table is not built (its bytes grow as the square): every pair
/// is then counted.
const MAX_FEATURES: usize = 2048;

/// How the intersection of two features' `= 1` sides on any subset follows from the subset's
/// counts (`size_f`, `size_g`: rows with `f = 1`, `g = 1`; `total`: the subset's rows).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Relation {
    /// Nothing known: count it.
    Count,
    /// No row has both: the intersection is empty.
    Disjoint,
    /// Every row with `f = 1` has `g = 1`: the intersection is `size_f`.
    FirstInSecond,
    /// Every row with `g = 1` has `f = 1`: the intersection is `size_g`.
    SecondInFirst,
    /// Every row has `f = 1` or `g = 1`: the intersection is `size_f + size_g − total`.
    Cover,
}

impl Relation {
    /// The intersection on a subset, unless it must be counted.
    #[inline]
    pub fn intersection(self, size_f: u32, size_g: u32, total: u32) -> Option<u32> {
        (self != Relation::Count).then(|| self.intersection_or_zero(size_f, size_g, total))
    }

    /// [`Self::intersection`] without a branch (0 for [`Relation::Count`]): the pair pass
    /// meets the relations in no predictable order.
    #[inline]
    pub fn intersection_or_zero(self, size_f: u32, size_g: u32, total: u32) -> u32 {
        // Wrapping: only `Cover` reads the last entry, and it cannot wrap there.
        let cover = size_f.wrapping_add(size_g).wrapping_sub(total);
        [0, 0, size_f, size_g, cover][self as usize]
    }
}

/// The [`Relation`] of every ordered pair of features, from one count per pair on all rows.
#[derive(Debug, Default)]
pub struct PairRelations {
    n_features: usize,
    /// `relations[f * n_features + g]`; empty when the table was not built.
    relations: Vec<Relation>,
}

impl PairRelations {
    /// The table for `data`'s binary features (other features, and all of them past
    /// [`MAX_FEATURES`], are [`Relation::Count`]).
    pub fn new(data: &Dataset) -> Self {
        let n = data.n_features();
        if n > MAX_FEATURES {
            return PairRelations::default();
        }
        let total = data.n_rows() as u64;
        let binary: Vec<bool> = (0..n).map(|f| data.n_values(f) == 2).collect();
        let sizes: Vec<u64> = (0..n)
            .map(|f| match binary[f] {
                true => data.rows_with(f, 1).count(),
                false => 0,
            })
            .collect();
        let mut relations = vec![Relation::Count; n * n];
        for f in (0..n).filter(|&f| binary[f]) {
            let column_f = data.rows_with(f, 1).words();
            for g in (f + 1..n).filter(|&g| binary[g]) {
                let both = intersection_count(column_f, data.rows_with(g, 1).words());
                let (size_f, size_g) = (sizes[f], sizes[g]);
                let (forward, backward) = if both == 0 {
                    (Relation::Disjoint, Relation::Disjoint)
                } else if both == size_f {
                    (Relation::FirstInSecond, Relation::SecondInFirst)
                } else if both == size_g {
                    (Relation::SecondInFirst, Relation::FirstInSecond)
                } else if size_f + size_g - both == total {
                    (Relation::Cover, Relation::Cover)
                } else {
                    continue;
                };
                relations[f * n + g] = forward;
                relations[g * n + f] = backward;
            }
        }
        PairRelations {
            n_features: n,
            relations,
        }
    }

    /// The relations of feature `f` (first) with every feature (second), indexed by feature;
    /// `None` when the table was not built.
    #[inline]
    pub fn of(&self, f: usize) -> Option<&[Relation]> {
        let n = self.n_features;
        self.relations.get(f * n..(f + 1) * n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Bitset;

    /// On random subsets of columns built to be disjoint, nested, covering or unrelated, every
    /// intersection the table claims to know equals a direct count, and the related pairs are
    /// all recognised.
    #[test]
    fn known_intersections_equal_direct_counts() {
        let mut rng = crate::search::SplitMix::new(7);
        let mut known = 0;
        for _ in 0..50 {
            let n = 2 + rng.below(300);
            let base: Vec<Vec<u32>> = (0..n)
                .map(|_| (0..3).map(|_| rng.below(2) as u32).collect())
                .collect();
            // a, b, c; a&b (in a), a&!b (disjoint from a&b), !a|c (covers with a), !a.
            let x: Vec<Vec<u32>> = base
                .iter()
                .map(|r| {
                    vec![
                        r[0],
                        r[1],
                        r[2],
                        r[0] & r[1],
                        r[0] & (1 - r[1]),
                        (1 - r[0]) | r[2],
                        1 - r[0],
                    ]
                })
                .collect();
            let refs: Vec<&[u32]> = x.iter().map(Vec::as_slice).collect();
            let y = vec![0u32; n];
            let data = crate::solvers::maptree::tests::dataset(&refs, &y, 2);
            let table = PairRelations::new(&data);
            let rows = Bitset::from_indices(n, (0..n).filter(|_| rng.below(2) > 0));
            let total = rows.count() as u32;
            for f in 0..7 {
                let size_f = rows.intersection_count(data.rows_with(f, 1)) as u32;
                for g in 0..7 {
                    let size_g = rows.intersection_count(data.rows_with(g, 1)) as u32;
                    let both = rows.and(data.rows_with(f, 1));
                    let direct = both.intersection_count(data.rows_with(g, 1)) as u32;
                    let relation = table.of(f).unwrap()[g];
                    if let Some(value) = relation.intersection(size_f, size_g, total) {
                        assert_eq!(value, direct, "features {f}, {g}: {relation:?}");
                        known += 1;
                    }
                }
            }
            // Built to be related on all rows (when the columns divide the rows at all).
            let related = |f: usize, g: usize| table.of(f).unwrap()[g] != Relation::Count;
            let divides = |f: usize| {
                let ones = data.rows_with(f, 1).count();
                ones > 0 && ones < n as u64
            };
            if divides(0) && divides(3) {
                assert!(related(3, 0) && related(0, 3));
            }
            if divides(3) && divides(4) {
                assert!(related(3, 4));
            }
            if divides(0) && divides(5) {
                assert!(related(0, 5));
            }
        }
        assert!(known > 1000, "only {known} known intersections");
    }
}
