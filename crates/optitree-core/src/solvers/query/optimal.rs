//! The exact optimum by dynamic programming over object subsets (spec §3.11), for small problems.
//!
//! The exponential cost decomposes over subtrees: with `F(S) = Σ_{leaves j under S} π_j λ^{depth
//! below S}`, a leaf has `F = π_S` and a split `F = λ (F(S_no) + F(S_yes))`; the optimum is
//! `log_λ F(Θ)`. We keep `ln F` so that huge λ cannot overflow. At λ = 1 the expected number of
//! queries `G(S) = π_S + G(S_no) + G(S_yes)`; at λ = ∞ the worst depth over objects with positive
//! mass `W(S) = 1 + max(W(S_no), W(S_yes))` (−∞ for a massless set).
//!
//! Subsets are `u32` bit masks, so at most [`MAX_OPTIMAL_OBJECTS`] objects. Queries inducing the
//! same partition (equal or complementary columns) are tried once, by their lowest index; ties
//! go to the lowest query index, so the result is deterministic.

use std::collections::HashMap;

use super::score::TIE_TOLERANCE;
use super::{QueryProblem, QueryTreeArrays};
use crate::error::Result;
use crate::param_err;

use crate::search::{Budget, Status};

/// Largest number of objects the exact programme accepts.
pub const MAX_OPTIMAL_OBJECTS: usize = 20;

/// The optimal tree and its cost `L*_λ`, or `None` with the status when the budget stopped it.
pub type OptimalResult = std::result::Result<(QueryTreeArrays, f64), Status>;

struct Programme<'a> {
    problem: &'a QueryProblem,
    lambda: f64,
    max_depth: Option<u32>,
    /// One representative column mask per distinct partition, with its query index.
    columns: Vec<(u32, usize)>,
    /// `(mask, depth) → (value, best query or usize::MAX for a leaf)`.
    memo: HashMap<u64, (f64, usize)>,
    budget: &'a Budget,
    stopped: Option<Status>,
}

/// Finds the tree of least cost `L_λ` (same leaves rule as the greedy builders: pure, at
/// `max_depth`, or unsplittable).
pub fn build_optimal(
    problem: &QueryProblem,
    lambda: f64,
    max_depth: Option<u32>,
    budget: &Budget,
) -> Result<OptimalResult> {
    let m = problem.n_objects();
    if m > MAX_OPTIMAL_OBJECTS {
        return param_err!(
            "the exact optimum is limited to {MAX_OPTIMAL_OBJECTS} objects (its cost doubles with \
             every object); this problem has {m}. Use a greedy criterion instead"
        );
    }
    super::check_cost_base(lambda)?;
    let full: u32 = if m == 32 { u32::MAX } else { (1u32 << m) - 1 };
    let mut seen = HashMap::new();
    let mut columns = Vec::new();
    for q in 0..problem.n_queries() {
        let mask = (0..m)
            .filter(|&i| problem.answer(i, q))
            .fold(0u32, |acc, i| acc | (1 << i));
        let canonical = mask.min(full ^ mask);
        if canonical != 0 && seen.insert(canonical, q).is_none() {
            columns.push((mask, q));
        }
    }
    let mut dp = Programme {
        problem,
        lambda,
        max_depth,
        columns,
        memo: HashMap::new(),
        budget,
        stopped: None,
    };
    let value = dp.solve(full, 0);
    if let Some(status) = dp.stopped {
        return Ok(Err(status));
    }
    let mut tree = QueryTreeArrays {
        leaf_of_object: vec![0; m],
        ..QueryTreeArrays::default()
    };
    let root = tree.push(0);
    dp.extract(full, root, &mut tree);
    let cost = if lambda > 1.0 && lambda.is_finite() {
        value / lambda.ln()
    } else {
        value
    };
    Ok(Ok((tree, cost)))
}

impl Programme<'_> {
    fn mass(&self, set: u32) -> f64 {
        members(set).map(|i| self.problem.prior()[i]).sum()
    }

    fn is_pure(&self, set: u32) -> bool {
        let mut groups = members(set).map(|i| self.problem.group(i));
        let first = groups.next();
        groups.all(|g| Some(g) == first)
    }

    fn key(&self, set: u32, depth: u32) -> u64 {
        // Without a depth limit the best subtree does not depend on where the set sits.
        let d = if self.max_depth.is_some() { depth } else { 0 };
        u64::from(set) | (u64::from(d) << 32)
    }

    fn leaf_value(&self, set: u32) -> f64 {
        let mass = self.mass(set);
        if self.lambda == 1.0 {
            0.0
        } else if self.lambda.is_infinite() {
            if mass > 0.0 {
                0.0
            } else {
                f64::NEG_INFINITY
            }
        } else {
            mass.ln()
        }
    }

    fn combine(&self, set: u32, no: f64, yes: f64) -> f64 {
        if self.lambda == 1.0 {
            self.mass(set) + no + yes
        } else if self.lambda.is_infinite() {
            1.0 + no.max(yes)
        } else {
            self.lambda.ln() + super::score::log_add_exp(no, yes)
        }
    }

    fn solve(&mut self, set: u32, depth: u32) -> f64 {
        let key = self.key(set, depth);
        if let Some(&(v, _)) = self.memo.get(&key) {
            return v;
        }
        if self.stopped.is_none() {
            self.stopped = self.budget.check(self.memo.len() as u64, 0);
        }
        let leaf = self.leaf_value(set);
        let at_limit = self.max_depth.is_some_and(|d| depth >= d);
        let mut best = (leaf, usize::MAX);
        if self.stopped.is_none() && !at_limit && !self.is_pure(set) {
            best = (f64::INFINITY, usize::MAX);
            for k in 0..self.columns.len() {
                let (mask, q) = self.columns[k];
                let (no, yes) = (set & !mask, set & mask);
                if no == 0 || yes == 0 {
                    continue;
                }
                let v0 = self.solve(no, depth + 1);
                let v1 = self.solve(yes, depth + 1);
                let v = self.combine(set, v0, v1);
                if v < best.0 - TIE_TOLERANCE * best.0.abs().max(1.0) || best.1 == usize::MAX {
                    best = (v, q);
                }
            }
            if best.1 == usize::MAX {
                best = (leaf, usize::MAX); // nothing splits the set: an ambiguous leaf
            }
        }
        self.memo.insert(key, best);
        best.0
    }

    fn extract(&self, set: u32, node: usize, tree: &mut QueryTreeArrays) {
        let depth = tree.depth[node];
        let best = self
            .memo
            .get(&self.key(set, depth))
            .map_or(usize::MAX, |b| b.1);
        if best == usize::MAX {
            for i in members(set) {
                tree.leaf_of_object[i] = node as u32;
            }
            return;
        }
        let yes_set = members(set)
            .filter(|&i| self.problem.answer(i, best))
            .fold(0u32, |acc, i| acc | (1 << i));
        let no_node = tree.push(depth + 1);
        let yes_node = tree.push(depth + 1);
        tree.set_split(node, best, no_node, yes_node);
        self.extract(set & !yes_set, no_node, tree);
        self.extract(yes_set, yes_node, tree);
    }
}

/// The indices of the set bits of `set`, lowest first.
fn members(set: u32) -> impl Iterator<Item = usize> {
    let mut rest = set;
    std::iter::from_fn(move || {
        (rest != 0).then(|| {
            let i = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            i
        })
    })
}
