//! Exact sub-solver for small subproblems (the fast search mode): a node holding at most
//! [`SMALL_ROWS`] rows is solved outright by dynamic programming over subsets of its rows,
//! instead of being expanded level by level by the best-first search.
//!
//! Subsets are bit masks over the node's rows (local indices), memoised with their depth (the
//! prior depends on it). The value of a split is `(no + yes) + penalty`, the same order as the
//! search, so a closed node's bounds are exactly what full expansion would converge to.

use std::collections::HashMap;

use super::model::Posterior;
use crate::data::{Bitset, Dataset};
use crate::tree::NodeSpec;

/// Largest number of rows the sub-solver takes.
pub const SMALL_ROWS: usize = 12;

/// A small subproblem: its rows, one mask per feature, and the memo of best values.
pub struct SmallProblem<'a> {
    data: &'a Dataset,
    model: &'a Posterior,
    /// Global index of each local row.
    rows: Vec<usize>,
    /// For each feature, the local rows whose value is 1.
    ones: Vec<u32>,
    memo: HashMap<(u32, u32), (f64, u32)>,
}

/// Marks "stop here".
const LEAF: u32 = u32::MAX;

impl<'a> SmallProblem<'a> {
    /// The subproblem of `rows` (at most [`SMALL_ROWS`] of them).
    pub fn new(data: &'a Dataset, model: &'a Posterior, rows: &Bitset) -> Self {
        let rows: Vec<usize> = rows.iter().collect();
        let ones = (0..data.n_features())
            .map(|f| {
                if data.n_values(f) < 2 {
                    return 0;
                }
                rows.iter()
                    .enumerate()
                    .filter(|(_, &r)| data.rows_with(f, 1).contains(r))
                    .fold(0u32, |m, (i, _)| m | (1 << i))
            })
            .collect();
        SmallProblem {
            data,
            model,
            rows,
            ones,
            memo: HashMap::new(),
        }
    }

    fn full(&self) -> u32 {
        (1u32 << self.rows.len()) - 1
    }

    fn counts(&self, mask: u32) -> Vec<u64> {
        let mut counts = vec![0u64; self.data.n_classes()];
        for (i, &r) in self.rows.iter().enumerate() {
            if mask >> i & 1 == 1 {
                counts[self.data.labels()[r] as usize] += 1;
            }
        }
        counts
    }

    fn valid(&self, mask: u32) -> Vec<usize> {
        (0..self.ones.len())
            .filter(|&f| {
                let yes = mask & self.ones[f];
                yes != 0 && yes != mask
            })
            .collect()
    }

    /// The optimal cost of the whole subproblem rooted at `depth`.
    pub fn solve(&mut self, depth: u32) -> f64 {
        self.best(self.full(), depth).0
    }

    fn best(&mut self, mask: u32, depth: u32) -> (f64, u32) {
        if let Some(&v) = self.memo.get(&(mask, depth)) {
            return v;
        }
        let counts = self.counts(mask);
        let valid = self.valid(mask);
        let mut best = (
            self.model.leaf_cost(depth, !valid.is_empty(), &counts),
            LEAF,
        );
        if !valid.is_empty() {
            let pen = self.model.split_penalty(depth, valid.len());
            for &f in &valid {
                let yes = mask & self.ones[f];
                let v = (self.best(mask & !yes, depth + 1).0 + self.best(yes, depth + 1).0) + pen;
                if v < best.0 {
                    best = (v, f as u32);
                }
            }
        }
        self.memo.insert((mask, depth), best);
        best
    }

    /// The optimal subtree rooted at `depth` (call after [`Self::solve`]).
    pub fn tree(&mut self, depth: u32) -> NodeSpec {
        self.subtree(self.full(), depth)
    }

    fn subtree(&mut self, mask: u32, depth: u32) -> NodeSpec {
        let (_, f) = self.best(mask, depth);
        let value: Vec<f64> = self.counts(mask).iter().map(|&c| c as f64).collect();
        if f == LEAF {
            return NodeSpec::Leaf { value };
        }
        let yes = mask & self.ones[f as usize];
        NodeSpec::Category {
            feature: f as usize,
            value,
            children: vec![
                self.subtree(mask & !yes, depth + 1),
                self.subtree(yes, depth + 1),
            ],
        }
    }

    /// The subtree in the reference's string form.
    pub fn text(&mut self, depth: u32, out: &mut String) {
        self.text_of(self.full(), depth, out);
    }

    fn text_of(&mut self, mask: u32, depth: u32, out: &mut String) {
        let (_, f) = self.best(mask, depth);
        if f == LEAF {
            return;
        }
        let yes = mask & self.ones[f as usize];
        out.push('(');
        self.text_of(mask & !yes, depth + 1, out);
        out.push_str(&f.to_string());
        self.text_of(yes, depth + 1, out);
        out.push(')');
    }
}
