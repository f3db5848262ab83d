use super::*;
use crate::oracle;
use crate::search::stats::StatValue;
use crate::search::{CancelFlag, Status};
use proptest::prelude::*;

fn dataset(inst: &oracle::Instance, weights: Option<&[u64]>) -> Table {
    let w = weights.map(|w| w.iter().map(|&x| x as f64).collect());
    Table::from_row_major(&inst.codes, inst.n_features, &inst.labels, None, None, w).expect("valid")
}

fn config(p: u64, q: u64, max_depth: Option<u32>, min_samples_leaf: u64) -> BranchesConfig {
    BranchesConfig {
        penalty: (p, q),
        max_depth,
        min_samples_leaf,
        fewest_splits: true,
    }
}

/// Re-scores a returned tree by routing every row (oracle code, not the search's).
fn rescored_correct(tree: &Tree, inst: &oracle::Instance, weights: &[u64]) -> u64 {
    (0..inst.n_rows)
        .filter(|&r| {
            let x: Vec<f64> = (0..inst.n_features)
                .map(|f| f64::from(inst.codes[r * inst.n_features + f]))
                .collect();
            let v = tree.value(tree.route(&x).1);
            let argmax = (0..v.len()).fold(0, |b, k| if v[k] > v[b] { k } else { b });
            argmax as u32 == inst.labels[r]
        })
        .map(|r| weights[r])
        .sum()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]
    #[test]
    fn matches_the_exhaustive_oracle(
        n in 1usize..14, d in 1usize..4, values in 2u32..4, classes in 1u32..4, seed in any::<u64>(),
        lambda in prop::sample::select(vec![(0u64, 1u64), (1, 1000), (1, 100), (1, 20), (1, 10), (1, 6), (1, 4), (1, 2)]),
        depth in prop::option::of(0u32..3), min_leaf in 1u64..3, weighted in any::<bool>(),
    ) {
        let inst = oracle::random_instance(n, d, values, classes, seed);
        let weights: Vec<u64> = if weighted { (0..n).map(|r| (r as u64 * 7 + seed) % 3).collect() } else { vec![1; n] };
        prop_assume!(weights.iter().sum::<u64>() > 0);
        let data = dataset(&inst, weighted.then_some(&weights[..]));
        let out = solve(data.clone(), &config(lambda.0, lambda.1, depth, min_leaf), &Budget::unlimited(), None).expect("solves");
        let (best_correct, best_splits) = oracle::best_sparse_tree(&inst, &weights, lambda, depth, min_leaf);
        prop_assert_eq!(out.status, Status::Optimal);
        prop_assert_eq!((out.solution.correct, out.solution.splits), (best_correct, best_splits));
        prop_assert_eq!(out.solution.tree.n_splits() as u64, best_splits);
        prop_assert_eq!(rescored_correct(&out.solution.tree, &inst, &weights), best_correct);
        prop_assert!(out.lower_bound == out.upper_bound);
        if let Some(d) = depth { prop_assert!(out.solution.tree.depth() <= d as usize); }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
    /// Without the tie-break the search still proves the optimal objective; only the number of
    /// splits among equally good trees is left to the search order (never fewer than the least).
    #[test]
    fn without_the_tie_break_the_objective_is_still_optimal(
        n in 1usize..14, d in 1usize..4, values in 2u32..4, classes in 1u32..4, seed in any::<u64>(),
        lambda in prop::sample::select(vec![(0u64, 1u64), (1, 1000), (1, 20), (1, 6), (1, 4)]),
        depth in prop::option::of(0u32..3), weighted in any::<bool>(),
    ) {
        let depth = if lambda.0 == 0 { Some(depth.unwrap_or(2)) } else { depth };
        let inst = oracle::random_instance(n, d, values, classes, seed);
        let weights: Vec<u64> = if weighted { (0..n).map(|r| 1 + (r as u64 * 7 + seed) % 3).collect() } else { vec![1; n] };
        let data = dataset(&inst, weighted.then_some(&weights[..]));
        let config = BranchesConfig { fewest_splits: false, ..config(lambda.0, lambda.1, depth, 1) };
        let out = solve(data, &config, &Budget::unlimited(), None).expect("solves");
        let (best_correct, best_splits) = oracle::best_sparse_tree(&inst, &weights, lambda, depth, 1);
        let total: u64 = weights.iter().sum();
        let value = |c: u64, s: u64| i128::from(lambda.1) * i128::from(c) - i128::from(lambda.0 * total) * i128::from(s);
        let (correct, splits) = (out.solution.correct, out.solution.splits);
        prop_assert_eq!(out.status, Status::Optimal);
        prop_assert_eq!(value(correct, splits), value(best_correct, best_splits));
        prop_assert!(splits >= best_splits);
        prop_assert_eq!(out.solution.tree.n_splits() as u64, splits);
        prop_assert_eq!(rescored_correct(&out.solution.tree, &inst, &weights), correct);
        prop_assert!(out.lower_bound == out.upper_bound);
        if let Some(d) = depth { prop_assert!(out.solution.tree.depth() <= d as usize); }
    }
}

