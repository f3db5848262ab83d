//! A depth-two solve from pair counts, for two classes, unweighted rows and binary features.
//!
//! Splitting on `f`, then on `g` below, sorts the node's rows by their values of `f` and `g`;
//! with two classes, every count a solve reads follows from the node's counts of `f = 0`,
//! `g = 0` and of the rows with both, each with the count of class 0 among them. So the
//! solve counts each pair of features once (half of what counting a child's table per split
//! reads, since `(f, g)` and `(g, f)` meet the same rows), over only the node's non-empty
//! words copied side by side, and then reads every split's children's best stumps off the
//! counts by arithmetic, without tables. Same values and the same trees as
//! [`Graph::split_of_depth_two`]: the counts are exact and the stumps are tried in the same
//! order with the same tie rule.
//!
//! A solve from tables counted a child's whole table for nearly every split it tried (21 of
//! 24 on tic-tac-toe at depth 6, whose one-level bounds rarely cut), about 18 µs a solve and
//! half of that search; from pairs, the search takes 34% less time (795 → 522 ms), monk2 at
//! depth 6 18% less. Where many features remain (see `depth_two::SIMILAR_FEATURES`), the
//! table solve's sibling bounds skip more splits than pairs save, and it stays.

use super::*;
use crate::data::popcount;

/// Counts of one set of rows: how many, and how many of class 0.
#[derive(Debug, Clone, Copy, Default)]
struct Count {
    rows: u32,
    zeros: u32,
}

impl Count {
    fn less(self, other: Count) -> Count {
        Count {
            rows: self.rows - other.rows,
            zeros: self.zeros - other.zeros,
        }
    }

    /// Rows a leaf predicting the majority classifies correctly.
    fn majority(self) -> u32 {
        self.zeros.max(self.rows - self.zeros)
    }
}

/// Rows the two leaves of a stump classify correctly, its children `a` and `b` given as
/// (rows, rows of class 0); written out so that a loop over stumps vectorises.
#[inline(always)]
fn pair_stump_correct(a_rows: u32, a_zeros: u32, b_rows: u32, b_zeros: u32) -> u32 {
    a_zeros.max(a_rows - a_zeros) + b_zeros.max(b_rows - b_zeros)
}

/// The pair counts of one solve, with the buffers that make them.
#[derive(Default)]
pub(super) struct PairCounts {
    /// Per pool feature, the node's rows with that feature 0 over its non-empty words
    /// (`zero_rows[p * words + j]`).
    zero_rows: Vec<u64>,
    /// The node's non-empty words, and its rows of class 0 over them.
    index: Vec<u32>,
    class_mask: Vec<u64>,
    /// Per pool feature, the count of its value 0.
    singles: Vec<Count>,
    /// `both_rows[p * n + q]` and `both_zeros[p * n + q]`: the count of rows with both pool
    /// features `p` and `q` at 0 (row-major, `n` = pool size; split in two arrays so that
    /// the stumps' loop vectorises).
    both_rows: Vec<u32>,
    both_zeros: Vec<u32>,
    /// Rows each stump of the child being solved classifies correctly.
    correct: Vec<u32>,
    /// Pool positions by feature (valid for this solve's pool only).
    position: Vec<u32>,
    n: usize,
    total: Count,
}

impl PairCounts {
    /// Heap bytes of its buffers.
    pub(super) fn heap_bytes(&self) -> usize {
        (self.zero_rows.capacity() + self.class_mask.capacity()) * 8
            + self.singles.capacity() * std::mem::size_of::<Count>()
            + (self.both_rows.capacity() + self.both_zeros.capacity()) * 4
            + (self.index.capacity() + self.correct.capacity() + self.position.capacity()) * 4
    }

