//! Unit tests of the proper-tree solver: the spec's counting cases (T1, T2, T6, T13, T14), the
//! two engines against each other and against a brute force over decoded permutations (T4, T5),
//! determinism across thread counts (T10) and the wrong-data mutant (T8).

use std::collections::HashSet;

use super::combos::{self, decode, level_order, Sodt};
use super::problem::{Objective, Problem};
use super::rules::{self, Family, Points, RuleSet, RuleSpec, Sides};
use super::topdown;
use super::{words, EngineChoice, ProperConfig, RuleTree};
use crate::search::{Budget, CancelFlag, SplitMix, Status};

fn gaussian(rng: &mut SplitMix) -> f64 {
    // Box–Muller from two uniforms in (0, 1].
    let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    let v = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    (-2.0 * (1.0 - u).ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

fn random_points(rng: &mut SplitMix, n: usize, d: usize) -> Points {
    let x = (0..n * d).map(|_| gaussian(rng)).collect();
    Points::new(n, d, x).unwrap()
}

fn spec(family: Family) -> RuleSpec {
    RuleSpec {
        family,
        degree: 2,
        sides: Sides::All,
    }
}

fn permutations(items: &[usize]) -> Vec<Vec<usize>> {
    if items.is_empty() {
        return vec![vec![]];
    }
    let mut out = Vec::new();
    for i in 0..items.len() {
        let mut rest = items.to_vec();
        let first = rest.remove(i);
        for mut p in permutations(&rest) {
            p.insert(0, first);
            out.push(p);
        }
    }
    out
}

/// All proper trees over exactly the rules `rs` (spec §2.3: decoded permutations).
fn trees_over(rules: &RuleSet, rs: &[usize]) -> Vec<RuleTree> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for perm in permutations(rs) {
        if let Some(t) = decode(&perm, rules) {
            if seen.insert(level_order(&t)) {
                out.push(t);
            }
        }
    }
    out
}

/// Cost of `tree` on `mask`, or `None` when a constraint fails.
fn tree_cost(p: &Problem<'_>, tree: &RuleTree, mask: &[u64], depth_left: u32) -> Option<f64> {
    if p.min_leaf > 0 && words::popcount(mask) < p.min_leaf {
        return None;
    }
    match tree {
        RuleTree::Leaf => Some(p.leaf_cost(mask)),
        RuleTree::Node { rule, left, right } => {
            if depth_left == 0 {
                return None;
            }
            let mut l = vec![0; mask.len()];
            let mut r = vec![0; mask.len()];
            words::and_into(mask, p.rules.plus(*rule), &mut l);
            words::and_not_into(mask, p.rules.plus(*rule), &mut r);
            Some(tree_cost(p, left, &l, depth_left - 1)? + tree_cost(p, right, &r, depth_left - 1)?)
        }
    }
}

fn combinations(m: usize, k: usize) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    let mut c: Vec<usize> = (0..k).collect();
    if k > m {
        return out;
    }
    loop {
        out.push(c.clone());
        if !rules::next_combination(&mut c, m) {
            return out;
        }
    }
}

/// Brute force: the best tree with exactly `k` rules, over every combination and permutation.
fn brute_force(p: &Problem<'_>, k: usize, depth: u32) -> f64 {
    let all = words::full(p.rules.n_rows());
    let mut best = f64::INFINITY;
    for combo in combinations(p.rules.len(), k) {
        for t in trees_over(p.rules, &combo) {
            if let Some(c) = tree_cost(p, &t, &all, depth) {
                best = best.min(c);
            }
        }
    }
    best
}

fn labels(rng: &mut SplitMix, n: usize, classes: usize) -> Vec<u32> {
    (0..n).map(|_| rng.below(classes) as u32).collect()
}