/// Appends a renamed copy of feature 0 (value v becomes `values − 1 − v`): it splits every
/// subset exactly like feature 0, so the search keeps only one of the two.
/// Solves `inst` (weighted by `weights`, if given) and checks the optimum and the returned
/// tree, re-scored, against the exhaustive oracle.
fn agrees_with_the_oracle(
    inst: &oracle::Instance,
    weights: Option<&[u64]>,
    lambda: (u64, u64),
    depth: Option<u32>,
    min_leaf: u64,
) -> std::result::Result<(), TestCaseError> {
    let ones = vec![1; inst.n_rows];
    let counted = weights.unwrap_or(&ones);
    let config = config(lambda.0, lambda.1, depth, min_leaf);
    let out = solve(dataset(inst, weights), &config, &Budget::unlimited(), None).expect("solves");
    let best = oracle::best_sparse_tree(inst, counted, lambda, depth, min_leaf);
    prop_assert_eq!(out.status, Status::Optimal);
    prop_assert_eq!((out.solution.correct, out.solution.splits), best);
    prop_assert_eq!(rescored_correct(&out.solution.tree, inst, counted), best.0);
    Ok(())
}

fn with_renamed_copy(inst: &oracle::Instance, values: u32) -> oracle::Instance {
    let d = inst.n_features;
    let mut codes = Vec::with_capacity(inst.n_rows * (d + 1));
    for row in inst.codes.chunks_exact(d) {
        codes.extend_from_slice(row);
        codes.push(values - 1 - row[0]);
    }
    oracle::Instance {
        n_rows: inst.n_rows,
        n_features: d + 1,
        codes,
        labels: inst.labels.clone(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]
    /// Enough rows for the search to re-order them (`row_order`) and derive heavy children's
    /// counts by subtraction (`tables`), labels that depend on the features (so optimal trees
    /// split), many duplicate rows with conflicting labels, and a renamed duplicate column.
    #[test]
    fn matches_the_oracle_on_larger_data(
        n in 257usize..700, d in 1usize..4, values in 2u32..4, classes in 2u32..4,
        seed in any::<u64>(), noise in 0u64..4, weighted in any::<bool>(),
        lambda in prop::sample::select(vec![(0u64, 1u64), (1, 1000), (1, 200), (1, 50)]),
    ) {
        let mut inst = oracle::random_instance(n, d, values, classes, seed);
        for r in 0..n {
            let row = &inst.codes[r * d..(r + 1) * d];
            let clean = row.iter().take(2).sum::<u32>() % classes;
            inst.labels[r] = if ((r as u64 * 2654435761) ^ seed) % 10 < noise { inst.labels[r] } else { clean };
        }
        let inst = with_renamed_copy(&inst, values);
        let weights: Vec<u64> = if weighted { (0..n).map(|r| 1 + (r as u64 * 7 + seed) % 3).collect() } else { vec![1; n] };
        agrees_with_the_oracle(&inst, weighted.then_some(&weights[..]), lambda, None, 1)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 60, ..ProptestConfig::default() })]
    /// Limited depth on the same data: an expanded child's bound, far below its weight there,
    /// bounds its siblings through the rows they share (`Graph::bound_from_child`), and nodes
    /// with two levels left are solved outright (`depth_two`), under a minimum leaf size too;
    /// two to five classes (four and five take the solver's loops for any number of classes).
    #[test]
    fn matches_the_oracle_on_larger_data_at_limited_depth(
        n in 257usize..600, d in 2usize..5, values in 2u32..4, classes in 2u32..6,
        seed in any::<u64>(), noise in 0u64..4, weighted in any::<bool>(), depth in 1u32..4,
        lambda in prop::sample::select(vec![(0u64, 1u64), (1, 1000), (1, 100)]),
        min_leaf in prop::sample::select(vec![1u64, 1, 5]),
    ) {
        let mut inst = oracle::random_instance(n, d, values, classes, seed);
        for r in 0..n {
                let row = &inst.codes[r * d..(r + 1) * d];
            let clean = (row[0] + row[1] * (r as u32 % 2)) % classes;
            inst.labels[r] = if ((r as u64 * 2654435761) ^ seed) % 10 < noise { inst.labels[r] } else { clean };
        }
        let weights: Vec<u64> = if weighted { (0..n).map(|r| 1 + (r as u64 * 7 + seed) % 3).collect() } else { vec![1; n] };
        agrees_with_the_oracle(&inst, weighted.then_some(&weights[..]), lambda, Some(depth), min_leaf)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
    /// Rows spanning enough words for a solve with two levels left to take a child's counts
    /// from the children it solved before (`depth_two::Pairs`): binary features, some
    /// multiway ones among them, correlated so that children overlap, two to four classes,
    /// weights from 0 to 3 and minimum leaf sizes that bind (a child's row count is then not
    /// the sum of its class weights).
    #[test]
    fn matches_the_oracle_where_solved_children_lend_their_counts(
        n in 1025usize..1500, d in 3usize..7, values in 2u32..4, classes in 2u32..5,
        seed in any::<u64>(), noise in 0u64..4, depth in 2u32..4, weighted in any::<bool>(),
        lambda in prop::sample::select(vec![(0u64, 1u64), (1, 1000), (1, 100)]),
        min_leaf in prop::sample::select(vec![1u64, 5, 150]),
    ) {
        let mut inst = oracle::random_instance(n, d, values, classes, seed);
        for r in 0..n {
            let first = inst.codes[r * d] % 2;
            for f in 0..d {
                let cell = &mut inst.codes[r * d + f];
                if (seed >> f) & 1 == 0 {
                    *cell %= 2; // binary
                }
                if f > 0 && (r * 7 + f * 13) % 10 < 3 {
                    *cell = first; // overlapping with feature 0
                }
            }
            let row = &inst.codes[r * d..(r + 1) * d];
            let clean = (row[0] + row[1] * row[2]) % classes;
            inst.labels[r] = if ((r as u64 * 2654435761) ^ seed) % 10 < noise { inst.labels[r] } else { clean };
        }
        // Weights of 0 to 3: a row count is then not a sum of class weights.
        let weights: Vec<u64> = if weighted { (0..n).map(|r| (r as u64 * 7 + seed) % 4).collect() } else { vec![1; n] };
        agrees_with_the_oracle(&inst, weighted.then_some(&weights[..]), lambda, Some(depth), min_leaf)?;
    }
}