    /// Counts every pair of `pool`'s features over `rows`, of class `totals` (see the
    /// module's comment); returns the work done (pairs × words).
    pub(super) fn count(
        &mut self,
        data: &Dataset,
        rows: &Bitset,
        pool: &[u32],
        totals: &[u64],
    ) -> u64 {
        self.total = Count {
            rows: (totals[0] + totals[1]) as u32,
            zeros: totals[0] as u32,
        };
        let row_words = rows.words();
        let class_words = data.rows_of_class(0).words();
        self.index.clear();
        (self.index).extend((0..row_words.len() as u32).filter(|&i| row_words[i as usize] != 0));
        let index = self.index.iter().map(|&i| i as usize);
        self.class_mask.clear();
        self.class_mask
            .extend(index.clone().map(|i| row_words[i] & class_words[i]));
        let words = self.class_mask.len();
        let n = pool.len();
        self.n = n;
        self.zero_rows.clear();
        self.singles.clear();
        self.position.resize(data.n_features(), NONE);
        for (p, &f) in pool.iter().enumerate() {
            self.position[f as usize] = p as u32;
            let zero_words = data.rows_with(f as usize, 0).words();
            let start = self.zero_rows.len();
            self.zero_rows
                .extend(index.clone().map(|i| row_words[i] & zero_words[i]));
            // Its rows, and those of class 0: the intersection of its rows with themselves.
            let zero_rows = &self.zero_rows[start..];
            let (rows, zeros) =
                popcount::intersection_counts2(zero_rows, zero_rows, &self.class_mask);
            self.singles.push(Count {
                rows: rows as u32,
                zeros: zeros as u32,
            });
        }
        self.both_rows.clear();
        self.both_rows.resize(n * n, 0);
        self.both_zeros.clear();
        self.both_zeros.resize(n * n, 0);
        for p in 0..n {
            // A feature with itself: all its rows at 0 (a stump on the node's own split
            // leaves its child whole, so it never beats the leaf).
            (self.both_rows[p * n + p], self.both_zeros[p * n + p]) =
                (self.singles[p].rows, self.singles[p].zeros);
            let a = &self.zero_rows[p * words..][..words];
            for q in p + 1..n {
                let b = &self.zero_rows[q * words..][..words];
                let (rows, zeros) = popcount::intersection_counts2(a, b, &self.class_mask);
                let (rows, zeros) = (rows as u32, zeros as u32);
                (self.both_rows[p * n + q], self.both_zeros[p * n + q]) = (rows, zeros);
                (self.both_rows[q * n + p], self.both_zeros[q * n + p]) = (rows, zeros);
            }
        }
        // The pairs' words, and the arithmetic of reading every split's stumps off them.
        (n * n * words / 2 + n * n) as u64
    }

    /// Writes the node's child counts on `pool` into `table`, as [`Graph::count_table`] would:
    /// per feature, from `offsets`, the cells `[class 0, class 1, rows]` of its values 0 and 1.
    pub(super) fn fill_table(&self, pool: &[u32], offsets: &[usize], table: &mut Vec<u64>) {
        table.resize(offsets[offsets.len() - 1], 0);
        for (&f, &zero) in pool.iter().zip(&self.singles) {
            let one = self.total.less(zero);
            let cells = &mut table[offsets[f as usize]..][..6];
            for (cell, c) in cells.chunks_exact_mut(3).zip([zero, one]) {
                let (rows, zeros) = (u64::from(c.rows), u64::from(c.zeros));
                cell.copy_from_slice(&[zeros, rows - zeros, rows]);
            }
        }
    }

    /// Fills `correct` with what each stump classifies correctly in the child `f = side` of
    /// the split on pool feature `p`, whose counts are `child`; returns the most.
    fn stumps_of_child(&mut self, p: usize, side: usize, child: Count) -> u32 {
        let n = self.n;
        let (both_rows, both_zeros) = (
            &self.both_rows[p * n..][..n],
            &self.both_zeros[p * n..][..n],
        );
        self.correct.resize(n, 0);
        if side == 0 {
            // g = 0 within f = 0: the pair's rows; g = 1: the rest of the child.
            for q in 0..n {
                let (r, z) = (both_rows[q], both_zeros[q]);
                self.correct[q] = pair_stump_correct(r, z, child.rows - r, child.zeros - z);
            }
        } else {
            // g = 0 within f = 1: g's rows less the pair's; g = 1: the rest of the child.
            for (q, g) in self.singles.iter().enumerate() {
                let (r, z) = (g.rows - both_rows[q], g.zeros - both_zeros[q]);
                self.correct[q] = pair_stump_correct(r, z, child.rows - r, child.zeros - z);
            }
        }
        self.correct.iter().copied().max().unwrap_or(0)
    }

