//! Branches (Chaouki, Read & Bifet): optimal sparse decision trees with multiway splits on
//! categorical features, by best-first branch and bound (AO*) with the purification bound.
//!
//! Maximises `accuracy − λ·splits` exactly (λ = P/Q rational, integer row weights), ties going to
//! fewer splits unless `fewest_splits` is off (see [`score`]). The search state lives in one
//! [`graph::Graph`] per call: nothing is shared between solves.

pub mod graph;
mod row_order;
pub mod score;
mod search;
mod splits;
mod tables;

#[cfg(test)]
mod tests;

use crate::data::{Dataset, Table};
use crate::error::Result;
use crate::search::{Budget, Outcome, ProgressBoard};
use crate::tree::Tree;
use crate::{data_err, param_err};

use graph::{Graph, Limits};
use score::Scale;

/// Parameters of a Branches solve.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BranchesConfig {
    /// λ = `penalty.0 / penalty.1`, the price of one split in accuracy.
    pub penalty: (u64, u64),
    /// Longest root-to-leaf path allowed (None: unlimited).
    pub max_depth: Option<u32>,
    /// Fewest rows a non-empty leaf may hold.
    pub min_samples_leaf: u64,
    /// Among trees of equal objective, prove and return one with the fewest splits (`true`), or
    /// return the first optimal tree found (`false`; see [`Scale::without_tie_break`]).
    pub fewest_splits: bool,
}

/// The tree found and its exact objective.
#[derive(Debug, Clone)]
pub struct BranchesSolution {
    /// The tree (multiway category nodes and leaves, class totals on every node).
    pub tree: Tree,
    /// Weight of the training rows the tree classifies correctly.
    pub correct: u64,
    /// Number of splits.
    pub splits: u64,
    /// `correct / total weight − λ·splits`.
    pub objective: f64,
}

/// Largest total weight the search takes: its widest scores multiply the total by the penalty's
/// denominator and the number of rows in `i128` (see [`score::fits`]).
const MAX_TOTAL_WEIGHT: u64 = 1 << 53;

/// Integer row weights from the dataset's weights (which must be whole numbers adding up to
/// less than [`MAX_TOTAL_WEIGHT`]).
fn integer_weights(data: &Table) -> Result<Option<Vec<u64>>> {
    let Some(w) = data.weights() else {
        return Ok(None);
    };
    let mut out = Vec::with_capacity(w.len());
    let mut total = 0u64;
    for (i, &x) in w.iter().enumerate() {
        if x.fract() != 0.0 || !(0.0..9.0e15).contains(&x) {
            return data_err!("sample_weight[{i}] = {x}: the Branches solver needs whole-number weights below 9e15");
        }
        total = total.saturating_add(x as u64);
        out.push(x as u64);
    }
    if total >= MAX_TOTAL_WEIGHT {
        return data_err!(
            "the sample weights add up to {total} or more: the Branches solver needs whole-number \
             weights adding up to less than 2^53 (scale them down)"
        );
    }
    Ok(Some(out))
}

/// Finds the tree maximising `accuracy − λ·splits` on the data of `data` (see the module
/// docs), with 64-bit scores whenever they fit (see [`score`]). The search builds its own
/// [`Dataset`] from the table (taken over: on many rows it is reordered, and the order it was
/// given is dropped), with the rows in the order it prefers.
pub fn solve(
    data: Table,
    config: &BranchesConfig,
    budget: &Budget,
    board: Option<&ProgressBoard>,
) -> Result<Outcome<BranchesSolution>> {
    solve_with_chains(data, config, &[], budget, board)
}

/// [`solve`] on data whose binary features include the thresholds of numeric columns:
/// `chains[f]` names the column of threshold feature `f` (`None` for other features), and a
/// column's features must each send the rows above their threshold to the same value. The
/// optimum is the same; the search bounds a column's splits from one another (see
/// [`Graph::set_chains`]). Any other length of `chains` is ignored.
pub fn solve_with_chains(
    data: Table,
    config: &BranchesConfig,
    chains: &[Option<u32>],
    budget: &Budget,
    board: Option<&ProgressBoard>,
) -> Result<Outcome<BranchesSolution>> {
    if config.min_samples_leaf == 0 {
        return param_err!("min_samples_leaf must be at least 1, got 0");
    }
    let mut config = *config;
    if let Some(d) = config.max_depth.filter(|&d| d > graph::MAX_DEPTH_LIMIT) {
        // No tree is deeper than the number of features (a feature is constant below a split
        // on it), so such a limit is no limit; any other this deep is refused.
        if d as usize >= data.n_features() {
            config.max_depth = None;
        } else {
            return param_err!(
                "max_depth must be at most {} (or None), got {d}",
                graph::MAX_DEPTH_LIMIT
            );
        }
    }
    let config = &config;
    let weights = integer_weights(&data)?;
    let total: u64 = match &weights {
        None => data.n_rows() as u64,
        Some(w) => w.iter().sum(),
    };
    let (p, q) = config.penalty;
    if score::fits::<i64>(p, q, data.n_rows(), total) {
        let scale = Scale::<i64>::new(p, q, data.n_rows(), total)?;
        search_with(data, config, scale, weights, chains, budget, board)
    } else {
        let scale = Scale::<i128>::new(p, q, data.n_rows(), total)?;
        search_with(data, config, scale, weights, chains, budget, board)
    }
}

/// [`solve`] with checked weights and scores of a chosen width.
fn search_with<S: score::Score>(
    data: Table,
    config: &BranchesConfig,
    scale: Scale<S>,
    weights: Option<Vec<u64>>,
    chains: &[Option<u32>],
    budget: &Budget,
    board: Option<&ProgressBoard>,
) -> Result<Outcome<BranchesSolution>> {
    let scale = match config.fewest_splits {
        true => scale,
        false => scale.without_tie_break(),
    };
    let limits = Limits {
        max_depth: config.max_depth,
        min_samples_leaf: config.min_samples_leaf,
    };
    // The search sees the rows clustered (see `row_order`); weights follow their rows. A few
    // words of rows gain nothing from it, and a search whose time is already up (wide data
    // take a while to convert) skips it: it only speeds the search up. The bitsets are built
    // once, in the search's order.
    let in_time = budget.check(0, 0).is_none();
    let (data, weights) = if data.n_rows() > row_order::WORTH_SORTING && in_time {
        let order = row_order::clustered(&data);
        let weights = weights.map(|w| order.iter().map(|&r| w[r]).collect());
        (
            Dataset::from_table(data.into_rows_in_order(&order)?),
            weights,
        )
    } else {
        (Dataset::from_table(data), weights)
    };
    let mut graph = Graph::new(&data, scale, weights, limits);
    let chains: Vec<u32> = chains.iter().map(|c| c.unwrap_or(graph::NONE)).collect();
    graph.set_chains(&chains);
    let outcome = search::run(&mut graph, budget, board);
    graph.free_in_background();
    outcome
}