#[test]
fn t1_sorted_thresholds_give_catalan_trees_and_3_to_the_k_calls() {
    for k in 1..=6usize {
        let points = Points::new(k, 1, (0..k).map(|i| i as f64).collect()).unwrap();
        let set =
            rules::generate(&points, spec(Family::Axis), false, &Budget::unlimited()).unwrap();
        assert_eq!(set.len(), k);
        let catalan = [1, 2, 5, 14, 42, 132][k - 1];
        let all: Vec<usize> = (0..k).collect();
        assert_eq!(trees_over(&set, &all).len(), catalan, "K={k}");
        let y = vec![0u32; k];
        let p = Problem::new(&set, &y, 1, Objective::Misclassification, 0);
        let mut s = Sodt::new(&p, k);
        s.prune = false;
        let rs: Vec<u32> = (0..k as u32).collect();
        s.solve(&rs, u32::MAX, f64::INFINITY);
        assert_eq!(s.calls, 3u64.pow(k as u32), "K={k}");
    }
}

#[test]
fn t2_chain_gives_k_factorial_trees_and_the_call_recurrence() {
    let calls = [3u64, 9, 31, 129, 651, 3913];
    for k in 1..=6usize {
        // Points e_i; rule i is "x_i <= 1", defined by point i: every other point is on its left.
        let parts: Vec<(Vec<usize>, Vec<usize>)> =
            (0..k).map(|i| ((0..k).collect(), vec![i])).collect();
        let set = RuleSet::from_parts(k, &parts);
        let all: Vec<usize> = (0..k).collect();
        if k <= 5 {
            let fact: usize = (1..=k).product();
            assert_eq!(trees_over(&set, &all).len(), fact, "K={k}");
        }
        let y = vec![0u32; k];
        let p = Problem::new(&set, &y, 1, Objective::Misclassification, 0);
        let mut s = Sodt::new(&p, k);
        s.prune = false;
        let rs: Vec<u32> = (0..k as u32).collect();
        s.solve(&rs, u32::MAX, f64::INFINITY);
        assert_eq!(s.calls, calls[k - 1], "K={k}");
    }
}

#[test]
fn t3_decoding_the_level_order_gives_the_tree_back() {
    let mut rng = SplitMix::new(3);
    for _ in 0..40 {
        let points = random_points(&mut rng, 8, 2);
        let set = rules::generate(
            &points,
            spec(Family::Hyperplane),
            false,
            &Budget::unlimited(),
        )
        .unwrap();
        for k in 2..=4 {
            let rs: Vec<usize> = (0..k).map(|_| rng.below(set.len())).collect();
            let distinct: HashSet<_> = rs.iter().collect();
            if distinct.len() < k {
                continue;
            }
            let trees = trees_over(&set, &rs);
            let orders: HashSet<_> = trees.iter().map(level_order).collect();
            assert_eq!(orders.len(), trees.len());
            for t in trees {
                assert_eq!(decode(&level_order(&t), &set), Some(t));
            }
        }
    }
}

fn dichotomies(set: &RuleSet) -> HashSet<Vec<u64>> {
    let n = set.n_rows();
    let full = words::full(n);
    (0..set.len())
        .map(|r| {
            let side = set.plus(r);
            if words::contains(side, 0) {
                side.to_vec()
            } else {
                let mut c = vec![0; side.len()];
                words::and_not_into(&full, side, &mut c);
                c
            }
        })
        .collect()
}

#[test]
fn t6_all_side_assignments_give_every_separable_dichotomy() {
    // Cover's count of linearly separable dichotomies, trivial one included.
    for (n, d, expected) in [(5, 2, 11), (7, 2, 22), (8, 2, 29), (7, 3, 42), (8, 3, 64)] {
        let mut rng = SplitMix::new(60 + n as u64 + d as u64);
        let points = random_points(&mut rng, n, d);
        let set = rules::generate(
            &points,
            spec(Family::Hyperplane),
            false,
            &Budget::unlimited(),
        )
        .unwrap();
        let mut found = dichotomies(&set);
        found.insert(words::full(n));
        assert_eq!(found.len(), expected, "N={n} D={d}");
    }
}

