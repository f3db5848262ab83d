//! Exact integer scores for the Branches objective.
//!
//! The objective of a tree T is `correct(T)/W − λ·S(T)` with W the total row weight, S the number
//! of splits and λ = P/Q an exact rational. Scaled by `Q·W` it is the integer
//! `Q·correct − P·W·S`. The search uses
//!
//! ```text
//! score(T) = M·(Q·correct(T) − P·W·S(T)) − S(T),     M = n_rows
//! ```
//!
//! which is additive over the tree (every leaf adds `M·Q·correct(leaf)`, every split subtracts
//! `M·P·W + 1`) and orders trees lexicographically by (objective, −splits): a tree with a
//! strictly better objective is better by at least `M` units, more than any difference in the
//! number of splits of the trees that matter (a tree without useless splits has fewer than
//! `n_rows` of them, and removing useless splits never lowers the objective). So exact ties go to
//! fewer splits without any special case in the search.
//!
//! Invariant: all arithmetic is in `i128`; with `P, Q < 2^40` and weights below `2^53` nothing
//! overflows.

use crate::error::Result;
use crate::param_err;

/// Integer score of a (sub)tree, see the module docs.
pub type Score = i128;

/// The constants that turn counts into scores for one problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scale {
    /// λ numerator P.
    pub p: i128,
    /// λ denominator Q.
    pub q: i128,
    /// Tie-break multiplier M (the number of rows).
    pub m: i128,
    /// Total weight W of the training rows.
    pub total_weight: i128,
    /// Score of one unit of correctly classified weight: `M·Q`.
    pub leaf_unit: Score,
    /// Cost of one split: `M·P·W + 1`.
    pub split_cost: Score,
}

impl Scale {
    /// The scale for λ = `p/q`, `n_rows` rows of total (integer) weight `total_weight`.
    pub fn new(p: u64, q: u64, n_rows: usize, total_weight: u64) -> Result<Scale> {
        if q == 0 {
            return param_err!("penalty denominator must be positive");
        }
        if p >= (1 << 40) || q >= (1 << 40) {
            return param_err!(
                "penalty {p}/{q} is too finely divided; use at most 12 significant digits"
            );
        }
        if total_weight == 0 {
            return param_err!("the total sample weight is zero");
        }
        let (p, q, m, w) = (
            i128::from(p),
            i128::from(q),
            n_rows.max(1) as i128,
            i128::from(total_weight),
        );
        Ok(Scale {
            p,
            q,
            m,
            total_weight: w,
            leaf_unit: m * q,
            split_cost: m * p * w + 1,
        })
    }

    /// Score of a leaf that classifies `correct` weight correctly.
    pub fn leaf(&self, correct: u64) -> Score {
        self.leaf_unit * i128::from(correct)
    }

    /// The purification bound's split term: every child pure, one split paid.
    pub fn pure_split(&self, weight: u64) -> Score {
        self.leaf_unit * i128::from(weight) - self.split_cost
    }

    /// Whether rows of total weight `weight` are worth at most one split: misclassifying all of
    /// them costs no more accuracy than λ. A split whose children, all but the largest, weigh
    /// this little is dominated (route every row through the largest child's subtree instead:
    /// no worse objective, one split fewer).
    pub fn negligible(&self, weight: u64) -> bool {
        self.q * i128::from(weight) <= self.p * self.total_weight
    }

    /// Exact objective value `correct/W − λ·splits` of a tree.
    pub fn objective(&self, correct: u64, splits: u64) -> f64 {
        let num = self.q * i128::from(correct) - self.p * self.total_weight * i128::from(splits);
        num as f64 / (self.q * self.total_weight) as f64
    }

    /// The best objective value a score bound allows: the largest `correct/W − λ·S` whose score
    /// can be at most `bound` (see the module docs for why this is `ceil(bound / M)` units).
    pub fn objective_bound(&self, bound: Score) -> f64 {
        let units = bound.div_euclid(self.m) + i128::from(bound.rem_euclid(self.m) != 0);
        units as f64 / (self.q * self.total_weight) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_go_to_fewer_splits_and_better_objectives_always_win() {
        // λ = 1/100, 10 rows of weight 1.
        let s = Scale::new(1, 100, 10, 10).expect("valid");
        let tree = |correct: u64, splits: u64| s.leaf(correct) - s.split_cost * i128::from(splits);
        assert!(
            tree(10, 1) > tree(9, 0),
            "one more correct row (0.1) beats a split at λ = 0.01"
        );
        assert!(
            tree(10, 5) > tree(9, 0),
            "0.95 beats 0.9 whatever the splits"
        );
        // Exact tie in objective (λ = 1/10: one split buys exactly one row) goes to fewer splits.
        let t = Scale::new(1, 10, 10, 10).expect("valid");
        let tree_t =
            |correct: u64, splits: u64| t.leaf(correct) - t.split_cost * i128::from(splits);
        assert!(tree_t(9, 0) > tree_t(10, 1));
        assert_eq!(t.objective(9, 0), t.objective(10, 1));
    }

    #[test]
    fn objective_bound_recovers_the_objective_of_exact_scores() {
        let s = Scale::new(1, 200, 958, 958).expect("valid");
        for (correct, splits) in [(822u64, 17u64), (958, 0), (0, 3), (500, 40)] {
            let score = s.leaf(correct) - s.split_cost * i128::from(splits);
            assert_eq!(s.objective_bound(score), s.objective(correct, splits));
        }
    }

    #[test]
    fn bad_penalties_are_refused() {
        assert!(Scale::new(1, 0, 1, 1).is_err());
        assert!(Scale::new(1 << 41, 1, 1, 1).is_err());
        assert!(Scale::new(1, 2, 1, 0).is_err());
    }
}