/// Siblings bound one another once one is expanded (see `Graph::bound_from_child`), and nodes
/// with two levels left are solved outright (`depth_two`): both fire on correlated features at
/// limited depth, and the optimum is the oracle's. The sibling bound waits for
/// `SIMILAR_FEATURES_LIMITED` features: constant ones pad the six that split.
#[test]
fn expanded_children_bound_their_siblings() {
    let (n, d) = (400, graph::SIMILAR_FEATURES_LIMITED);
    let mut inst = oracle::random_instance(n, d, 2, 2, 5);
    for r in 0..n {
        // Features 1-3 copy feature 0 on most rows, so the children they make overlap.
        for f in 1..4 {
            if (r * 7 + f * 13) % 10 < 8 {
                inst.codes[r * d + f] = inst.codes[r * d];
            }
        }
        inst.codes[r * d + 6..(r + 1) * d].fill(0);
        let row = &inst.codes[r * d..(r + 1) * d];
        inst.labels[r] = (row[0] ^ row[4] ^ u32::from(r % 5 == 0)) & (row[5] | row[1]);
    }
    let narrow = oracle::Instance {
        n_rows: n,
        n_features: 6,
        codes: (inst.codes.chunks(d))
            .flat_map(|row| row[..6].to_vec())
            .collect(),
        labels: inst.labels.clone(),
    };
    let narrow_out = solve(
        dataset(&narrow, None),
        &config(1, 1000, Some(3), 1),
        &Budget::unlimited(),
        None,
    )
    .expect("solves");
    assert_eq!(
        narrow_out.stats.get("similarity_bounds"),
        Some(StatValue::Count(0)),
        "six features bound no siblings"
    );
    let weights = vec![1; n];
    let (mut fired, mut solved) = (0, 0);
    for depth in 2..4 {
        let data = dataset(&inst, None);
        let out = solve(
            data,
            &config(1, 1000, Some(depth), 1),
            &Budget::unlimited(),
            None,
        )
        .expect("solves");
        let expected = oracle::best_sparse_tree(&inst, &weights, (1, 1000), Some(depth), 1);
        assert_eq!(out.status, Status::Optimal);
        assert_eq!((out.solution.correct, out.solution.splits), expected);
        if let Some(StatValue::Count(c)) = out.stats.get("similarity_bounds") {
            fired += c;
        }
        if let Some(StatValue::Count(c)) = out.stats.get("depth_two_solves") {
            solved += c;
        }
    }
    assert!(fired > 0, "the similarity bound never fired");
    assert!(solved > 0, "no node was solved outright");
}