#[test]
fn t6_closed_convention_misses_dichotomies_in_three_dimensions() {
    let mut missed = 0;
    for seed in 0..5 {
        let mut rng = SplitMix::new(600 + seed);
        let points = random_points(&mut rng, 8, 3);
        let closed = RuleSpec {
            sides: Sides::Closed,
            ..spec(Family::Hyperplane)
        };
        let all = rules::generate(
            &points,
            spec(Family::Hyperplane),
            false,
            &Budget::unlimited(),
        )
        .unwrap();
        let some = rules::generate(&points, closed, false, &Budget::unlimited()).unwrap();
        if dichotomies(&some).len() < dichotomies(&all).len() {
            missed += 1;
        }
    }
    assert!(missed > 0);
}

#[test]
fn every_rule_test_reproduces_its_side() {
    let mut rng = SplitMix::new(11);
    // General position, and a grid full of collinear points and ties.
    let grid: Vec<f64> = (0..16)
        .flat_map(|i| [(i % 4) as f64, (i / 4) as f64])
        .collect();
    let sets = [
        (random_points(&mut rng, 9, 2), spec(Family::Hyperplane)),
        (random_points(&mut rng, 7, 3), spec(Family::Hyperplane)),
        (random_points(&mut rng, 8, 2), spec(Family::Polynomial)),
        (Points::new(16, 2, grid).unwrap(), spec(Family::Mixed)),
    ];
    for (points, s) in sets {
        let set = rules::generate(&points, s, false, &Budget::unlimited()).unwrap();
        assert!(!set.is_empty());
        for r in 0..set.len() {
            set.test(&points, r).unwrap();
        }
    }
}

fn config(k: usize, exactly: bool, engine: EngineChoice) -> ProperConfig {
    ProperConfig {
        n_splits: k,
        rules: spec(Family::Axis),
        exactly,
        objective: Objective::Misclassification,
        max_depth: None,
        min_samples_leaf: 0,
        n_jobs: 1,
        engine,
        refuse_above_seconds: None,
    }
}

/// T4/T5: brute force = combinations engine (exact K and at most K) = top-down (at most K), on
/// random instances with every rule family, objective and constraint.
#[test]
fn t4_t5_engines_match_brute_force() {
    let mut rng = SplitMix::new(45);
    let objectives = [
        Objective::Misclassification,
        Objective::Gini,
        Objective::Entropy,
    ];
    for case in 0..160 {
        let family = [Family::Axis, Family::Hyperplane][case % 2];
        let n = 5 + rng.below(3);
        let points = random_points(&mut rng, n, 2);
        let classes = 2 + rng.below(2);
        let y = labels(&mut rng, n, classes);
        let mut set = rules::generate(&points, spec(family), false, &Budget::unlimited()).unwrap();
        if set.len() > 14 {
            // Keep the brute force small: a random sublist, order kept.
            let keep: HashSet<usize> = (0..14).map(|_| rng.below(set.len())).collect();
            set.retain(|_, r| keep.contains(&r));
        }
        let objective = objectives[case % 3];
        let min_leaf = [0u64, 1, 2][rng.below(3)];
        let depth = [u32::MAX, 1, 2][rng.below(3)];
        let k = 1 + rng.below(3);
        let p = Problem::new(&set, &y, classes, objective, min_leaf);
        let exact_k = brute_force(&p, k, depth);
        let at_most: f64 = (0..=k)
            .map(|j| brute_force(&p, j, depth))
            .fold(f64::INFINITY, f64::min);
        let budget = Budget::unlimited();
        for exactly in [true, false] {
            let cfg = combos::CombosConfig {
                n_splits: k,
                exactly,
                depth,
                n_jobs: 1 + case % 2,
            };
            let res = combos::odt(&p, &cfg, &budget, None);
            let got = res.best.as_ref().map_or(f64::INFINITY, |b| b.0);
            let want = if exactly { exact_k } else { at_most };
            assert!(
                close(got, want),
                "case {case}: combos exactly={exactly} {got} vs {want}"
            );
        }
        let cands = topdown::Candidates::new(&p, &points, false);
        let h = if depth == u32::MAX {
            usize::MAX
        } else {
            depth as usize
        };
        let td = topdown::solve(&p, &cands, k, h, 1 + case % 2, &budget, None);
        assert!(
            close(td.cost, at_most),
            "case {case}: topdown {} vs {at_most}",
            td.cost
        );
        let all = words::full(n);
        let rescored = tree_cost(&p, &td.tree, &all, depth).unwrap();
        assert!(close(rescored, td.cost));
        assert!(td.tree.n_splits() <= k);
    }
}

