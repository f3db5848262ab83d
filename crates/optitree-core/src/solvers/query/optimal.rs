//! The exact optimum by dynamic programming over object subsets (spec §3.11), for small problems.
//!
//! The exponential cost decomposes over subtrees: with `F(S) = Σ_{leaves j under S} π_j λ^{depth
//! below S}`, a leaf has `F = π_S` and a split `F = λ (F(S_no) + F(S_yes))`; the optimum is
//! `log_λ F(Θ)`. Two representations keep this accurate everywhere:
//! - for λ ≤ 4 the excess `E(S) = (F(S) − π_S)/(λ − 1)`, with `E = 0` at a leaf and
//!   `E = π_S + λ (E_no + E_yes)` at a split: at λ = 1 it is exactly the expected number of
//!   queries, and near 1 it does not cancel; the cost is `log1p((λ − 1) E(Θ)) / ln λ`;
//! - above, `ln F`, which cannot overflow however large λ is.
//!
//! At λ = ∞ the cost is the worst depth `W(S) = 1 + max(W(S_no), W(S_yes))`.
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

/// How subtree values are represented (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Domain {
    Excess,
    LogF,
    WorstDepth,
}

/// Up to this cost base values are kept as the excess `E`, above as `ln F`.
const EXCESS_UP_TO: f64 = 4.0;

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
    let full: u32 = (1u32 << m) - 1; // m <= 20
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
    let cost = match dp.domain() {
        Domain::Excess if lambda > 1.0 => ((lambda - 1.0) * value).ln_1p() / (lambda - 1.0).ln_1p(),
        Domain::LogF => value / lambda.ln(),
        _ => value,
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

    fn domain(&self) -> Domain {
        if self.lambda.is_infinite() {
            Domain::WorstDepth
        } else if self.lambda <= EXCESS_UP_TO {
            Domain::Excess
        } else {
            Domain::LogF
        }
    }

    fn leaf_value(&self, set: u32) -> f64 {
        match self.domain() {
            Domain::Excess | Domain::WorstDepth => 0.0,
            Domain::LogF => self.mass(set).ln(),
        }
    }

    fn combine(&self, set: u32, no: f64, yes: f64) -> f64 {
        match self.domain() {
            Domain::Excess => self.mass(set) + self.lambda * (no + yes),
            Domain::WorstDepth => 1.0 + no.max(yes),
            Domain::LogF => self.lambda.ln() + super::score::log_add_exp(no, yes),
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
            let domain = self.domain();
            for k in 0..self.columns.len() {
                let (mask, q) = self.columns[k];
                let (no, yes) = (set & !mask, set & mask);
                if no == 0 || yes == 0 {
                    continue;
                }
                let v0 = self.solve(no, depth + 1);
                let v1 = self.solve(yes, depth + 1);
                let v = self.combine(set, v0, v1);
                // Excess values are relative quantities; ln F and depths are compared absolutely.
                let scale = match domain {
                    Domain::Excess => best.0.abs(),
                    _ => best.0.abs().max(1.0),
                };
                if v < best.0 - TIE_TOLERANCE * scale || best.1 == usize::MAX {
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
