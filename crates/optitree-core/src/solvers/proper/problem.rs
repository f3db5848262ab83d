//! What both engines optimise: the leaf objective over class counts, the prefix-closed
//! constraints (minimum leaf size, maximum depth) and the ancestry relation between rules.
//!
//! Invariant: a leaf's cost depends only on its row set, and a tree's cost is the sum of its
//! leaves' costs (g = +, non-decreasing), so optimal subtrees combine (spec §2.5). A leaf with
//! fewer than `min_leaf` rows is infeasible (cost `+∞`).

use super::rules::RuleSet;
use super::words;

/// The leaf loss `f`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Objective {
    /// Rows not of the leaf's majority class (an integer).
    Misclassification,
    /// `n · (1 − Σ p_c²)`.
    Gini,
    /// `n · H(p)` in nats.
    Entropy,
}

impl Objective {
    /// The loss of a leaf with these class counts (never `-0.0`: a pure leaf's entropy sums
    /// `-c·ln 1`, and costs are compared by their bits).
    pub fn leaf(self, counts: &[u64]) -> f64 {
        self.signed_leaf(counts) + 0.0
    }

    fn signed_leaf(self, counts: &[u64]) -> f64 {
        let n: u64 = counts.iter().sum();
        if n == 0 {
            return 0.0;
        }
        match self {
            Objective::Misclassification => (n - counts.iter().copied().max().unwrap_or(0)) as f64,
            Objective::Gini => {
                let nf = n as f64;
                let sq: f64 = counts.iter().map(|&c| (c as f64) * (c as f64)).sum();
                nf - sq / nf
            }
            Objective::Entropy => {
                let nf = n as f64;
                counts
                    .iter()
                    .filter(|&&c| c > 0)
                    .map(|&c| {
                        let c = c as f64;
                        -c * (c / nf).ln()
                    })
                    .sum()
            }
        }
    }

    /// Whether every cost is an integer (so bounds may be subtracted exactly).
    pub fn integral(self) -> bool {
        self == Objective::Misclassification
    }
}

/// The data, rules and constraints of one solve.
#[derive(Debug)]
pub struct Problem<'a> {
    /// The candidate rules.
    pub rules: &'a RuleSet,
    classes: Vec<u64>,
    n_classes: usize,
    /// The leaf loss.
    pub objective: Objective,
    /// Smallest allowed leaf (0 allows empty leaves, the paper's convention).
    pub min_leaf: u64,
}

impl<'a> Problem<'a> {
    /// `labels[i]` in `0..n_classes` is row `i`'s class.
    pub fn new(
        rules: &'a RuleSet,
        labels: &[u32],
        n_classes: usize,
        objective: Objective,
        min_leaf: u64,
    ) -> Problem<'a> {
        let w = rules.n_words();
        let mut classes = vec![0u64; n_classes * w];
        for (i, &c) in labels.iter().enumerate() {
            words::insert(&mut classes[c as usize * w..(c as usize + 1) * w], i);
        }
        Problem {
            rules,
            classes,
            n_classes,
            objective,
            min_leaf,
        }
    }

    /// Number of classes.
    pub fn n_classes(&self) -> usize {
        self.n_classes
    }

    /// Words per row set.
    pub fn n_words(&self) -> usize {
        self.rules.n_words()
    }

    /// The rows of class `c`.
    pub fn class(&self, c: usize) -> &[u64] {
        let w = self.n_words();
        &self.classes[c * w..(c + 1) * w]
    }

    /// Class counts of `mask` into `out`.
    pub fn counts(&self, mask: &[u64], out: &mut [u64]) {
        for (c, o) in out.iter_mut().enumerate() {
            *o = words::and_count(mask, self.class(c));
        }
    }

    /// Cost of `mask` as one leaf (`+∞` below the minimum leaf size).
    pub fn leaf_cost(&self, mask: &[u64]) -> f64 {
        let mut counts = [0u64; 16];
        if self.n_classes <= counts.len() {
            let c = &mut counts[..self.n_classes];
            self.counts(mask, c);
            self.leaf_from_counts(c)
        } else {
            let mut c = vec![0u64; self.n_classes];
            self.counts(mask, &mut c);
            self.leaf_from_counts(&c)
        }
    }

    /// Cost of a leaf with these counts (`+∞` below the minimum leaf size).
    #[inline]
    pub fn leaf_from_counts(&self, counts: &[u64]) -> f64 {
        if counts.iter().sum::<u64>() < self.min_leaf {
            f64::INFINITY
        } else {
            self.objective.leaf(counts)
        }
    }

    /// The ancestry relation `K[i][j]` (spec §1.4): +1 when every defining point of `j` is on
    /// `i`'s left side, −1 when all are on its right side, 0 otherwise and on the diagonal.
    #[inline]
    pub fn ancestry(&self, i: usize, j: usize) -> i8 {
        ancestry(self.rules, i, j)
    }
}

/// The smallest float above a non-negative `x` (`+∞` stays): the bound under which a value may
/// still tie `x`.
pub fn next_up(x: f64) -> f64 {
    if x.is_finite() {
        f64::from_bits(x.to_bits() + 1)
    } else {
        x
    }
}

/// `K[i][j]` over a rule set (see [`Problem::ancestry`]).
#[inline]
pub fn ancestry(rules: &RuleSet, i: usize, j: usize) -> i8 {
    if i == j {
        return 0;
    }
    let side = rules.plus(i);
    let mut left = 0usize;
    let def = rules.defining(j);
    for &p in def {
        if words::contains(side, p as usize) {
            left += 1;
        }
    }
    if left == def.len() {
        1
    } else if left == 0 {
        -1
    } else {
        0
    }
}