fn close(a: f64, b: f64) -> bool {
    a == b || (a - b).abs() <= 1e-9 * a.abs().max(1.0)
}

#[test]
fn t10_same_tree_for_any_thread_count() {
    let mut rng = SplitMix::new(10);
    for case in 0..20 {
        let points = random_points(&mut rng, 30, 2);
        let y: Vec<u32> = if case % 4 == 0 {
            vec![0; 30]
        } else {
            labels(&mut rng, 30, 2)
        };
        for exactly in [true, false] {
            let mut trees = Vec::new();
            for n_jobs in [1, 2, 3] {
                let cfg = ProperConfig {
                    n_jobs,
                    ..config(2, exactly, EngineChoice::Auto)
                };
                let out = super::solve(&points, &y, 2, &cfg, &Budget::unlimited(), None).unwrap();
                trees.push((out.solution.level_order, out.solution.cost));
            }
            assert!(
                trees.windows(2).all(|w| w[0] == w[1]),
                "case {case}: {trees:?}"
            );
        }
    }
}

#[test]
fn t13_no_rule_comparable_with_the_other_is_infeasible() {
    // Two rules, each with one defining point on either side of the other.
    let set = RuleSet::from_parts(4, &[(vec![0, 2], vec![0, 1]), (vec![0, 2], vec![2, 3])]);
    let y = vec![0, 1, 0, 1];
    let p = Problem::new(&set, &y, 2, Objective::Misclassification, 0);
    let cfg = combos::CombosConfig {
        n_splits: 2,
        exactly: true,
        depth: u32::MAX,
        n_jobs: 2,
    };
    let res = combos::odt(&p, &cfg, &Budget::unlimited(), None);
    assert!(res.best.is_none());
}

/// T8: optimising subtrees on the parent's rows instead of their own region's is wrong.
#[test]
fn t8_wrong_data_mutant_disagrees_somewhere() {
    fn mutant(p: &Problem<'_>, rs: &[usize], all: &[u64]) -> Option<RuleTree> {
        // Chooses every subtree on ALL rows, then the tree is scored on the real regions.
        if rs.is_empty() {
            return Some(RuleTree::Leaf);
        }
        let mut best: Option<(f64, RuleTree)> = None;
        for &root in rs {
            let mut plus = Vec::new();
            let mut minus = Vec::new();
            let mut ok = true;
            for &o in rs {
                if o != root {
                    match p.ancestry(root, o) {
                        1 => plus.push(o),
                        -1 => minus.push(o),
                        _ => ok = false,
                    }
                }
            }
            if !ok {
                continue;
            }
            let (Some(l), Some(r)) = (mutant(p, &plus, all), mutant(p, &minus, all)) else {
                continue;
            };
            let c = tree_cost(p, &l, all, u32::MAX)? + tree_cost(p, &r, all, u32::MAX)?;
            if best.as_ref().is_none_or(|b| c < b.0) {
                best = Some((
                    c,
                    RuleTree::Node {
                        rule: root,
                        left: Box::new(l),
                        right: Box::new(r),
                    },
                ));
            }
        }
        best.map(|b| b.1)
    }
    let mut rng = SplitMix::new(8);
    let mut differ = 0;
    for _ in 0..400 {
        let points = random_points(&mut rng, 10, 2);
        let y = labels(&mut rng, 10, 2);
        let set =
            rules::generate(&points, spec(Family::Axis), false, &Budget::unlimited()).unwrap();
        let p = Problem::new(&set, &y, 2, Objective::Misclassification, 0);
        let rs: Vec<usize> = (0..3).map(|_| rng.below(set.len())).collect();
        if rs.iter().collect::<HashSet<_>>().len() < 3 {
            continue;
        }
        let all = words::full(10);
        let rs32: Vec<u32> = rs.iter().map(|&r| r as u32).collect();
        let right = Sodt::new(&p, 3).solve(&rs32, u32::MAX, f64::INFINITY);
        if let Some(t) = mutant(&p, &rs, &all) {
            let wrong = tree_cost(&p, &t, &all, u32::MAX).unwrap();
            assert!(wrong >= right);
            if wrong > right {
                differ += 1;
            }
        }
    }
    assert!(differ > 0);
}

