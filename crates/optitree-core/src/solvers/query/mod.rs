//! Query trees (Bellala, Bhavnani & Scott): identify an object, or only its group, by asking yes/no
//! membership queries, at small expected exponential cost `L_λ = log_λ Σ_leaves π_leaf λ^depth`.
//!
//! - [`score`]: the per-node greedy scores (GBS, λ-GBS, GGBS, λ-GGBS, count rules), numerically
//!   stable for every λ in `[1, ∞]`;
//! - [`greedy`]: the one top-down template all greedy builders share;
//! - [`optimal`]: the exact dynamic programme over object subsets, for small problems.
//!
//! Invariant of a [`QueryProblem`]: the matrix is `n_objects × n_queries` with entries 0/1, the
//! prior is finite, non-negative and sums to a positive number, and group codes are `< n_groups`.
//! Every built tree splits each internal node into two non-empty children.

pub mod greedy;
pub mod optimal;
pub mod score;

#[cfg(test)]
mod tests;

use crate::data_err;
use crate::error::Result;
use crate::param_err;

pub use greedy::build_greedy;
pub use optimal::{build_optimal, MAX_OPTIMAL_OBJECTS};
pub use score::{node_scores, tied_best, Criterion};

/// Objects × queries, a prior over the objects and optional group labels.
#[derive(Debug, Clone)]
pub struct QueryProblem {
    /// Row-major `n_objects × n_queries`, entries 0 or 1.
    answers: Vec<u8>,
    n_objects: usize,
    n_queries: usize,
    prior: Vec<f64>,
    /// Group code of every object; for object identification every object is its own group.
    groups: Vec<u32>,
    n_groups: usize,
    /// Whether `groups` came from the user (group identification) or are the objects themselves.
    grouped: bool,
}

impl QueryProblem {
    /// Checks and stores a problem. `groups = None` means object identification.
    pub fn new(
        answers: Vec<u8>,
        n_objects: usize,
        n_queries: usize,
        prior: Vec<f64>,
        groups: Option<Vec<u32>>,
    ) -> Result<Self> {
        if n_objects == 0 {
            return data_err!("the query matrix has no objects (rows)");
        }
        if answers.len() != n_objects * n_queries {
            return data_err!(
                "the query matrix has {} entries, expected {n_objects} objects × {n_queries} queries",
                answers.len()
            );
        }
        if let Some(pos) = answers.iter().position(|&a| a > 1) {
            return data_err!(
                "the query matrix must hold 0/1 answers; object {} query {} is {}",
                pos / n_queries.max(1),
                pos % n_queries.max(1),
                answers[pos]
            );
        }
        if prior.len() != n_objects {
            return data_err!(
                "prior has {} entries but there are {n_objects} objects",
                prior.len()
            );
        }
        if let Some(i) = prior.iter().position(|p| !(p.is_finite() && *p >= 0.0)) {
            return data_err!(
                "prior of object {i} is {}; priors must be finite and >= 0",
                prior[i]
            );
        }
        let total: f64 = prior.iter().sum();
        if !(total > 0.0 && total.is_finite()) {
            return data_err!("the prior sums to {total}; it must have a positive, finite total");
        }
        let (groups, n_groups, grouped) = match groups {
            None => ((0..n_objects as u32).collect(), n_objects, false),
            Some(g) => {
                if g.len() != n_objects {
                    return data_err!(
                        "groups has {} entries but there are {n_objects} objects",
                        g.len()
                    );
                }
                let (dense, n) = dense_codes(&g);
                (dense, n, true)
            }
        };
        Ok(QueryProblem {
            answers,
            n_objects,
            n_queries,
            prior: prior.iter().map(|p| p / total).collect(),
            groups,
            n_groups,
            grouped,
        })
    }