#[test]
fn xor_tie_goes_to_the_leaf() {
    // XOR on two features, 4 rows: the leaf (0.5) and the 3-split tree (1 − 3λ) tie at λ = 1/6.
    let inst = oracle::Instance {
        n_rows: 4,
        n_features: 2,
        codes: vec![0, 0, 0, 1, 1, 0, 1, 1],
        labels: vec![0, 1, 1, 0],
    };
    let data = dataset(&inst, None);
    let tie = solve(
        data.clone(),
        &config(1, 6, None, 1),
        &Budget::unlimited(),
        None,
    )
    .expect("solves");
    assert_eq!((tie.solution.correct, tie.solution.splits), (2, 0));
    let below = solve(
        data.clone(),
        &config(1, 7, None, 1),
        &Budget::unlimited(),
        None,
    )
    .expect("solves");
    assert_eq!((below.solution.correct, below.solution.splits), (4, 3));
}

#[test]
fn stopped_searches_return_a_valid_tree_and_honest_bounds() {
    let inst = oracle::random_instance(60, 6, 3, 3, 11);
    let data = dataset(&inst, None);
    let flag = CancelFlag::new();
    flag.cancel();
    let budget = Budget::new(None, None, None, flag).expect("valid");
    let out = solve(data.clone(), &config(1, 1000, None, 1), &budget, None).expect("returns");
    assert_eq!(out.status, Status::Interrupted);
    assert!(out.lower_bound <= out.upper_bound);
    let full = solve(
        data.clone(),
        &config(1, 1000, None, 1),
        &Budget::unlimited(),
        None,
    )
    .expect("solves");
    assert!(
        out.lower_bound <= full.solution.objective && full.solution.objective <= out.upper_bound
    );
    let limited = Budget::new(None, Some(5), None, CancelFlag::new()).expect("valid");
    let out = solve(data.clone(), &config(1, 1000, None, 1), &limited, None).expect("returns");
    assert_eq!(out.status, Status::NodeLimit);
    assert!(
        out.lower_bound <= full.solution.objective
            && full.solution.objective <= out.upper_bound + 1e-12
    );
}

#[test]
fn limits_stop_a_long_descent_before_it_expands() {
    // 4,000 random binary features: every root split ties, so the first descent below the root
    // tightens the children of one split after another (about 8,000 look-aheads over
    // 4,000 features) before it expands anything. That takes seconds; the time limit must not
    // wait for it (the root's own expansion is the first pass).
    let inst = oracle::random_instance(4000, 4000, 2, 2, 3);
    let data = dataset(&inst, None);
    let budget = Budget::new(Some(0.5), None, None, CancelFlag::new()).expect("valid");
    // At λ = 1/20 no stump beats the leaf (so the greedy tree, due after this much counting,
    // adds nothing), yet every split's purification bound does.
    let out = solve(data.clone(), &config(1, 20, None, 1), &budget, None).expect("returns");
    assert_eq!(out.status, Status::TimeLimit);
    // One expansion (the root's), or none on a machine so slow that setting up took the limit.
    let expansions = match out.stats.get("expansions") {
        Some(StatValue::Count(n)) => n,
        other => panic!("expansions not counted: {other:?}"),
    };
    assert!(expansions <= 1, "{expansions} expansions");
    assert!(out.lower_bound <= out.upper_bound);
}