#[test]
fn refuses_hopeless_work_without_a_time_limit() {
    let mut rng = SplitMix::new(1);
    let points = random_points(&mut rng, 300, 2);
    let y = labels(&mut rng, 300, 2);
    let cfg = ProperConfig {
        rules: spec(Family::Hyperplane),
        refuse_above_seconds: Some(3600.0),
        ..config(4, false, EngineChoice::Auto)
    };
    let err = super::solve(&points, &y, 2, &cfg, &Budget::unlimited(), None).unwrap_err();
    assert!(err.to_string().contains("hopeless"), "{err}");
}

#[test]
fn time_limit_returns_the_best_tree_so_far() {
    let mut rng = SplitMix::new(2);
    let points = random_points(&mut rng, 60, 2);
    let y = labels(&mut rng, 60, 2);
    let cfg = ProperConfig {
        rules: spec(Family::Hyperplane),
        ..config(3, true, EngineChoice::Auto)
    };
    let budget = Budget::new(Some(0.2), None, None, Default::default()).unwrap();
    let out = super::solve(&points, &y, 2, &cfg, &budget, None).unwrap();
    assert_eq!(out.status.as_str(), "time_limit");
}

#[test]
fn one_split_keeps_one_rule_per_partition_without_changing_the_optimum() {
    let mut rng = SplitMix::new(71);
    for case in 0..30 {
        let family = [Family::Hyperplane, Family::Polynomial, Family::Mixed][case % 3];
        let n = 7 + rng.below(4);
        let points = random_points(&mut rng, n, 2);
        let y = labels(&mut rng, n, 2);
        let full = rules::generate(&points, spec(family), false, &Budget::unlimited()).unwrap();
        let distinct = rules::generate(&points, spec(family), true, &Budget::unlimited()).unwrap();
        assert!(distinct.len() < full.len());
        assert_eq!(dichotomies(&distinct), dichotomies(&full));
        let p = Problem::new(&full, &y, 2, Objective::Misclassification, 1);
        let want = brute_force(&p, 1, u32::MAX).min(p.leaf_cost(&words::full(n)));
        for exactly in [false, true] {
            let cfg = ProperConfig {
                rules: spec(family),
                min_samples_leaf: 1,
                ..config(1, exactly, EngineChoice::Auto)
            };
            let out = super::solve(&points, &y, 2, &cfg, &Budget::unlimited(), None).unwrap();
            let exact_one = brute_force(&p, 1, u32::MAX);
            let expected = if exactly { exact_one } else { want };
            assert!(close(out.solution.cost, expected), "case {case}");
        }
    }
}

/// T9: the generic recursion with matrix-chain splits counts Catalan(n − 1) trees and finds the
/// textbook optimum.
#[test]
fn t9_matrix_chain_through_the_pluggable_splits() {
    use super::generic::{best, count, MatrixChain};
    let catalan = [1u64, 1, 2, 5, 14, 42, 132, 429];
    for (n, want) in catalan.iter().enumerate() {
        let chain = MatrixChain {
            dims: vec![2; n + 2],
        };
        assert_eq!(count(&chain, &chain.items(), &()), *want, "n={}", n + 1);
    }
    let clrs = MatrixChain {
        dims: vec![30, 35, 15, 5, 10, 20, 25],
    };
    assert_eq!(best(&clrs, &clrs.items(), &()), 15125.0);
}

