use super::*;
use crate::search::{Budget, CancelFlag, Status};

fn problem(rows: &[&[u8]], prior: &[f64], groups: Option<&[u32]>) -> QueryProblem {
    let n = rows[0].len();
    let flat: Vec<u8> = rows.iter().flat_map(|r| r.iter().copied()).collect();
    QueryProblem::new(
        flat,
        rows.len(),
        n,
        prior.to_vec(),
        groups.map(<[u32]>::to_vec),
    )
    .unwrap()
}

/// Spec §6 E2: λ-GBS keeps GBS's root q1 for small λ and switches to the balancing q4 above 5/3.
fn e2() -> QueryProblem {
    problem(
        &[&[1, 0, 0, 1], &[0, 1, 0, 1], &[0, 0, 1, 0], &[0, 0, 0, 0]],
        &[0.5, 0.2, 0.15, 0.15],
        None,
    )
}

/// Spec §6 E1 (the paper's toy example) with its groups.
fn e1() -> QueryProblem {
    problem(
        &[&[0, 1, 1], &[1, 1, 0], &[0, 1, 0], &[1, 0, 0]],
        &[0.25; 4],
        Some(&[0, 0, 0, 1]),
    )
}

fn root_choice(p: &QueryProblem, c: Criterion, lambda: f64) -> Vec<usize> {
    let all: Vec<u32> = (0..p.n_objects() as u32).collect();
    tied_best(&node_scores(p, c, lambda, &all))
}

fn config(criterion: Criterion, lambda: f64) -> QueryConfig {
    QueryConfig {
        criterion,
        lambda,
        tie_break: TieBreak::First,
        max_depth: None,
    }
}

#[test]
fn e2_root_switches_with_lambda() {
    let p = e2();
    assert_eq!(root_choice(&p, Criterion::Gbs, 1.0), vec![0]);
    for lambda in [1.0 + 1e-9, 1.2, 1.5] {
        assert_eq!(
            root_choice(&p, Criterion::LambdaGbs, lambda),
            vec![0],
            "λ={lambda}"
        );
    }
    for lambda in [2.0, 4.0, 1e50, 2f64.powi(200)] {
        assert_eq!(
            root_choice(&p, Criterion::LambdaGbs, lambda),
            vec![3],
            "λ={lambda}"
        );
    }
    // The exact tie at λ = 5/3 is seen as a tie.
    assert_eq!(root_choice(&p, Criterion::LambdaGbs, 5.0 / 3.0), vec![0, 3]);
    assert_eq!(root_choice(&p, Criterion::Count, f64::INFINITY), vec![3]);
}

/// The plain `C_a = Σ_c (Σ_{i∈c} π_i^α)^(1/α)` of a root split of E2 (π sums to 1).
fn plain_c(prior: &[f64], yes: &[bool], lambda: f64) -> f64 {
    let (alpha, _) = score::alpha_and_complement(lambda);
    let side = |want: bool| -> f64 {
        let s: f64 = prior
            .iter()
            .zip(yes)
            .filter(|(_, &y)| y == want)
            .map(|(p, _)| p.powf(alpha))
            .sum();
        s.powf(1.0 / alpha)
    };
    side(false) + side(true)
}

#[test]
fn e2_scores_match_the_spec_and_the_plain_formula() {
    let p = e2();
    let all: Vec<u32> = (0..4).collect();
    // Spec §6 E2 root values of C_a; above λ = 1.05 the score is ln C_a (π_a = 1).
    for (lambda, expected) in [
        (1.2, [1.166185, 1.229136, 1.252033, 1.183253]),
        (1.5, [1.447381, 1.624271, 1.684377, 1.462713]),
        (4.0, [4.971429, 6.597142, 7.116047, 3.819535]),
    ] {
        let got = node_scores(&p, Criterion::LambdaGbs, lambda, &all);
        for (g, e) in got.iter().zip(expected) {
            assert!((g.exp() - e).abs() < 1e-6, "λ={lambda}: {} vs {e}", g.exp());
        }
    }
    // Near λ = 1 the score is the stable excess (C_a − 1)/(1 − α).
    let prior = [0.5, 0.2, 0.15, 0.15];
    let columns = [
        [true, false, false, false],
        [false, true, false, false],
        [false, false, true, false],
        [true, true, false, false],
    ];
    for lambda in [1.01, 1.05] {
        let (_, eps) = score::alpha_and_complement(lambda);
        let got = node_scores(&p, Criterion::LambdaGbs, lambda, &all);
        for (g, col) in got.iter().zip(&columns) {
            let c = plain_c(&prior, col, lambda);
            assert!((1.0 + g * eps - c).abs() < 1e-12, "λ={lambda}: {g} vs {c}");
        }
    }
}