#[test]
fn memory_limit_stops_the_search() {
    let inst = oracle::random_instance(200, 8, 3, 2, 5);
    let data = dataset(&inst, None);
    let budget = Budget::new(None, None, Some(20_000), CancelFlag::new()).expect("valid");
    let out = solve(data.clone(), &config(0, 1, None, 1), &budget, None).expect("returns");
    assert_eq!(out.status, Status::MemoryLimit);
}

#[test]
fn dominance_by_light_children_respects_min_samples_leaf() {
    // 17 rows; splitting on x0 (2 rows | 15 rows) then x1 purifies everything, but x1 alone
    // would leave a 1-row leaf. Rerouting through the heavy child is not allowed here.
    let codes = vec![
        1, 2, 1, 2, 1, 1, 1, 3, 0, 0, 1, 3, 1, 3, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, 1, 1, 2, 1, 3,
        1, 2, 1, 1,
    ];
    let labels = vec![0, 0, 1, 0, 1, 0, 0, 1, 1, 1, 1, 0, 1, 0, 0, 0, 1];
    let inst = oracle::Instance {
        n_rows: 17,
        n_features: 2,
        codes,
        labels,
    };
    let data = dataset(&inst, None);
    let out = solve(
        data.clone(),
        &config(2, 17, None, 2),
        &Budget::unlimited(),
        None,
    )
    .expect("solves");
    assert_eq!((out.solution.correct, out.solution.splits), (17, 2));
    let weights = vec![1; 17];
    assert_eq!(
        oracle::best_sparse_tree(&inst, &weights, (2, 17), None, 2),
        (17, 2)
    );
}

#[test]
fn weights_adding_up_beyond_exact_range_are_refused_with_a_clear_error() {
    let inst = oracle::random_instance(1100, 3, 2, 2, 9);
    // Each weight is allowed; together they pass 2^53.
    let heavy = vec![9_000_000_000_000u64; inst.n_rows];
    let data = dataset(&inst, Some(&heavy));
    let err = solve(
        data.clone(),
        &config(1, 100, None, 1),
        &Budget::unlimited(),
        None,
    )
    .err()
    .map(|e| e.to_string())
    .unwrap_or_default();
    assert!(err.contains("add up to"), "{err}");
    // Just below the bound the search runs.
    let fine = vec![8_000_000_000_000u64; inst.n_rows];
    let data = dataset(&inst, Some(&fine));
    assert!(solve(
        data.clone(),
        &config(1, 100, None, 1),
        &Budget::unlimited(),
        None
    )
    .is_ok());
}

/// Both score widths give the same optimum, bounds and tree (the narrow one is chosen whenever
/// it fits, so the wide one is forced here), also when a budget stops the search.
#[test]
fn both_score_widths_agree() {
    for seed in 0..40u64 {
        let inst = oracle::random_instance(40 + seed as usize, 5, 3, 3, seed);
        let data = dataset(&inst, None);
        let cfg = config(1, 20 + seed, None, 1);
        let total = inst.n_rows as u64;
        let wide = Scale::<i128>::new(1, 20 + seed, inst.n_rows, total).expect("valid");
        let narrow = Scale::<i64>::new(1, 20 + seed, inst.n_rows, total).expect("valid");
        for limit in [None, Some(3 + seed)] {
            let budget = || Budget::new(None, limit, None, CancelFlag::new()).expect("valid");
            let a =
                search_with(data.clone(), &cfg, wide, None, &[], &budget(), None).expect("solves");
            let b = search_with(data.clone(), &cfg, narrow, None, &[], &budget(), None)
                .expect("solves");
            assert_eq!(
                (a.status, a.lower_bound, a.upper_bound),
                (b.status, b.lower_bound, b.upper_bound)
            );
            assert_eq!(
                (a.solution.correct, a.solution.splits),
                (b.solution.correct, b.solution.splits)
            );
            assert_eq!(a.solution.tree.n_nodes(), b.solution.tree.n_nodes());
        }
    }
}

/// Closed children heavier than a slot holds (weights adding up past 2^31) become complete
/// nodes: the same optimum as with unit weights.
#[test]
fn heavy_closed_children_keep_their_value() {
    for seed in 0..20u64 {
        let inst = oracle::random_instance(30, 4, 3, 2, seed);
        let ones = vec![1u64; inst.n_rows];
        let heavy = vec![3_000_000_000u64; inst.n_rows];
        let cfg = config(1, 25, None, 1);
        let out = solve(
            dataset(&inst, Some(&heavy)),
            &cfg,
            &Budget::unlimited(),
            None,
        )
        .expect("solves");
        let (best_correct, best_splits) = oracle::best_sparse_tree(&inst, &ones, (1, 25), None, 1);
        assert_eq!(out.status, Status::Optimal);
        assert_eq!(
            (out.solution.correct, out.solution.splits),
            (best_correct * heavy[0], best_splits)
        );
    }
}

