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
//! Scores are integers of one of two widths, chosen per problem: `i64` whenever every score the
//! search can form fits in it with room to spare (every benchmark and nearly every real problem:
//! it needs `n_rows · W · (P + Q)` below 2^61, see [`fits`]), `i128` otherwise (`P, Q < 2^40`,
//! weights adding up to less than `2^53` and fewer than `2^31` rows: nothing overflows). The
//! narrow width makes a search node 30% smaller, and a search of millions of nodes waits on
//! memory more than on anything else.

use std::fmt::Debug;
use std::iter::Sum;
use std::ops::{Add, AddAssign, Mul, Neg, Sub};

use crate::error::Result;
use crate::param_err;

/// An integer score (see the module docs); the search is generic over its width.
pub trait Score:
    Copy
    + Ord
    + Default
    + Debug
    + Send
    + Sync
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Neg<Output = Self>
    + AddAssign
    + Sum
    + 'static
{
    const MIN: Self;
    /// Largest magnitude a problem's scores may reach in this width (see [`Scale::new`]).
    const ROOM: i128;
    /// `x`, which [`Scale::new`] has checked fits.
    fn from_wide(x: i128) -> Self;
    fn wide(self) -> i128;
}

impl Score for i64 {
    const MIN: Self = i64::MIN;
    const ROOM: i128 = 1 << 61;
    #[inline]
    fn from_wide(x: i128) -> Self {
        x as i64
    }
    #[inline]
    fn wide(self) -> i128 {
        i128::from(self)
    }
}

impl Score for i128 {
    const MIN: Self = i128::MIN;
    const ROOM: i128 = 1 << 125;
    #[inline]
    fn from_wide(x: i128) -> Self {
        x
    }
    #[inline]
    fn wide(self) -> i128 {
        self
    }
}

/// The constants that turn counts into scores for one problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scale<S> {
    /// λ numerator P.
    pub p: i128,
    /// λ denominator Q.
    pub q: i128,
    /// Tie-break multiplier M (the number of rows).
    pub m: i128,
    /// Total weight W of the training rows.
    pub total_weight: i128,
    /// Score of one unit of correctly classified weight: `M·Q`.
    pub leaf_unit: S,
    /// Cost of one split: `M·P·W + 1`.
    pub split_cost: S,
}

/// Whether every score of a problem fits in `S`. The search forms two kinds: a node's bounds,
/// between its leaf's score (at least 0) and all its rows correct (at most `M·Q·W`), and a
/// split's sum of its children's bounds less one split cost (at least `−(M·P·W + 1)`); so
/// `M·W·(Q + P) + 1` bounds every magnitude, and `S` must hold it with room to spare.
pub fn fits<S: Score>(p: u64, q: u64, n_rows: usize, total_weight: u64) -> bool {
    let (p, q, m, w) = (
        i128::from(p),
        i128::from(q),
        n_rows.max(1) as i128,
        i128::from(total_weight),
    );
    let bound = (m.checked_mul(w))
        .and_then(|mw| mw.checked_mul(q + p))
        .and_then(|x| x.checked_add(1));
    bound.is_some_and(|b| b < S::ROOM)
}

/// Most classes [`Scale::split_bound`] sorts (on the stack); more use the purification bound.
const MAX_CLASSES: usize = 16;

