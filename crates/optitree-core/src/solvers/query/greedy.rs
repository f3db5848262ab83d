//! The one top-down template every greedy query-tree builder shares (spec §3.1): at each impure
//! node, ask the best-scoring query among those that split it, send the no-answers left and the
//! yes-answers right, and recurse. Only the score differs between GBS, λ-GBS, GGBS, λ-GGBS and the
//! count rules.
//!
//! A node becomes a leaf when it is pure (one object, or one group), when it reaches `max_depth`,
//! or when no query splits it (identical rows: an ambiguous leaf). Nodes are expanded depth-first,
//! no-child first, so a seeded random tie-break draws in a fixed order.

use super::score::{node_scores, tied_best};
use super::{partition, QueryConfig, QueryProblem, QueryTreeArrays, TieBreak};
use crate::error::Result;
use crate::search::{Budget, SplitMix, Status};

/// Builds the greedy tree. The status is `greedy`, or `interrupted` when the budget stopped the
/// build early (the unexpanded nodes are then left as ambiguous leaves).
pub fn build_greedy(
    problem: &QueryProblem,
    config: &QueryConfig,
    budget: &Budget,
) -> Result<(QueryTreeArrays, Status)> {
    config.validate()?;
    let mut rng = match config.tie_break {
        TieBreak::First => None,
        TieBreak::Random(seed) => Some(SplitMix::new(seed)),
    };
    let mut tree = QueryTreeArrays {
        leaf_of_object: vec![0; problem.n_objects()],
        ..QueryTreeArrays::default()
    };
    let root = tree.push(0);
    let mut stack = vec![(root, (0..problem.n_objects() as u32).collect::<Vec<u32>>())];
    let mut status = Status::Greedy;
    let mut expanded = 0u64;
    while let Some((node, objects)) = stack.pop() {
        let depth = tree.depth[node];
        if status == Status::Greedy {
            status = budget.check(expanded, 0).unwrap_or(Status::Greedy);
        }
        let stopped = status != Status::Greedy;
        let at_limit = config.max_depth.is_some_and(|d| depth >= d);
        let chosen = if stopped || at_limit || problem.is_pure(&objects) {
            None
        } else {
            let scores = node_scores(problem, config.criterion, config.lambda, &objects);
            let tied = tied_best(&scores);
            match (&mut rng, tied.len()) {
                (_, 0) => None,
                (Some(rng), n) => Some(tied[rng.below(n)]),
                (None, _) => Some(tied[0]),
            }
        };
        let Some(query) = chosen else {
            for &i in &objects {
                tree.leaf_of_object[i as usize] = node as u32;
            }
            continue;
        };
        expanded += 1;
        let (no, yes) = partition(problem, &objects, query);
        let no_node = tree.push(depth + 1);
        let yes_node = tree.push(depth + 1);
        tree.set_split(node, query, no_node, yes_node);
        stack.push((yes_node, yes));
        stack.push((no_node, no));
    }
    Ok((tree, status))
}