/// A depth limit deeper than a node can hold is no limit when it reaches the number of
/// features (no tree is deeper), and refused with a clear error otherwise.
#[test]
fn very_deep_limits_are_no_limit_or_refused() {
    let deep = graph::MAX_DEPTH_LIMIT + 1;
    let inst = oracle::random_instance(12, 3, 3, 2, 7);
    let data = dataset(&inst, None);
    let unlimited = solve(
        data.clone(),
        &config(1, 100, None, 1),
        &Budget::unlimited(),
        None,
    )
    .unwrap();
    let limited = solve(
        data,
        &config(1, 100, Some(deep), 1),
        &Budget::unlimited(),
        None,
    )
    .unwrap();
    assert_eq!(
        (limited.solution.correct, limited.solution.splits),
        (unlimited.solution.correct, unlimited.solution.splits)
    );
    // More features than the limit: the limit would bind in principle, and cannot be held.
    let n_features = deep as usize + 1;
    let codes: Vec<u32> = (0..2 * n_features).map(|i| (i % 2) as u32).collect();
    let wide = Table::from_row_major(&codes, n_features, &[0, 1], None, None, None);
    let err = solve(
        wide.expect("valid"),
        &config(1, 100, Some(deep), 1),
        &Budget::unlimited(),
        None,
    )
    .expect_err("refused");
    assert!(
        err.to_string().contains("max_depth must be at most"),
        "{err}"
    );
}

/// The thresholds of `columns` numeric columns of `levels` values each (`x > t` for each
/// midpoint, as `ThresholdBinarizer` makes them), as a 0/1 instance, with each feature's
/// column (its chain).
fn threshold_instance(
    n: usize,
    columns: usize,
    levels: u32,
    classes: u32,
    seed: u64,
) -> (oracle::Instance, Vec<Option<u32>>) {
    let raw = oracle::random_instance(n, columns, levels, classes, seed);
    let mut codes = Vec::new();
    let mut chains = Vec::new();
    for j in 0..columns {
        for t in 0..levels - 1 {
            chains.push(Some(j as u32));
            codes.push(
                (0..n)
                    .map(|r| u32::from(raw.codes[r * columns + j] > t))
                    .collect::<Vec<_>>(),
            );
        }
    }
    let n_features = codes.len();
    let row_major = (0..n)
        .flat_map(|r| codes.iter().map(move |c| c[r]))
        .collect();
    let inst = oracle::Instance {
        n_rows: n,
        n_features,
        codes: row_major,
        labels: raw.labels,
    };
    (inst, chains)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
    /// Told which features are thresholds of one column, the search bounds a column's splits
    /// from one another (see `Graph::bound_chain_siblings`): the optimum is still the oracle's.
    #[test]
    fn chains_of_thresholds_keep_the_oracles_optimum(
        n in 2usize..13, columns in 1usize..3, levels in 2u32..5, classes in 2u32..4,
        seed in any::<u64>(),
        lambda in prop::sample::select(vec![(1u64, 1000u64), (1, 100), (1, 20), (1, 6)]),
        depth in prop::option::of(1u32..3), min_leaf in 1u64..3, weighted in any::<bool>(),
    ) {
        let (inst, chains) = threshold_instance(n, columns, levels, classes, seed);
        let weights: Vec<u64> = if weighted { (0..n).map(|r| 1 + (r as u64 * 7 + seed) % 3).collect() } else { vec![1; n] };
        let data = dataset(&inst, weighted.then_some(&weights[..]));
        let config = config(lambda.0, lambda.1, depth, min_leaf);
        let out = solve_with_chains(data, &config, &chains, &Budget::unlimited(), None).expect("solves");
        let expected = oracle::best_sparse_tree(&inst, &weights, lambda, depth, min_leaf);
        prop_assert_eq!(out.status, Status::Optimal);
        prop_assert_eq!((out.solution.correct, out.solution.splits), expected);
        prop_assert_eq!(rescored_correct(&out.solution.tree, &inst, &weights), expected.0);
    }
}