    /// Number of objects (rows).
    pub fn n_objects(&self) -> usize {
        self.n_objects
    }
    /// Number of queries (columns).
    pub fn n_queries(&self) -> usize {
        self.n_queries
    }
    /// The answers of object `i` to every query.
    pub fn row(&self, i: usize) -> &[u8] {
        &self.answers[i * self.n_queries..(i + 1) * self.n_queries]
    }
    /// Whether object `i` answers yes to query `q`.
    pub fn answer(&self, i: usize, q: usize) -> bool {
        self.answers[i * self.n_queries + q] == 1
    }
    /// The normalised prior.
    pub fn prior(&self) -> &[f64] {
        &self.prior
    }
    /// Group code of object `i` (its own index under object identification).
    pub fn group(&self, i: usize) -> u32 {
        self.groups[i]
    }
    /// Number of group codes.
    pub fn n_groups(&self) -> usize {
        self.n_groups
    }
    /// Whether the target is the group (true) or the object (false).
    pub fn grouped(&self) -> bool {
        self.grouped
    }
    /// Whether every object of `objects` has the same target (object, or group).
    pub fn is_pure(&self, objects: &[u32]) -> bool {
        objects.split_first().is_none_or(|(first, rest)| {
            rest.iter()
                .all(|&i| self.groups[i as usize] == self.groups[*first as usize])
        })
    }
}

/// How ties between equally good queries are broken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TieBreak {
    /// The lowest query index.
    First,
    /// Uniformly among the tied queries, from a seeded generator.
    Random(u64),
}

/// What a greedy builder or the exact programme needs besides the problem.
#[derive(Debug, Clone, Copy)]
pub struct QueryConfig {
    /// The per-node rule.
    pub criterion: Criterion,
    /// The cost base λ in `[1, ∞]`.
    pub lambda: f64,
    /// Tie policy.
    pub tie_break: TieBreak,
    /// Nodes at this depth become (possibly ambiguous) leaves.
    pub max_depth: Option<u32>,
}

impl QueryConfig {
    /// Checks λ.
    pub fn validate(&self) -> Result<()> {
        check_cost_base(self.lambda)
    }
}

/// Checks that a cost base λ lies in `[1, ∞]`.
pub fn check_cost_base(lambda: f64) -> Result<()> {
    if lambda.is_nan() || lambda < 1.0 {
        return param_err!("cost_base must be a number >= 1 (or infinity), got {lambda}");
    }
    Ok(())
}

/// A built query tree as arrays: node 0 is the root, `-1` marks "none".
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QueryTreeArrays {
    /// The query asked at each node, −1 at leaves.
    pub query: Vec<i64>,
    /// Child taking the objects that answer no (0), −1 at leaves.
    pub child_no: Vec<i64>,
    /// Child taking the objects that answer yes (1), −1 at leaves.
    pub child_yes: Vec<i64>,
    /// Depth of every node.
    pub depth: Vec<u32>,
    /// The leaf every object reaches.
    pub leaf_of_object: Vec<u32>,
}

impl QueryTreeArrays {
    /// Appends a node and returns its index.
    fn push(&mut self, depth: u32) -> usize {
        self.query.push(-1);
        self.child_no.push(-1);
        self.child_yes.push(-1);
        self.depth.push(depth);
        self.query.len() - 1
    }

    /// Turns leaf `node` into a split on `query` with the two given children.
    fn set_split(&mut self, node: usize, query: usize, no: usize, yes: usize) {
        self.query[node] = query as i64;
        self.child_no[node] = no as i64;
        self.child_yes[node] = yes as i64;
    }

    /// Number of nodes.
    pub fn n_nodes(&self) -> usize {
        self.query.len()
    }
}

/// Group codes renumbered `0..n` in order of first appearance (scoring allocates per code).
fn dense_codes(codes: &[u32]) -> (Vec<u32>, usize) {
    let mut map = std::collections::HashMap::new();
    let dense = codes
        .iter()
        .map(|&c| {
            let next = map.len() as u32;
            *map.entry(c).or_insert(next)
        })
        .collect();
    (dense, map.len())
}

/// Splits `objects` into (no, yes) by their answer to `query`, keeping relative order.
fn partition(problem: &QueryProblem, objects: &[u32], query: usize) -> (Vec<u32>, Vec<u32>) {
    objects
        .iter()
        .partition(|&&i| !problem.answer(i as usize, query))
}
