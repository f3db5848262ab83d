//! The best single multiway split (a "decision stump") on categorical data, by weighted training
//! accuracy. It is exact over one-split trees and is what the command line's main job shows until
//! the full solvers are available; it also exercises the data, tree and search layers end to end.
//!
//! Ties: a split must be strictly better than the leaf to be used (fewer splits win ties), and
//! among equally good features the lowest index wins.

use crate::data::Dataset;
use crate::error::Result;
use crate::search::{Budget, Outcome, Stats, Status};
use crate::tree::{NodeSpec, Tree, TreeSpec};

fn correct(totals: &[f64]) -> f64 {
    totals.iter().copied().fold(0.0, f64::max)
}

/// Finds the most accurate tree with at most one (multiway) split. The objective is the weighted
/// fraction of training rows classified correctly.
pub fn best_stump(data: &Dataset, budget: &Budget) -> Result<Outcome<Tree>> {
    let rows = data.all_rows();
    let root_value = data.class_weights(&rows);
    let total: f64 = root_value.iter().sum();
    let mut best: Option<(usize, f64, Vec<Vec<f64>>)> = None;
    let mut best_correct = correct(&root_value);
    let mut stats = Stats::new();
    let mut status = Status::Optimal;
    for f in 0..data.n_features() {
        if let Some(s) = budget.check(f as u64, 0) {
            status = s;
            break;
        }
        stats.add("features_examined", 1);
        if data.n_values(f) < 2 {
            continue;
        }
        let children = data.split_class_weights(&rows, f);
        let c: f64 = children.iter().map(|v| correct(v)).sum();
        if c > best_correct {
            best_correct = c;
            best = Some((f, c, children));
        }
    }
    let root = match best {
        None => NodeSpec::Leaf { value: root_value },
        Some((feature, _, children)) => NodeSpec::Category {
            feature,
            value: root_value,
            children: children
                .into_iter()
                .map(|value| NodeSpec::Leaf { value })
                .collect(),
        },
    };
    let tree = TreeSpec {
        root,
        n_features: data.n_features(),
        n_classes: data.n_classes(),
    }
    .build()?;
    let accuracy = best_correct / total;
    stats.set_real("seconds", budget.elapsed());
    let upper = if status.is_optimal() { accuracy } else { 1.0 };
    Ok(Outcome {
        solution: tree,
        status,
        lower_bound: accuracy,
        upper_bound: upper,
        stats,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle;
    use crate::search::CancelFlag;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn agrees_with_brute_force(n in 1usize..40, d in 1usize..4, seed in any::<u64>()) {
            let inst = oracle::random_instance(n, d, 3, 3, seed);
            let data = Dataset::new(&inst.codes, d, &inst.labels, None, Some(3), None).expect("valid");
            let out = best_stump(&data, &Budget::unlimited()).expect("solves");
            let (best_correct, _) = oracle::best_stump_correct(&inst);
            prop_assert_eq!(out.status, Status::Optimal);
            prop_assert!((out.lower_bound * n as f64 - best_correct as f64).abs() < 1e-9);
            // The returned tree re-scores to the reported objective.
            let rescored = oracle::tree_correct(&out.solution, &inst);
            prop_assert_eq!(rescored, best_correct);
        }
    }

    #[test]
    fn a_cancelled_search_returns_a_valid_tree() {
        let inst = oracle::random_instance(30, 3, 3, 2, 7);
        let data = Dataset::new(&inst.codes, 3, &inst.labels, None, None, None).expect("valid");
        let flag = CancelFlag::new();
        flag.cancel();
        let budget = Budget::new(None, None, None, flag).expect("valid");
        let out = best_stump(&data, &budget).expect("returns");
        assert_eq!(out.status, Status::Interrupted);
        assert_eq!(out.solution.n_nodes(), 1, "nothing examined: the leaf");
        assert!(out.upper_bound >= out.lower_bound);
    }
}