#[test]
fn e1_group_rules_pick_q2() {
    let p = e1();
    assert_eq!(root_choice(&p, Criterion::Ggbs, 1.0), vec![1]);
    assert_eq!(root_choice(&p, Criterion::LambdaGgbs, 2.0), vec![1]);
    assert_eq!(root_choice(&p, Criterion::LambdaGgbs, 4.0), vec![1]);
    assert_eq!(
        root_choice(&p, Criterion::GroupCount, f64::INFINITY),
        vec![1]
    );
    assert_eq!(root_choice(&p, Criterion::Gbs, 1.0), vec![0]);
    let (tree, status) =
        build_greedy(&p, &config(Criterion::Ggbs, 1.0), &Budget::unlimited()).unwrap();
    assert_eq!(status, Status::Greedy);
    assert_eq!(tree.n_nodes(), 3);
    assert_eq!(tree.query[0], 1);
}

#[test]
fn greedy_trees_identify_every_object() {
    let p = e2();
    for (c, lambda) in [
        (Criterion::Gbs, 1.0),
        (Criterion::LambdaGbs, 2.0),
        (Criterion::Count, f64::INFINITY),
    ] {
        let (tree, _) = build_greedy(&p, &config(c, lambda), &Budget::unlimited()).unwrap();
        let mut leaves = tree.leaf_of_object.clone();
        leaves.sort_unstable();
        leaves.dedup();
        assert_eq!(leaves.len(), 4, "{c:?}: every object alone in its leaf");
        for (i, &leaf) in tree.leaf_of_object.iter().enumerate() {
            assert_eq!(tree.query[leaf as usize], -1);
            // Walk object i from the root and land in its leaf.
            let mut node = 0usize;
            while tree.query[node] >= 0 {
                let q = tree.query[node] as usize;
                node = if p.answer(i, q) {
                    tree.child_yes[node]
                } else {
                    tree.child_no[node]
                } as usize;
            }
            assert_eq!(node, leaf as usize);
        }
    }
}

#[test]
fn identical_rows_become_an_ambiguous_leaf() {
    let p = problem(&[&[0, 1], &[0, 1], &[1, 0]], &[0.2, 0.3, 0.5], None);
    let (tree, _) = build_greedy(&p, &config(Criterion::Gbs, 1.0), &Budget::unlimited()).unwrap();
    assert_eq!(tree.leaf_of_object[0], tree.leaf_of_object[1]);
    assert_ne!(tree.leaf_of_object[0], tree.leaf_of_object[2]);
}

#[test]
fn cancelled_build_returns_interrupted() {
    let cancel = CancelFlag::new();
    cancel.cancel();
    let budget = Budget::new(None, None, None, cancel).unwrap();
    let (tree, status) = build_greedy(&e2(), &config(Criterion::Gbs, 1.0), &budget).unwrap();
    assert_eq!(status, Status::Interrupted);
    assert_eq!(tree.n_nodes(), 1);
}

/// Huffman (λ = 1) and exponential Huffman (merge into λ(w1 + w2)) on `weights`.
fn huffman(weights: &[f64], lambda: f64) -> f64 {
    let mut w = weights.to_vec();
    let mut merged = 0.0;
    while w.len() > 1 {
        w.sort_by(|a, b| b.partial_cmp(a).unwrap());
        let (a, b) = (w.pop().unwrap(), w.pop().unwrap());
        merged += a + b;
        w.push(if lambda == 1.0 {
            a + b
        } else {
            lambda * (a + b)
        });
    }
    if lambda == 1.0 {
        merged
    } else {
        w[0].ln() / lambda.ln()
    }
}

#[test]
fn optimum_on_complete_query_sets_equals_huffman() {
    let prior = [0.31, 0.05, 0.22, 0.12, 0.3];
    let m = prior.len();
    let rows: Vec<Vec<u8>> = (0..m)
        .map(|i| (1..(1u32 << m) - 1).map(|s| ((s >> i) & 1) as u8).collect())
        .collect();
    let refs: Vec<&[u8]> = rows.iter().map(Vec::as_slice).collect();
    let p = problem(&refs, &prior, None);
    for lambda in [1.0, 1.5, 2.0, 7.0] {
        let (_, cost) = build_optimal(&p, lambda, None, &Budget::unlimited())
            .unwrap()
            .unwrap();
        let h = huffman(&prior, lambda);
        assert!((cost - h).abs() < 1e-12, "λ={lambda}: {cost} vs {h}");
    }
    let (_, worst) = build_optimal(&p, f64::INFINITY, None, &Budget::unlimited())
        .unwrap()
        .unwrap();
    assert_eq!(worst, 3.0);
}