impl<S: Score> Scale<S> {
    /// The scale for λ = `p/q`, `n_rows` rows of total (integer) weight `total_weight`.
    pub fn new(p: u64, q: u64, n_rows: usize, total_weight: u64) -> Result<Scale<S>> {
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
        if !fits::<S>(p, q, n_rows, total_weight) {
            return param_err!(
                "scores of this problem do not fit the score type (weights too large)"
            );
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
            leaf_unit: S::from_wide(m * q),
            split_cost: S::from_wide(m * p * w + 1),
        })
    }

    /// The same scale without the tie-break: a split costs exactly `M·P·W`, so trees of equal
    /// objective score alike and the search returns the first optimal tree it proves instead
    /// of proving which has the fewest splits. With λ = 0 every equally accurate tree ties, and
    /// proving the fewest splits among them can cost far more than finding the accuracy
    /// (mushroom-f at depth 5: 47,000 expansions instead of 49).
    pub fn without_tie_break(self) -> Self {
        Scale {
            split_cost: S::from_wide(self.m * self.p * self.total_weight),
            ..self
        }
    }

    /// Score of a leaf that classifies `correct` weight correctly.
    #[inline]
    pub fn leaf(&self, correct: u64) -> S {
        self.leaf_unit * S::from_wide(i128::from(correct))
    }

    /// The purification bound's split term: every child pure, one split paid.
    #[inline]
    pub fn pure_split(&self, weight: u64) -> S {
        self.leaf(weight) - self.split_cost
    }

    /// Upper bound on the score of any tree with at least one split over rows of these class
    /// weights, when no split has more than `arity` children. A tree with `s` splits has at most
    /// `L = 1 + s·(arity − 1)` leaves, and each correct row is in a leaf predicting its class, so
    /// at most `L` classes contribute: the tree is worth at most the `L` heaviest class weights
    /// less `s` splits. The best `s` is the bound; it is the purification bound (every row
    /// correct, one split) when one split can reach every class, and below it otherwise: four
    /// classes split in two need three splits to be pure. Each further split adds the next
    /// `arity − 1` class weights, in decreasing order, so the terms rise and then fall and the
    /// first that does not rise is the peak. More than 16 classes (`MAX_CLASSES`) fall back to
    /// the purification bound (still a bound).
    pub fn split_bound(&self, class_weights: &[u64], arity: usize) -> S {
        let k = class_weights.len();
        if k <= arity || k > MAX_CLASSES {
            return self.pure_split(class_weights.iter().sum());
        }
        if arity == 2 {
            return self.binary_split_bound(class_weights);
        }
        // Heaviest first, by insertion: a handful of classes, sorted for every child of every
        // split a look-ahead tries.
        let mut buffer = [0u64; MAX_CLASSES];
        let sorted = &mut buffer[..k];
        for (i, &w) in class_weights.iter().enumerate() {
            let mut j = i;
            while j > 0 && sorted[j - 1] < w {
                sorted[j] = sorted[j - 1];
                j -= 1;
            }
            sorted[j] = w;
        }
        let k = sorted.iter().take_while(|&&w| w > 0).count();
        let step = arity.max(2) - 1;
        let mut covered = (1 + step).min(k);
        let mut best = self.pure_split(sorted[..covered].iter().sum());
        while covered < k {
            let gain = self.leaf(sorted[covered..(covered + step).min(k)].iter().sum());
            if gain <= self.split_cost {
                break;
            }
            best = best + gain - self.split_cost;
            covered += step;
        }
        best
    }

    /// Whether rows of total weight `weight` are worth at most one split: misclassifying all of
    /// them costs no more accuracy than λ. A split whose children, all but the largest, weigh
    /// this little is dominated (route every row through the largest child's subtree instead:
    /// no worse objective, one split fewer).
    pub fn negligible(&self, weight: u64) -> bool {
        self.q * i128::from(weight) <= self.p * self.total_weight
    }

    /// [`Scale::split_bound`] for splits in two, without sorting: each class past the two
    /// heaviest either pays a split of its own or is lost, whichever costs less, so the bound
    /// is the purification bound less `Σ min(leaf(w), split)` over those classes.
    fn binary_split_bound(&self, class_weights: &[u64]) -> S {
        let (mut first, mut second, mut total) = (0, 0, 0);
        let mut lost = S::default();
        for &w in class_weights {
            total += w;
            lost += self.leaf(w).min(self.split_cost);
            if w > first {
                (first, second) = (w, first);
            } else if w > second {
                second = w;
            }
        }
        let kept = self.leaf(first).min(self.split_cost) + self.leaf(second).min(self.split_cost);
        self.pure_split(total) - (lost - kept)
    }

    /// Exact objective value `correct/W − λ·splits` of a tree.
    pub fn objective(&self, correct: u64, splits: u64) -> f64 {
        let num = self.q * i128::from(correct) - self.p * self.total_weight * i128::from(splits);
        num as f64 / (self.q * self.total_weight) as f64
    }

    /// The best objective value a score bound allows: the largest `correct/W − λ·S` whose score
    /// can be at most `bound` (see the module docs for why this is `ceil(bound / M)` units).
    pub fn objective_bound(&self, bound: S) -> f64 {
        let bound = bound.wide();
        let units = bound.div_euclid(self.m) + i128::from(bound.rem_euclid(self.m) != 0);
        units as f64 / (self.q * self.total_weight) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The split bound is the best of `s = 1, 2, …` splits each reaching `arity − 1` more of
    /// the heaviest classes, never above the purification bound, and equal to it when one split
    /// reaches every class.
    #[test]
    fn split_bound_is_the_best_count_of_splits() {
        let s = Scale::<i64>::new(3, 100, 200, 200).expect("valid");
        let mut seed = 7u64;
        for _ in 0..2000 {
            let mut next = |m: u64| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                seed % m
            };
            let k = 1 + next(6) as usize;
            let weights: Vec<u64> = (0..k).map(|_| next(4) * next(12)).collect();
            let arity = 2 + next(3) as usize;
            let mut sorted = weights.clone();
            sorted.sort_unstable_by(|a, b| b.cmp(a));
            let brute = (1..=k as i64)
                .map(|splits| {
                    let leaves = (1 + splits as usize * (arity - 1)).min(k);
                    s.leaf(sorted[..leaves].iter().sum()) - s.split_cost * splits
                })
                .max()
                .expect("k >= 1");
            let bound = s.split_bound(&weights, arity);
            assert_eq!(bound, brute, "{weights:?} arity {arity}");
            let total = weights.iter().sum();
            assert!(bound <= s.pure_split(total));
            if weights.iter().filter(|&&w| w > 0).count() <= arity {
                assert_eq!(bound, s.pure_split(total));
            }
        }
        // Four classes split in two: three splits to be pure, or fewer splits and lost rows.
        let t = Scale::<i64>::new(1, 10, 100, 100).expect("valid");
        let bound = t.split_bound(&[50, 30, 15, 5], 2);
        assert_eq!(bound, t.leaf(95) - t.split_cost * 2);
    }

    #[test]
    fn ties_go_to_fewer_splits_and_better_objectives_always_win() {
        // λ = 1/100, 10 rows of weight 1.
        let s = Scale::<i128>::new(1, 100, 10, 10).expect("valid");
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
        let t = Scale::<i128>::new(1, 10, 10, 10).expect("valid");
        let tree_t =
            |correct: u64, splits: u64| t.leaf(correct) - t.split_cost * i128::from(splits);
        assert!(tree_t(9, 0) > tree_t(10, 1));
        assert_eq!(t.objective(9, 0), t.objective(10, 1));
    }

    #[test]
    fn objective_bound_recovers_the_objective_of_exact_scores() {
        let s = Scale::<i128>::new(1, 200, 958, 958).expect("valid");
        for (correct, splits) in [(822u64, 17u64), (958, 0), (0, 3), (500, 40)] {
            let score = s.leaf(correct) - s.split_cost * i128::from(splits);
            assert_eq!(s.objective_bound(score), s.objective(correct, splits));
        }
    }

    #[test]
    fn narrow_scores_only_where_every_score_fits() {
        assert!(fits::<i64>(1, 100, 8124, 8124));
        // 2^20 rows at λ = 1/2^21: M·W·(Q + P) just past 2^61, the room kept in an i64.
        assert!(!fits::<i64>(1, 1 << 21, 1 << 20, 1 << 20));
        assert!(fits::<i64>(1, (1 << 21) - 2, 1 << 20, 1 << 20));
        assert!(fits::<i128>(1, 1 << 21, 1 << 20, 1 << 20));
        assert!(Scale::<i64>::new(1, 1 << 21, 1 << 20, 1 << 20).is_err());
        // The widest problem the solver takes fits the wide scores.
        let widest = ((1 << 40) - 1, (1 << 40) - 1, (1 << 31) - 1, (1 << 53) - 1);
        assert!(fits::<i128>(widest.0, widest.1, widest.2, widest.3));
        let (a, b) = (
            Scale::<i64>::new(3, 7, 50, 60),
            Scale::<i128>::new(3, 7, 50, 60),
        );
        let (a, b) = (a.expect("fits"), b.expect("fits"));
        assert_eq!(
            a.leaf(41).wide() - a.split_cost.wide(),
            b.leaf(41) - b.split_cost
        );
    }

    #[test]
    fn bad_penalties_are_refused() {
        assert!(Scale::<i128>::new(1, 0, 1, 1).is_err());
        assert!(Scale::<i128>::new(1 << 41, 1, 1, 1).is_err());
        assert!(Scale::<i128>::new(1, 2, 1, 0).is_err());
    }
}