/// The generic recursion with proper-tree splits agrees with the tuned `sodt`, and counts the
/// trees the decoder finds (T3).
#[test]
fn generic_recursion_agrees_with_sodt() {
    use super::generic::{best, count, ProperSplits};
    let mut rng = SplitMix::new(9);
    for _ in 0..60 {
        let points = random_points(&mut rng, 9, 2);
        let y = labels(&mut rng, 9, 3);
        let set = rules::generate(
            &points,
            spec(Family::Hyperplane),
            false,
            &Budget::unlimited(),
        )
        .unwrap();
        let p = Problem::new(&set, &y, 3, Objective::Misclassification, 0);
        let k = 1 + rng.below(3);
        let rs: Vec<usize> = (0..k).map(|_| rng.below(set.len())).collect();
        if rs.iter().collect::<HashSet<_>>().len() < k {
            continue;
        }
        let generic = ProperSplits { problem: &p };
        let all = words::full(9);
        let rs32: Vec<u32> = rs.iter().map(|&r| r as u32).collect();
        let tuned = Sodt::new(&p, k).solve(&rs32, u32::MAX, f64::INFINITY);
        assert_eq!(best(&generic, &rs, &all), tuned);
        assert_eq!(
            count(&generic, &rs, &all) as usize,
            trees_over(&set, &rs).len()
        );
    }
}

/// T7: the ancestry relation is 0 on the diagonal, never 0 off it for axis rules in general
/// position, and not transitive for hyperplanes.
#[test]
fn t7_ancestry_invariants() {
    let mut rng = SplitMix::new(7);
    let points = random_points(&mut rng, 8, 2);
    let axis = rules::generate(&points, spec(Family::Axis), false, &Budget::unlimited()).unwrap();
    for i in 0..axis.len() {
        assert_eq!(super::problem::ancestry(&axis, i, i), 0);
        for j in (0..axis.len()).filter(|&j| j != i) {
            assert_ne!(super::problem::ancestry(&axis, i, j), 0);
        }
    }
    let planes = rules::generate(
        &points,
        spec(Family::Hyperplane),
        false,
        &Budget::unlimited(),
    )
    .unwrap();
    let k = |i, j| super::problem::ancestry(&planes, i, j);
    let m = planes.len();
    let broken = (0..m).any(|i| {
        (0..m).any(|j| k(i, j) != 0 && (0..m).any(|l| l != i && k(j, l) != 0 && k(i, l) == 0))
    });
    assert!(broken);
}

/// A search stopped early returns at least the best tree with fewer splits that its
/// iterative deepening proved on the way (it used to return the leaf), and reports the stop.
#[test]
fn a_stopped_search_keeps_the_trees_of_fewer_splits() {
    let mut rng = SplitMix::new(32);
    for case in 0..10 {
        let points = random_points(&mut rng, 60, 2);
        let y = labels(&mut rng, 60, 2);
        let set =
            rules::generate(&points, spec(Family::Axis), false, &Budget::unlimited()).unwrap();
        let p = Problem::new(&set, &y, 2, Objective::Misclassification, 0);
        let cands = topdown::Candidates::new(&p, &points, false);
        let one = topdown::solve(&p, &cands, 1, usize::MAX, 1, &Budget::unlimited(), None);
        // A memory limit of one byte beyond the rules stops the first search that keeps a
        // memo: the one of two splits; the one-split search keeps none and finishes.
        let limit = Some(set.heap_bytes() + 1);
        let tight = Budget::new(None, None, limit, crate::search::CancelFlag::new()).unwrap();
        let stopped = topdown::solve(&p, &cands, 3, usize::MAX, 1, &tight, None);
        assert_eq!(
            stopped.status,
            crate::search::Status::MemoryLimit,
            "case {case}"
        );
        assert!(
            stopped.cost <= one.cost,
            "case {case}: {} > {}",
            stopped.cost,
            one.cost
        );
        let all = words::full(60);
        let rescored = tree_cost(&p, &stopped.tree, &all, u32::MAX).unwrap();
        assert!(close(rescored, stopped.cost), "case {case}");
    }
}