#[test]
fn optimum_beats_greedy_on_e3_at_lambda_2() {
    // Spec §6 E3: λ-GGBS costs 2.0 at λ = 2 while the optimum is 1.9541963.
    let p = problem(
        &[
            &[1, 0, 1],
            &[1, 1, 1],
            &[0, 0, 1],
            &[0, 0, 0],
            &[0, 1, 0],
            &[1, 0, 0],
        ],
        &[1.0, 8.0, 2.0, 5.0, 8.0, 8.0],
        Some(&[1, 0, 2, 0, 0, 1]),
    );
    let (_, cost) = build_optimal(&p, 2.0, None, &Budget::unlimited())
        .unwrap()
        .unwrap();
    assert!((cost - 1.9541963).abs() < 1e-6, "{cost}");
    let (_, l1) = build_optimal(&p, 1.0, None, &Budget::unlimited())
        .unwrap()
        .unwrap();
    assert!((l1 - 55.0 / 32.0).abs() < 1e-12, "{l1}");
    let (tree, _) = build_greedy(
        &p,
        &config(Criterion::LambdaGgbs, 2.0),
        &Budget::unlimited(),
    )
    .unwrap();
    assert_eq!(tree.query[0], 0, "λ-GGBS takes q1 at λ = 2");
}

#[test]
fn optimum_refuses_large_problems_and_bad_lambda() {
    let rows: Vec<Vec<u8>> = (0..21).map(|i| vec![(i % 2) as u8]).collect();
    let refs: Vec<&[u8]> = rows.iter().map(Vec::as_slice).collect();
    let p = problem(&refs, &[1.0; 21], None);
    let err = build_optimal(&p, 1.0, None, &Budget::unlimited()).unwrap_err();
    assert!(err.to_string().contains("20 objects"), "{err}");
    assert!(build_optimal(&e2(), 0.5, None, &Budget::unlimited()).is_err());
}

#[test]
fn problem_validation_names_the_fault() {
    let err = QueryProblem::new(vec![0, 2], 1, 2, vec![1.0], None).unwrap_err();
    assert!(err.to_string().contains("query 1"), "{err}");
    let err = QueryProblem::new(vec![0, 1], 2, 1, vec![1.0, -1.0], None).unwrap_err();
    assert!(err.to_string().contains("object 1"), "{err}");
    assert!(QueryProblem::new(vec![0, 1], 2, 1, vec![0.0, 0.0], None).is_err());
}

#[test]
fn small_and_large_node_paths_agree_with_the_plain_formula() {
    // 14 objects: the full node takes the accumulation path, a 6-object subset the per-yes-set
    // path; both must equal C_a computed directly.
    let mut rng = crate::search::SplitMix::new(7);
    let (m, n) = (14, 9);
    let rows: Vec<Vec<u8>> = (0..m)
        .map(|_| (0..n).map(|_| rng.below(2) as u8).collect())
        .collect();
    let raw: Vec<f64> = (0..m).map(|_| 1.0 + rng.below(50) as f64).collect();
    let refs: Vec<&[u8]> = rows.iter().map(Vec::as_slice).collect();
    let p = problem(&refs, &raw, None);
    for objects in [
        (0..m as u32).collect::<Vec<u32>>(),
        vec![1, 3, 4, 8, 11, 13],
    ] {
        let mass: f64 = objects.iter().map(|&i| p.prior()[i as usize]).sum();
        let prior: Vec<f64> = objects
            .iter()
            .map(|&i| p.prior()[i as usize] / mass)
            .collect();
        for lambda in [1.01, 1.5, 4.0] {
            let (_, eps) = score::alpha_and_complement(lambda);
            let got = node_scores(&p, Criterion::LambdaGbs, lambda, &objects);
            for (q, &score) in got.iter().enumerate() {
                let yes: Vec<bool> = objects.iter().map(|&i| p.answer(i as usize, q)).collect();
                if yes.iter().all(|&y| y) || yes.iter().all(|&y| !y) {
                    assert!(score.is_nan());
                    continue;
                }
                let c = plain_c(&prior, &yes, lambda);
                let from_score = if lambda > 1.05 {
                    got[q].exp()
                } else {
                    1.0 + got[q] * eps
                };
                assert!(
                    (from_score - c).abs() < 1e-10,
                    "λ={lambda} q={q}: {from_score} vs {c}"
                );
            }
        }
    }
}