    /// The children of the stump on pool feature `q` within the child `f = side` (counts
    /// `child`) of the split on pool feature `p`.
    fn stump_children(&self, p: usize, q: usize, side: usize, child: Count) -> (Count, Count) {
        let both = Count {
            rows: self.both_rows[p * self.n + q],
            zeros: self.both_zeros[p * self.n + q],
        };
        let g_zero = if side == 0 {
            both
        } else {
            self.singles[q].less(both)
        };
        (g_zero, child.less(g_zero))
    }
}

impl<S: Score> Graph<'_, S> {
    /// Whether a depth-two solve over `pool` can read its counts from pairs: two classes,
    /// unweighted rows (counted in 32 bits) and every feature binary.
    pub(super) fn can_solve_by_pairs(&self, pool: &[u32]) -> bool {
        self.weights.is_none()
            && self.data.n_classes() == 2
            && self.data.n_rows() <= u32::MAX as usize
            && pool.iter().all(|&f| self.data.n_values(f as usize) == 2)
    }

    /// The value of splitting the counted rows on `f` with each child's best tree of depth at
    /// most one ([`Graph::best_of_depth_one`]'s, from pair counts), if it beats `best`; the
    /// children's features are then in `picks` (by value).
    pub(super) fn split_by_pairs(
        &self,
        pairs: &mut PairCounts,
        pool: &[u32],
        f: u32,
        best: S,
        picks: &mut Vec<u32>,
    ) -> Option<S> {
        let p = pairs.position[f as usize] as usize;
        let zero = pairs.singles[p];
        let one = pairs.total.less(zero);
        let (v0, pick0) = self.best_stump_by_pairs(pairs, pool, p, 0, zero);
        let (v1, pick1) = self.best_stump_by_pairs(pairs, pool, p, 1, one);
        let value = v0 + v1 - self.scale.split_cost;
        picks.clear();
        picks.extend([pick0, pick1]);
        (value > best).then_some(value)
    }

    /// [`Graph::best_of_depth_one`] for the child `f = side` (counts `child`) of the split on
    /// pool feature `p`. The first stump, in pool order, of the most rows correct is the
    /// answer if usable; otherwise the stumps are tried one by one as `best_stump` does.
    fn best_stump_by_pairs(
        &self,
        pairs: &mut PairCounts,
        pool: &[u32],
        p: usize,
        side: usize,
        child: Count,
    ) -> (S, u32) {
        let majority = child.majority();
        let leaf = self.scale.leaf(u64::from(majority));
        let totals = [u64::from(child.zeros), u64::from(child.rows - child.zeros)];
        if self.closed(&self.summary(&totals), 1) {
            return (leaf, NONE);
        }
        let most = pairs.stumps_of_child(p, side, child);
        if most <= majority {
            return (leaf, NONE);
        }
        let usable = |q: usize| {
            let (a, b) = pairs.stump_children(p, q, side, child);
            self.pair_usable(a, b)
        };
        let first = pairs.correct.iter().position(|&c| c == most).unwrap_or(0);
        let (best, stump) = if usable(first) {
            (most, pool[first])
        } else {
            let (mut best, mut stump) = (majority, NONE);
            for (q, &correct) in pairs.correct.iter().enumerate() {
                if correct > best && usable(q) {
                    (best, stump) = (correct, pool[q]);
                }
            }
            (best, stump)
        };
        let value = self.scale.leaf(u64::from(best)) - self.scale.split_cost;
        match stump {
            g if g != NONE && value > leaf => (value, g),
            _ => (leaf, NONE),
        }
    }

    /// [`Graph::stump_usable`] for a stump with children `a` and `b`, from their cells.
    fn pair_usable(&self, a: Count, b: Count) -> bool {
        let cells = [
            a.zeros,
            a.rows - a.zeros,
            a.rows,
            b.zeros,
            b.rows - b.zeros,
            b.rows,
        ];
        self.stump_usable(&cells.map(u64::from), &[])
    }
}