/// A solve whose limit passes before its search returns the best single split among the
/// rules it made (a leaf when none beats it), never more than one split.
#[test]
fn a_solve_stopped_before_its_search_returns_a_greedy_tree() {
    let mut rng = SplitMix::new(77);
    let mut exactly_three = 0;
    for case in 0..60 {
        let family = [Family::Axis, Family::Hyperplane][case % 2];
        let n = 8 + rng.below(8);
        let points = random_points(&mut rng, n, 2);
        let classes = 2 + case % 3;
        let y = labels(&mut rng, n, classes);
        // Exactly K splits must split even when the leaf is better; depth 0 allows none.
        let (k, exactly, max_depth) = match case % 6 {
            1 => (3, false, Some(0)),
            2 => (1, true, None),
            3 => (3, true, None),
            4 => (3, false, Some(1)),
            _ => (3, false, None),
        };
        let cfg = ProperConfig {
            rules: spec(family),
            min_samples_leaf: (case % 3) as u64,
            max_depth,
            ..config(k, exactly, EngineChoice::Auto)
        };
        let stopped_budget = Budget::new(Some(0.0), None, None, CancelFlag::new()).unwrap();
        let stopped = super::solve(&points, &y, classes, &cfg, &stopped_budget, None).unwrap();
        let one = ProperConfig {
            n_splits: 1,
            ..cfg.clone()
        };
        let best = super::solve(&points, &y, classes, &one, &Budget::unlimited(), None).unwrap();
        assert_eq!(stopped.status, Status::TimeLimit, "case {case}");
        let splits = stopped.solution.level_order.len();
        assert!(splits <= k, "case {case}");
        if max_depth == Some(0) {
            assert_eq!(splits, 0, "case {case}");
        } else if exactly && k == 3 {
            // Greedy may miss every tree of exactly three splits; then the leaf comes back.
            assert!(splits == 3 || splits == 0, "case {case}: {splits}");
            exactly_three += usize::from(splits == 3);
        } else {
            // The first greedy split is the best single split; the others only lower the cost.
            assert!(stopped.solution.cost <= best.solution.cost, "case {case}");
            if max_depth == Some(1) || k == 1 {
                assert_eq!(stopped.solution.cost, best.solution.cost, "case {case}");
                assert!(splits <= 1, "case {case}");
            }
            if exactly {
                assert_eq!(splits, 1, "case {case}");
            }
        }
    }
    assert!(
        exactly_three >= 8,
        "greedy found exactly three splits {exactly_three} times of 10"
    );
}

/// A search stopped before it tried a split holds a leaf; the greedy tree replaces it when it
/// costs less, and a better searched tree is kept (more time never gives a worse tree).
#[test]
fn a_stopped_search_returns_the_greedy_tree_where_it_costs_less() {
    let mut rng = SplitMix::new(5);
    let mut replaced = 0;
    for case in 0..30 {
        let n = 10 + rng.below(10);
        let points = random_points(&mut rng, n, 2);
        let y = labels(&mut rng, n, 2);
        let cfg = ProperConfig {
            rules: spec([Family::Axis, Family::Hyperplane][case % 2]),
            ..config(3, false, EngineChoice::Auto)
        };
        let set = rules::generate(&points, cfg.rules, false, &Budget::unlimited()).unwrap();
        let p = Problem::new(&set, &y, 2, Objective::Misclassification, 0);
        let all = words::full(n);
        let mut stats = crate::search::Stats::new();
        let leaf = p.leaf_cost(&all);
        let got = super::or_greedy(&p, &cfg, Some(RuleTree::Leaf), &mut stats).unwrap();
        let (greedy, _) = super::greedy_tree(&p, &cfg, super::GREEDY_SCAN_WORDS);
        let greedy_cost = super::tree_cost(&p, &greedy, &all);
        assert_eq!(
            super::tree_cost(&p, &got, &all),
            greedy_cost.min(leaf),
            "case {case}"
        );
        replaced += usize::from(greedy_cost < leaf);
        // The optimum is kept whatever the greedy tree costs.
        let best = super::solve(&points, &y, 2, &cfg, &Budget::unlimited(), None).unwrap();
        let optimal = topdown::solve(
            &p,
            &topdown::Candidates::new(&p, &points, false),
            3,
            usize::MAX,
            1,
            &Budget::unlimited(),
            None,
        )
        .tree;
        let kept = super::or_greedy(&p, &cfg, Some(optimal), &mut stats).unwrap();
        assert_eq!(
            super::tree_cost(&p, &kept, &all),
            best.solution.cost,
            "case {case}"
        );
    }
    assert!(
        replaced >= 20,
        "the greedy tree beat the leaf {replaced} times of 30"
    );
}