/// The chain bound fires on a column of many thresholds, and changes no optimum there.
#[test]
fn chains_bound_many_thresholds() {
    let (inst, chains) = threshold_instance(60, 2, 12, 2, 17);
    let data = dataset(&inst, None);
    let config = config(1, 200, Some(3), 1);
    let told = solve_with_chains(data.clone(), &config, &chains, &Budget::unlimited(), None)
        .expect("solves");
    let plain = solve(data, &config, &Budget::unlimited(), None).expect("solves");
    assert_eq!(told.status, Status::Optimal);
    let value = |o: &Outcome<BranchesSolution>| (o.solution.correct, o.solution.splits);
    assert_eq!(value(&told), value(&plain));
    assert!(matches!(told.stats.get("chain_bounds"), Some(StatValue::Count(c)) if c > 0));
}

/// Solves `inst` unweighted (depth-two solves from pair counts) and with all-one weights
/// (from tables); requires the same tree, feature for feature, and returns the first.
fn solved_by_pairs_and_tables(
    inst: &oracle::Instance,
    config: &BranchesConfig,
) -> Outcome<BranchesSolution> {
    let ones = vec![1; inst.n_rows];
    let by_pairs = solve(dataset(inst, None), config, &Budget::unlimited(), None).expect("solves");
    let by_tables = solve(
        dataset(inst, Some(&ones)),
        config,
        &Budget::unlimited(),
        None,
    )
    .expect("solves");
    let features = |t: &Tree| (0..t.n_nodes()).map(|i| t.feature(i)).collect::<Vec<_>>();
    assert_eq!(
        features(&by_pairs.solution.tree),
        features(&by_tables.solution.tree)
    );
    by_pairs
}

/// Depth-two solves of unweighted binary data with two classes read pair counts
/// (`graph/pair_counts.rs`); weights, even all ones, keep them on tables. Both must find the
/// same trees, feature for feature, and the oracle's optimum.
#[test]
fn pair_counts_and_tables_solve_alike() {
    let mut solved_by_pairs = 0;
    for seed in 0..300u64 {
        let n = 2 + (seed as usize * 37) % 200;
        let d = 1 + (seed as usize) % 7;
        let mut inst = oracle::random_instance(n, d, 2, 2, seed + 11);
        for r in 0..n {
            // A label that some depth-two tree mostly explains, with noise.
            let row = &inst.codes[r * d..(r + 1) * d];
            let clean = (row[0] ^ row[d / 2]) | row[d - 1];
            if ((r as u64 * 2654435761) ^ seed) % 7 != 0 {
                inst.labels[r] = clean;
            }
        }
        let lambda = [(0, 1), (1, 1000), (1, 100), (1, 20)][seed as usize % 4];
        let depth = Some(2 + (seed % 3) as u32);
        let min_leaf = 1 + seed % 3;
        let config = config(lambda.0, lambda.1, depth, min_leaf);
        let ones = vec![1; n];
        let by_pairs = solved_by_pairs_and_tables(&inst, &config);
        let best = oracle::best_sparse_tree(&inst, &ones, lambda, depth, min_leaf);
        assert_eq!(
            (by_pairs.solution.correct, by_pairs.solution.splits),
            best,
            "seed {seed}"
        );
        if let Some(StatValue::Count(c)) = by_pairs.stats.get("depth_two_solves") {
            solved_by_pairs += c;
        }
    }
    assert!(
        solved_by_pairs > 100,
        "few depth-two solves: {solved_by_pairs}"
    );
    // Rows over 16 words: the table solve then bounds splits by their solved siblings and
    // reuses those siblings' counts, paths the small instances above never take.
    for seed in 0..4u64 {
        let (n, d) = (1100, 40);
        let mut inst = oracle::random_instance(n, d, 2, 2, seed + 101);
        for r in 0..n {
            let row = &inst.codes[r * d..(r + 1) * d];
            if (r as u64 + seed) % 5 != 0 {
                inst.labels[r] = (row[3] & row[17]) | row[29];
            }
        }
        let (depth, min_leaf) = (Some(2 + (seed % 2) as u32), 1 + seed / 2);
        let config = config(1, 1000, depth, min_leaf);
        let ones = vec![1; n];
        let by_pairs = solved_by_pairs_and_tables(&inst, &config);
        if depth == Some(2) {
            let best = oracle::best_sparse_tree(&inst, &ones, (1, 1000), depth, min_leaf);
            assert_eq!((by_pairs.solution.correct, by_pairs.solution.splits), best);
        }
    }
}
