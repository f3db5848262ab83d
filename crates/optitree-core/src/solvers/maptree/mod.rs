//! MAPTree (Sullivan, Tiwari & Thrun): the maximum-a-posteriori tree under the BCART prior with
//! Dirichlet–Multinomial leaves, found by best-first AND/OR search with the Perfect Split
//! heuristic, with a proof (lower bound = upper bound on the cost `−log P(T, Y | X)`) or an
//! anytime gap.
//!
//! - [`model`]: the prior, the leaf likelihood and the heuristic, in the reference's float order
//!   (tabulated in the fast mode);
//! - [`graph`]: OR/AND node arenas, expansion records and the exact-subset cache;
//! - [`search`]: the reference-order search with its three defects fixed, and the fast mode;
//! - [`count_bound`]: the fast mode's bounds from class counts; [`small`]: its exact solver for
//!   small nodes; [`quadrants`]: the pairs of features whose counts on a subset follow from
//!   others.
//!
//! The data are binary features (codes 0/1) and any number of classes.

pub mod count_bound;
mod facts;
pub mod graph;
mod lookup;
pub mod model;
pub mod quadrants;
mod regrow;
pub mod search;
pub mod small;

#[cfg(test)]
mod tests;

use crate::data::{Bitset, Dataset};
use crate::error::Result;
use crate::search::{Budget, Outcome, ProgressBoard, Stats};
use crate::tree::{NodeSpec, Tree, TreeSpec};
use crate::{data_err, param_err};

pub use model::Posterior;
use search::Search;

/// Parameters of a MAPTree search.
#[derive(Debug, Clone)]
pub struct MapTreeConfig {
    /// Split probability scale α in (0, 1).
    pub alpha: f64,
    /// Split probability decay β ≥ 0.
    pub beta: f64,
    /// Dirichlet pseudo-count of every class.
    pub rho: Vec<f64>,
    /// Stop after this many expansions (status `node_limit`).
    pub max_expansions: Option<u64>,
    /// `false`: the reference implementation's search order, bound for bound. `true`: the fast
    /// mode, which also solves small subproblems exactly (same optimum, different path).
    pub fast: bool,
    /// Threads the search may use. The fast mode takes a second one when this is above 1 (it
    /// looks up half of each expansion's splits); the result is the same with any number.
    pub threads: usize,
}

/// The returned tree with its cost and the reference's string form.
#[derive(Debug, Clone)]
pub struct MapTreeSolution {
    /// The tree (binary category splits; class counts in every node).
    pub tree: Tree,
    /// The search's upper bound for this tree (its cost when every leaf was expanded or is
    /// splittable; see spec §2.5).
    pub cost: f64,
    /// `""` for a leaf, `"(" T0 feature T1 ")"` for a split (the reference's format).
    pub reference_string: String,
}

/// Runs the search on binary features.
pub fn solve(
    data: &Dataset,
    config: &MapTreeConfig,
    budget: &Budget,
    board: Option<&ProgressBoard>,
) -> Result<Outcome<MapTreeSolution>> {
    if config.rho.len() != data.n_classes() {
        return param_err!(
            "rho has {} pseudo-counts but the data have {} classes",
            config.rho.len(),
            data.n_classes()
        );
    }
    // Features with a single value never split; more than two values are not binary.
    if let Some(f) = (0..data.n_features()).find(|&f| data.n_values(f) > 2) {
        return data_err!(
            "MAPTree splits binary features; feature {f} has {} values",
            data.n_values(f)
        );
    }
    if config.max_expansions == Some(0) {
        return param_err!("max_expansions must be at least 1, got 0");
    }
    let mut model = Posterior::new(config.alpha, config.beta, config.rho.clone())?;
    if config.fast {
        // The reference order reproduces the reference's floating-point sums; the fast mode
        // only needs consistent ones, and tables make it several times faster.
        model.tabulate(data.n_rows(), data.n_features(), 64);
    }
    let small_rows = if config.fast { small::SMALL_ROWS } else { 0 };
    let mut search = Search::new(data, &model, small_rows);
    search.two_threads = config.threads > 1;
    let status = search.run(budget, config.max_expansions, board);
    let (lb, ub) = search.bounds();
    let root_rows = data.all_rows();
    let mut reference_string = String::new();
    let root = extract(&search, 0, &root_rows, &mut reference_string);
    let tree = TreeSpec {
        root,
        n_features: data.n_features(),
        n_classes: data.n_classes(),
    }
    .build()?;
    let mut stats = Stats::new();
    stats.set_count("expansions", search.expansions);
    stats.set_count("or_nodes", search.graph.or.len() as u64);
    stats.set_count("and_nodes", search.graph.and.len() as u64);
    stats.set_count("hash_collisions", search.graph.hash_collisions);
    stats.set_count("repairs", search.repairs);
    stats.set_count("exact_closures", search.exact_closures);
    stats.set_count("pruned_splits", search.pruned_splits);
    stats.set_count("shed_splits", search.shed_splits);
    stats.set_count("regrown_subtrees", search.regrown_subtrees);
    stats.set_count("deferred_splits", search.deferred_splits);
    stats.set_count("reexpansions", search.reexpansions);
    stats.set_count("evaluated_splits", search.evaluated_splits);
    stats.set_count("merged_splits", search.merged_splits);
    stats.set_count("memory_bytes", search.graph.held_bytes() as u64);
    stats.set_real("seconds", budget.elapsed());
    Ok(Outcome {
        solution: MapTreeSolution {
            tree,
            cost: ub,
            reference_string,
        },
        status,
        // In posterior terms: log P ≥ −ub is achieved, log P ≤ −lb is proven.
        lower_bound: lb,
        upper_bound: ub,
        stats,
    })
}

/// The tree under OR node `id` (holding `rows`): split on its best-upper-bound feature, or a leaf
/// when it was never expanded or stopping is best.
fn extract(search: &Search<'_>, id: u32, rows: &Bitset, text: &mut String) -> NodeSpec {
    let data = search.graph.data;
    let value: Vec<f64> = data.class_counts(rows).iter().map(|&c| c as f64).collect();
    if search.graph.is_exact(id) {
        let depth = search.graph.depth(id);
        let mut small = small::SmallProblem::new(data, search.model(), rows);
        small.solve(depth);
        small.text(depth, text);
        return small.tree(depth);
    }
    if !search.graph.or[id as usize].expanded() || search.graph.exp(id).best_ub == graph::NONE {
        return NodeSpec::Leaf { value };
    }
    let and = &search.graph.and[search.graph.exp(id).best_ub as usize];
    let f = and.feature as usize;
    text.push('(');
    let low = extract(search, and.child[0], &rows.and(data.rows_with(f, 0)), text);
    text.push_str(&f.to_string());
    let high = extract(search, and.child[1], &rows.and(data.rows_with(f, 1)), text);
    text.push(')');
    NodeSpec::Category {
        feature: f,
        value,
        children: vec![low, high],
    }
}
