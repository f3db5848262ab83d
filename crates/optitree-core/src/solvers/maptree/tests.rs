use super::*;
use crate::search::{Budget, Status};
use std::collections::HashMap;

fn dataset(x: &[&[u32]], y: &[u32], n_classes: usize) -> Dataset {
    let f = x[0].len();
    let flat: Vec<u32> = x.iter().flat_map(|r| r.iter().copied()).collect();
    Dataset::new(&flat, f, y, Some(&vec![2; f]), Some(n_classes), None).unwrap()
}

/// Random data: `n` rows of `f` features, each 1 unless `rng.below(zero_in)` is 0, and labels
/// uniform over `k` classes (drawn after the features).
fn random_data(
    rng: &mut crate::search::SplitMix,
    (n, f, k): (usize, usize, usize),
    zero_in: usize,
) -> (Vec<Vec<u32>>, Vec<u32>, Dataset) {
    let x: Vec<Vec<u32>> = (0..n)
        .map(|_| (0..f).map(|_| u32::from(rng.below(zero_in) > 0)).collect())
        .collect();
    let y: Vec<u32> = (0..n).map(|_| rng.below(k) as u32).collect();
    let refs: Vec<&[u32]> = x.iter().map(Vec::as_slice).collect();
    let data = dataset(&refs, &y, k);
    (x, y, data)
}

/// `x` with the complement of each of its first `extra` columns appended (binarised yes/no
/// attributes come as such pairs).
fn with_complements(x: &[Vec<u32>], y: &[u32], k: usize, extra: usize) -> Dataset {
    let x: Vec<Vec<u32>> = x
        .iter()
        .map(|row| {
            let flipped = row[..extra].iter().map(|&v| 1 - v);
            row.iter().copied().chain(flipped).collect()
        })
        .collect();
    let refs: Vec<&[u32]> = x.iter().map(Vec::as_slice).collect();
    dataset(&refs, y, k)
}

/// The features that divide `rows` (some but not all of them have the value 1), ascending.
fn dividing(data: &Dataset, rows: &Bitset) -> Vec<usize> {
    let total = rows.count();
    (0..data.n_features())
        .filter(|&f| {
            let ones = rows.intersection_count(data.rows_with(f, 1));
            ones > 0 && ones < total
        })
        .collect()
}

/// What the pair passes take: each feature dividing `rows` with the class counts of its `= 1`
/// side, and that side's size.
fn dividing_sides(data: &Dataset, rows: &Bitset) -> (Vec<(usize, Vec<u64>)>, Vec<u64>) {
    let ones: Vec<(usize, Vec<u64>)> = dividing(data, rows)
        .into_iter()
        .map(|g| (g, data.class_counts(&rows.and(data.rows_with(g, 1)))))
        .collect();
    let sizes = ones.iter().map(|(_, c)| c.iter().sum()).collect();
    (ones, sizes)
}

fn config(alpha: f64, beta: f64, rho: f64, k: usize) -> MapTreeConfig {
    MapTreeConfig {
        alpha,
        beta,
        rho: vec![rho; k],
        max_expansions: None,
        fast: false,
        threads: 1,
    }
}

fn run(data: &Dataset, cfg: &MapTreeConfig) -> Outcome<MapTreeSolution> {
    let budget = Budget::new(Some(5.0), None, None, crate::search::CancelFlag::new()).unwrap();
    solve(data, cfg, &budget, None).unwrap()
}

const FOUR: [&[u32]; 4] = [&[0, 0], &[0, 1], &[1, 0], &[1, 1]];

#[test]
fn formula_values_match_the_spec() {
    let m = Posterior::new(0.95, 0.5, vec![2.5, 2.5]).unwrap();
    let lsp = [
        -0.05129329438755058,
        -0.39786688466752324,
        -0.6005994387216055,
        -0.7444404749474959,
        -0.8560122506046007,
        -0.9471730290015781,
    ];
    for (d, &v) in lsp.iter().enumerate() {
        assert!((m.log_split(d as u32) - v).abs() < 1e-15, "d={d}");
    }
    let leaf = [
        -2.99573227355399,
        -1.1139841591895987,
        -0.7951417135657253,
        -0.6443570163905132,
    ];
    for (d, &v) in leaf.iter().enumerate() {
        assert!((m.log_leaf_splittable(d as u32) - v).abs() < 1e-13, "d={d}");
    }
    for (c, v) in [
        ([0u64, 0], 0.0),
        ([1, 0], -std::f64::consts::LN_2),
        ([10, 0], -3.5635027109272035),
        ([5, 5], -7.513804619819105),
        ([11, 29], -25.0773090359273),
    ] {
        assert!((m.log_likelihood(&c) - v).abs() < 1e-12, "{c:?}");
    }
    assert!((m.log_likelihood_perfect(&[11, 29]) + 9.535722457644894).abs() < 1e-12);
    let flat = Posterior::new(0.95, 0.5, vec![1.0, 1.0]).unwrap();
    assert!((flat.log_likelihood(&[3, 5]) + 6.22257626807137).abs() < 1e-12);
}

#[test]
fn brute_force_tables() {
    // C1 (y = x0, ρ = 1): the tied MAP trees cost 4.312762966522323.
    let c1 = run(
        &dataset(&FOUR, &[0, 0, 1, 1], 2),
        &config(0.95, 0.5, 1.0, 2),
    );
    assert_eq!(c1.status, Status::Optimal);
    assert!((c1.upper_bound - 4.312762966522323).abs() < 1e-9);
    assert_eq!(c1.solution.reference_string, "((1)0(1))");
    // C2 (XOR, ρ = 1).
    let c2 = run(
        &dataset(&FOUR, &[0, 1, 1, 0], 2),
        &config(0.95, 0.5, 1.0, 2),
    );
    assert!((c2.upper_bound - 4.312762966522323).abs() < 1e-9);
    // C3 (XOR three times, ρ = 2.5).
    let x12: Vec<&[u32]> = (0..3).flat_map(|_| FOUR).collect();
    let c3 = run(
        &dataset(&x12, &[0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0], 2),
        &config(0.95, 0.5, 2.5, 2),
    );
    assert!((c3.upper_bound - 8.23607997856922).abs() < 1e-9);
    assert_eq!(c3.solution.reference_string, "((1)0(1))");
    // C4 (an uninformative feature still splits: its children are unsplittable).
    let c4 = run(
        &dataset(&[&[0], &[0], &[1], &[1]], &[0, 1, 0, 1], 2),
        &config(0.95, 0.5, 2.5, 2),
    );
    assert!((c4.upper_bound - 3.188525130215241).abs() < 1e-9);
    assert_eq!(c4.solution.reference_string, "(0)");
    // C5 (all labels 1).
    let x5: [&[u32]; 5] = [&[0, 0], &[0, 1], &[1, 0], &[1, 1], &[1, 1]];
    let c5 = run(&dataset(&x5, &[1; 5], 2), &config(0.95, 0.5, 2.5, 2));
    assert!((c5.upper_bound - 4.851759467255009).abs() < 1e-9);
    assert_eq!(c5.solution.reference_string, "((0)1(0))");
}

#[test]
fn defect_regressions() {
    // D1: identical features, different labels; the reference segfaults.
    let d1 = run(
        &dataset(&[&[0], &[1], &[0]], &[0, 1, 1], 2),
        &config(0.999, 0.1, 2.5, 2),
    );
    assert_eq!(d1.status, Status::Optimal);
    assert!((d1.upper_bound - 2.2627635988073735).abs() < 1e-9);
    assert_eq!(d1.solution.reference_string, "(0)");
    // D2: N = 64 (the reference drops every row).
    let rows: Vec<Vec<u32>> = (0..64u32)
        .map(|i| vec![i & 1, (i >> 1) & 1, (i >> 2) & 1])
        .collect();
    let refs: Vec<&[u32]> = rows.iter().map(Vec::as_slice).collect();
    let y: Vec<u32> = rows.iter().map(|r| r[0] ^ r[1]).collect();
    let d2 = run(&dataset(&refs, &y, 2), &config(0.95, 0.5, 2.5, 2));
    assert!((d2.upper_bound - 24.508219463780062).abs() < 1e-9);
    assert_eq!(d2.solution.reference_string, "((1)0(1))");
    // D3: subsets the reference's linear hash merges.
    let mut x = vec![vec![0u32, 0]; 129];
    x[127][0] = 1;
    x[63][1] = 1;
    let refs: Vec<&[u32]> = x.iter().map(Vec::as_slice).collect();
    let mut y = vec![0u32; 129];
    y[63] = 1;
    for (rho, cost) in [
        (2.5, 11.808837726519185),
        (1.0, 7.380631984654539),
        (0.1, 3.7413935448462623),
    ] {
        let d3 = run(&dataset(&refs, &y, 2), &config(0.95, 0.5, rho, 2));
        assert!(
            (d3.upper_bound - cost).abs() < 1e-9,
            "ρ={rho}: {}",
            d3.upper_bound
        );
        assert_eq!(d3.solution.reference_string, "((1)0)");
    }
}

#[test]
fn all_rows_identical_is_a_single_leaf() {
    let out = run(
        &dataset(&[&[1, 0], &[1, 0], &[1, 0]], &[0, 1, 1], 2),
        &config(0.95, 0.5, 2.5, 2),
    );
    assert_eq!(out.solution.reference_string, "");
    assert!((out.upper_bound - 2.261763098473789).abs() < 1e-12);
    assert_eq!(out.lower_bound, out.upper_bound);
}

/// Exact DP over (subset, depth): the oracle of spec §6 D.
fn dp(
    data: &Dataset,
    m: &Posterior,
    rows: &Bitset,
    depth: u32,
    memo: &mut HashMap<(Vec<u64>, u32), f64>,
) -> f64 {
    let key = (rows.words().to_vec(), depth);
    if let Some(&v) = memo.get(&key) {
        return v;
    }
    let counts = data.class_counts(rows);
    let valid = dividing(data, rows);
    let mut best = m.leaf_cost(depth, !valid.is_empty(), &counts);
    for &f in &valid {
        let v = m.split_penalty(depth, valid.len())
            + dp(data, m, &rows.and(data.rows_with(f, 0)), depth + 1, memo)
            + dp(data, m, &rows.and(data.rows_with(f, 1)), depth + 1, memo);
        best = best.min(v);
    }
    memo.insert(key, best);
    best
}

#[test]
fn search_equals_the_exact_programme_on_random_data() {
    let mut rng = crate::search::SplitMix::new(11);
    for case in 0..400 {
        let fast = case % 2 == 1;
        // Fast mode solves nodes of up to 12 rows exactly: larger data mix both paths.
        let n = 1 + rng.below(if fast { 40 } else { 14 });
        let f = 1 + rng.below(4);
        let k = 2 + rng.below(2);
        let (x, y, data) = random_data(&mut rng, (n, f, k), 2);
        let (alpha, beta) = [(0.95, 0.5), (0.999, 0.1), (0.5, 4.0), (0.8, 1.0)][case % 4];
        let rho = [2.5, 1.0, 0.5][case % 3];
        let mut cfg = config(alpha, beta, rho, k);
        cfg.max_expansions = Some(100_000);
        cfg.fast = fast;
        let out = run(&data, &cfg);
        let m = Posterior::new(alpha, beta, cfg.rho.clone()).unwrap();
        let exact = dp(&data, &m, &data.all_rows(), 0, &mut HashMap::new());
        assert_eq!(
            out.status,
            Status::Optimal,
            "case {case}: n={n} f={f} k={k} x={x:?} y={y:?} α={alpha} β={beta} ρ={rho} lb={} ub={}",
            out.lower_bound,
            out.upper_bound
        );
        assert!(
            (out.upper_bound - exact).abs() < 1e-9,
            "case {case}: {} vs {exact}",
            out.upper_bound
        );
        assert_eq!(out.lower_bound, out.upper_bound);
    }
}

#[test]
fn expansion_limit_returns_bounds_and_a_tree() {
    let x12: Vec<&[u32]> = (0..3).flat_map(|_| FOUR).collect();
    let data = dataset(&x12, &[0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0], 2);
    let mut cfg = config(0.95, 0.5, 2.5, 2);
    cfg.max_expansions = Some(1);
    let out = run(&data, &cfg);
    assert_eq!(out.status, Status::NodeLimit);
    assert!(out.lower_bound <= out.upper_bound);
    assert_eq!(
        out.solution.reference_string.is_empty(),
        out.solution.tree.n_nodes() == 1
    );
}

/// The fast mode's fresh-node bound (count bound and look-ahead) never exceeds the exact optimum
/// of the subproblem it bounds: random data with many duplicate rows (few features), random
/// subsets and depths, four (α, β, ρ) settings.
#[test]
fn count_bound_and_look_ahead_are_admissible() {
    use super::count_bound::{largest_group, CountBound, ValidFloor};
    let mut rng = crate::search::SplitMix::new(5);
    let mut checked = 0;
    for case in 0..120 {
        let n = 2 + rng.below(13);
        let f = 1 + rng.below(4);
        let (_, _, data) = random_data(&mut rng, (n, f, 2), 2);
        let (alpha, beta) = [(0.95, 0.5), (0.999, 0.1), (0.5, 4.0), (0.8, 1.0)][case % 4];
        let rho = [2.5, 1.0, 0.5][case % 3];
        let m = Posterior::new(alpha, beta, vec![rho, rho]).unwrap();
        let totals = data.class_counts(&data.all_rows());
        let bound = CountBound::new(&m, largest_group(&data), totals[0], totals[1]);
        let mut memo = HashMap::new();
        for _ in 0..20 {
            let rows = Bitset::from_indices(n, (0..n).filter(|_| rng.below(3) > 0));
            let c = data.class_counts(&rows);
            let total = c[0] + c[1];
            if total == 0 {
                continue;
            }
            let depth = rng.below(4) as u32;
            let exact = dp(&data, &m, &rows, depth, &mut memo);
            assert!(
                bound.subtree(depth, c[0], c[1]) <= exact + 1e-12,
                "case {case}"
            );
            let valid = dividing(&data, &rows);
            if valid.is_empty() {
                continue;
            }
            let children: Vec<(u64, u64)> = valid
                .iter()
                .map(|&g| {
                    let ones = data.rows_with(g, 1);
                    let b1 = rows.intersection_count3(ones, data.rows_of_class(1));
                    (rows.intersection_count(ones) - b1, b1)
                })
                .collect();
            let mut floor = ValidFloor::default();
            let sizes = children.iter().map(|&(a1, b1)| a1 + b1);
            let larger = floor.larger_child_floors(total, sizes);
            let look = bound.look_ahead(depth, (c[0], c[1]), &children, valid.len(), larger);
            assert!(
                look <= exact,
                "case {case}: look-ahead {look} > optimum {exact}"
            );
            checked += 1;
        }
    }
    assert!(checked > 500, "only {checked} splittable subsets checked");
}

/// The valid-feature floor of a node never exceeds the number of features that divide any subset
/// of the node's rows of the size it is asked about.
#[test]
fn valid_floor_is_below_every_subsets_dividing_features() {
    use super::count_bound::ValidFloor;
    let mut rng = crate::search::SplitMix::new(9);
    let mut tight = 0;
    for _ in 0..300 {
        let n = 2 + rng.below(20);
        let f = 1 + rng.below(8);
        let (x, _, data) = random_data(&mut rng, (n, f, 2), 5);
        let node = Bitset::from_indices(n, (0..n).filter(|_| rng.below(4) > 0));
        let ones = dividing(&data, &node)
            .into_iter()
            .map(|g| node.intersection_count(data.rows_with(g, 1)));
        let floor = ValidFloor::new(node.count(), ones);
        for _ in 0..20 {
            let subset = Bitset::from_indices(n, node.iter().filter(|_| rng.below(6) > 0));
            let size = subset.count();
            let divides = dividing(&data, &subset).len();
            assert!(
                floor.of_subset(size) <= divides,
                "{x:?} {node:?} {subset:?}"
            );
            tight += usize::from(floor.of_subset(size) > 0);
        }
    }
    assert!(tight > 500, "the floor was positive only {tight} times");
}

/// The fast mode's tabulated terms agree with the formulas (up to rounding), for two and three
/// classes, inside and beyond the tables.
#[test]
fn tabulated_terms_match_the_formulas() {
    for rho in [vec![2.5, 2.5], vec![0.3, 1.7], vec![0.5, 1.0, 2.0]] {
        let plain = Posterior::new(0.9, 0.7, rho.clone()).unwrap();
        let mut tabulated = plain.clone();
        tabulated.tabulate(40, 6, 5);
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * a.abs().max(1.0);
        for depth in [0, 1, 4, 5, 9] {
            assert!(close(plain.log_split(depth), tabulated.log_split(depth)));
            assert!(close(
                plain.log_leaf_splittable(depth),
                tabulated.log_leaf_splittable(depth)
            ));
            for n_valid in [1, 6, 7, 100] {
                let (p, t) = (
                    plain.split_penalty(depth, n_valid),
                    tabulated.split_penalty(depth, n_valid),
                );
                assert!(close(p, t));
            }
        }
        for counts in [
            vec![0, 0, 0],
            vec![3, 0, 9],
            vec![17, 23, 0],
            vec![40, 1, 30],
        ] {
            let counts = &counts[..rho.len()];
            assert!(close(
                plain.log_likelihood(counts),
                tabulated.log_likelihood(counts)
            ));
            let (p, t) = (
                plain.log_likelihood_perfect(counts),
                tabulated.log_likelihood_perfect(counts),
            );
            assert!(close(p, t), "{counts:?}: {p} vs {t}");
            if let [a, b] = *counts {
                // The two-class shortcuts give the general path's values bit for bit.
                for model in [&plain, &tabulated] {
                    let ll = model.log_likelihood(counts);
                    assert_eq!(model.log_likelihood_two(a, b).to_bits(), ll.to_bits());
                    let perfect = model.log_likelihood_perfect(counts);
                    let two = model.log_likelihood_perfect_two(a, b);
                    assert_eq!(two.to_bits(), perfect.to_bits());
                }
            }
        }
    }
}

/// Fast mode with one split per first expansion, so that nearly every node defers splits and
/// many are expanded again, half the cases with complement columns (twin splits) and half
/// ranking splits with divider floors: the same optimum as the exact programme, and a tree that
/// has it.
#[test]
fn deferred_splits_reach_the_same_optimum() {
    let mut rng = crate::search::SplitMix::new(23);
    let (mut reexpanded, mut merged) = (0, 0);
    for case in 0..150 {
        let n = 13 + rng.below(30);
        let f = 3 + rng.below(6);
        let k = 2 + rng.below(2);
        let (x, y, data) = random_data(&mut rng, (n, f, k), 2);
        // Every other case: complement columns, whose splits are twins at every node.
        let extra = (case % 2) * (1 + rng.below(f));
        let data = match extra {
            0 => data,
            _ => with_complements(&x, &y, k, extra),
        };
        let f = f + extra;
        let (alpha, beta) = [(0.95, 0.5), (0.999, 0.1), (0.5, 4.0), (0.8, 1.0)][case % 4];
        let mut model = Posterior::new(alpha, beta, vec![[2.5, 1.0, 0.5][case % 3]; k]).unwrap();
        model.tabulate(n, f, 64);
        let mut search = Search::new(&data, &model, small::SMALL_ROWS);
        search.first_splits = 1;
        // Every other pair of cases ranks splits with divider floors at every node.
        if case / 4 % 2 == 1 {
            search.floor_work = 0;
        }
        let status = search.run(&Budget::unlimited(), Some(200_000), None);
        let exact = dp(&data, &model, &data.all_rows(), 0, &mut HashMap::new());
        let (lb, ub) = search.bounds();
        assert_eq!(status, Status::Optimal, "case {case}: lb={lb} ub={ub}");
        assert!((ub - exact).abs() < 1e-9, "case {case}: {ub} vs {exact}");
        let tree = extract(&search, 0, &data.all_rows(), &mut String::new());
        let tree = TreeSpec {
            root: tree,
            n_features: f,
            n_classes: k,
        }
        .build()
        .unwrap();
        assert!(tree.n_nodes() >= 1);
        reexpanded += search.reexpansions;
        merged += search.merged_splits;
    }
    assert!(reexpanded > 100, "only {reexpanded} re-expansions");
    assert!(merged > 100, "only {merged} merged splits");
}

/// The pairwise count of the features dividing each child equals a direct count on the child,
/// also when the node's rows leave whole 64-row words empty (the count skips those); a split
/// is a twin exactly when an earlier feature splits the rows the same way.
#[test]
fn children_dividers_match_a_direct_count() {
    let mut rng = crate::search::SplitMix::new(31);
    let mut twins = 0;
    for case in 0..200 {
        let n = 2 + rng.below(260);
        let f = 1 + rng.below(9);
        let (_, _, data) = random_data(&mut rng, (n, f, 2), 4);
        // Every other case: the rows of a window (a deep node's rows, clustered).
        let (low, high) = match case % 2 {
            0 => (0, n),
            _ => {
                let low = rng.below(n);
                (low, low + 1 + rng.below(n - low))
            }
        };
        let rows = Bitset::from_indices(n, (low..high).filter(|_| rng.below(3) > 0));
        let valid = dividing(&data, &rows);
        let (ones, sizes) = dividing_sides(&data, &rows);
        let facts = facts::children_dividers(&data, &rows, &ones, &sizes, None);
        let side = |g: usize, v: usize| rows.and(data.rows_with(g, v));
        for (i, &g) in valid.iter().enumerate() {
            assert_eq!(facts.zeros[i], dividing(&data, &side(g, 0)).len());
            assert_eq!(facts.ones[i], dividing(&data, &side(g, 1)).len());
            let twin = valid[..i]
                .iter()
                .any(|&h| side(h, 1) == side(g, 1) || side(h, 1) == side(g, 0));
            assert_eq!(facts.twin[i], twin, "feature {g}");
            twins += usize::from(twin);
        }
    }
    assert!(twins > 20, "only {twins} twins");
}

/// The pair pass shared with a second thread (on nodes with enough pairs) counts as one thread
/// does.
#[test]
fn the_pair_pass_on_two_threads_counts_the_same() {
    let mut rng = crate::search::SplitMix::new(43);
    let mut fork = crate::search::Fork::new().expect("a thread");
    for _ in 0..40 {
        let n = 200 + rng.below(800);
        let f = 40 + rng.below(40);
        let zero_in = 2 + rng.below(6);
        let (_, _, data) = random_data(&mut rng, (n, f, 2), zero_in);
        let rows = Bitset::from_indices(n, (0..n).filter(|_| rng.below(4) > 0));
        let (ones, sizes) = dividing_sides(&data, &rows);
        let alone = facts::children_dividers(&data, &rows, &ones, &sizes, None);
        let shared = facts::children_dividers(&data, &rows, &ones, &sizes, Some(&mut fork));
        assert_eq!(alone.zeros, shared.zeros);
        assert_eq!(alone.ones, shared.ones);
        assert_eq!(alone.twin, shared.twin);
    }
}

/// Ranking splits with divider floors (at every node) finds the exact programme's optimum on
/// labels that a tree explains (random labels mostly make a single leaf optimal, which says
/// little about the ranking), and the floors never exceed the counts.
#[test]
fn divider_floors_keep_the_optimum() {
    let mut rng = crate::search::SplitMix::new(47);
    let mut splits = 0;
    for case in 0..120 {
        let n = 20 + rng.below(80);
        let f = 3 + rng.below(6);
        let (x, _, _) = random_data(&mut rng, (n, f, 2), 2);
        // (x0 and x1) or x2, with one label in eight flipped.
        let y: Vec<u32> = x
            .iter()
            .map(|r| ((r[0] & r[1]) | r[2]) ^ u32::from(rng.below(8) == 0))
            .collect();
        let refs: Vec<&[u32]> = x.iter().map(Vec::as_slice).collect();
        let data = match case % 2 {
            0 => dataset(&refs, &y, 2),
            _ => with_complements(&x, &y, 2, 1 + rng.below(f)),
        };
        let (alpha, beta) = [(0.95, 0.5), (0.999, 0.1), (0.8, 1.0)][case % 3];
        let mut model = Posterior::new(alpha, beta, vec![[2.5, 1.0][case % 2]; 2]).unwrap();
        model.tabulate(n, data.n_features(), 64);
        let mut search = Search::new(&data, &model, small::SMALL_ROWS);
        search.first_splits = 1 + case % 3;
        search.floor_work = 0;
        let status = search.run(&Budget::unlimited(), Some(200_000), None);
        let exact = dp(&data, &model, &data.all_rows(), 0, &mut HashMap::new());
        let (lb, ub) = search.bounds();
        assert_eq!(status, Status::Optimal, "case {case}: lb={lb} ub={ub}");
        assert!((ub - exact).abs() < 1e-9, "case {case}: {ub} vs {exact}");
        splits += search.graph.and.len();
        // Floors against counts on random subsets of the same data.
        let rows = Bitset::from_indices(n, (0..n).filter(|_| rng.below(3) > 0));
        let valid = dividing(&data, &rows);
        let (ones, sizes) = dividing_sides(&data, &rows);
        let counted = facts::children_dividers(&data, &rows, &ones, &sizes, None);
        let floors = facts::children_floors(&data, &rows, &ones, &sizes, &mut Default::default());
        for i in 0..valid.len() {
            assert!(floors.zeros[i] <= counted.zeros[i], "case {case}");
            assert!(floors.ones[i] <= counted.ones[i], "case {case}");
            assert_eq!(floors.twin[i], counted.twin[i], "case {case}");
        }
    }
    assert!(
        splits > 1_500,
        "only {splits} splits: the trees are too simple"
    );
}

/// A candidate's rows are rebuilt from its origin chain and compared word for word: subsets
/// forced onto one hash (and one depth) stay apart, deeper nodes are found through chains of
/// several sides, and every mismatch counts as a hash collision.
#[test]
fn cache_candidates_are_compared_through_their_origin_chains() {
    use super::graph::Graph;
    let mut rng = crate::search::SplitMix::new(53);
    let (_, _, data) = random_data(&mut rng, (150, 4, 2), 2);
    let side = |rows: &Bitset, f: usize, v: usize| rows.and(data.rows_with(f, v));
    let root_rows = data.all_rows();
    let mut graph = Graph::new(&data, 0.0, 1.0);
    graph.mark_expanded(0, 4);
    const HASH: u64 = 0x5EED;
    // Depth 1: every side of every feature, all on one hash.
    let mut depth1 = Vec::new();
    for f in 0..4 {
        for v in 0..2 {
            let rows = side(&root_rows, f, v);
            assert_eq!(graph.find(&rows, 1, HASH), None);
            depth1.push((
                graph.insert(HASH, (0.0, 1.0), 1, 0, (f * 2 + v) as u32),
                rows,
            ));
        }
    }
    for (id, rows) in &depth1 {
        assert_eq!(graph.find(rows, 1, HASH), Some(*id));
        assert_eq!(
            graph.find(rows, 2, HASH),
            None,
            "the depth is part of the key"
        );
    }
    // Depth 2 below the first node (feature 0 = 0), and depth 3 below that.
    let (parent, parent_rows) = depth1[0].clone();
    graph.mark_expanded(parent, 3);
    let rows2 = side(&parent_rows, 2, 1);
    let child = graph.insert(HASH, (0.0, 1.0), 2, parent, 2 * 2 + 1);
    graph.mark_expanded(child, 2);
    let rows3 = side(&rows2, 3, 0);
    let grandchild = graph.insert(HASH, (0.0, 1.0), 3, child, 3 * 2);
    assert_eq!(graph.find(&rows2, 2, HASH), Some(child));
    assert_eq!(graph.find(&rows3, 3, HASH), Some(grandchild));
    // The same rows reached in another order are the same subproblem.
    let other_order = side(&side(&side(&root_rows, 3, 0), 2, 1), 0, 0);
    assert_eq!(graph.find(&other_order, 3, HASH), Some(grandchild));
    // Rows no node holds.
    assert_eq!(graph.find(&side(&rows2, 3, 1), 3, HASH), None);
    assert!(graph.hash_collisions > 20);
}

/// The subset hash is linear: a split's `= 0` child hashes as the node's sum minus the `= 1`
/// child's (what an expansion relies on), and distinct subsets of one node get distinct hashes.
#[test]
fn subset_hashes_of_two_children_come_from_one_pass() {
    use super::graph::SubsetHasher;
    let mut rng = crate::search::SplitMix::new(71);
    // 200 rows: four words, the last one partial.
    let (_, _, data) = random_data(&mut rng, (200, 6, 2), 2);
    let hasher = SubsetHasher::new(data.all_rows().words().len());
    let mut seen = HashMap::new();
    let mut node = data.all_rows();
    for (f, v) in [(0, 1), (3, 0), (5, 1)] {
        let node_sum = hasher.sum(&node);
        for g in 0..6 {
            let one = hasher.sum_and(&node, data.rows_with(g, 1));
            let (rows1, rows0) = (
                node.and(data.rows_with(g, 1)),
                node.and(data.rows_with(g, 0)),
            );
            assert_eq!(one, hasher.sum(&rows1));
            assert_eq!(node_sum.wrapping_sub(one), hasher.sum(&rows0));
            for rows in [rows1, rows0] {
                let hash = SubsetHasher::finish(hasher.sum(&rows), 4);
                assert_eq!(hash, hasher.hash(&rows, 4));
                assert_ne!(hash, hasher.hash(&rows, 5), "the depth is part of the hash");
                let earlier = seen.insert(hash, rows.clone());
                assert!(earlier.is_none_or(|e| e == rows), "two subsets, one hash");
            }
        }
        node = node.and(data.rows_with(f, v));
    }
}

/// `larger_child_floors` gives each split's larger child the floor `of_subset` gives it, and the
/// smaller child's is 0, both where it counts with the table (small nodes) and by sorting.
#[test]
fn larger_child_floors_match_the_floor_of_each_child() {
    use super::count_bound::ValidFloor;
    let mut rng = crate::search::SplitMix::new(97);
    let mut scratch = ValidFloor::default();
    for case in 0..400 {
        let total = 2 + rng.below(if case % 2 == 0 { 40 } else { 5_000 }) as u64;
        let n = 1 + rng.below(60);
        // Sides of 1..total-1 rows, with repeats (equal smaller sides share a floor).
        let ones: Vec<u64> = (0..n)
            .map(|_| 1 + rng.below(total as usize - 1) as u64)
            .collect();
        let reference = ValidFloor::new(total, ones.iter().copied());
        let larger = scratch.larger_child_floors(total, ones.iter().copied());
        for (&one, &floor) in ones.iter().zip(larger) {
            let (big, small) = (one.max(total - one), one.min(total - one));
            assert_eq!(floor as usize, reference.of_subset(big), "case {case}");
            assert_eq!(reference.of_subset(small), 0, "case {case}");
        }
    }
}

/// `n` rows of `8 + noise` binary columns with every kind of empty quadrant: a one-hot
/// attribute (columns 0-2, values that exclude each other), a column and its complement (3, 4),
/// a value nested in another (5 within 0), a column that covers the data with another (6 with
/// 1), then noise; labels follow columns 0 and 3 with one in eight flipped.
pub(super) fn one_hot_data(rng: &mut crate::search::SplitMix, n: usize, noise: usize) -> Dataset {
    let mut x = Vec::new();
    let mut y = Vec::new();
    for _ in 0..n {
        let colour = rng.below(3);
        let size = rng.below(2) as u32;
        let rare = u32::from(colour == 0 && rng.below(4) == 0);
        let either = u32::from(colour != 1 || rng.below(2) == 0);
        let first = u32::from(colour == 0);
        x.extend([first, u32::from(colour == 1), u32::from(colour == 2)]);
        x.extend([size, 1 - size, rare, either, rng.below(2) as u32]);
        x.extend((0..noise).map(|_| rng.below(2) as u32));
        y.push((first & size) ^ u32::from(rng.below(8) == 0));
    }
    let f = 8 + noise;
    Dataset::new(&x, f, &y, Some(&vec![2; f]), Some(2), None).unwrap()
}

/// The fast mode's model (α = 0.95, β = 0.5, ρ = 2.5 per class), tabulated for `data`.
fn fast_model(data: &Dataset) -> Posterior {
    let mut model = Posterior::new(0.95, 0.5, vec![2.5; data.n_classes()]).unwrap();
    model.tabulate(data.n_rows(), data.n_features(), 64);
    model
}

/// Counts decided by the empty quadrants leave the search as it was: same bounds after every
/// number of expansions, same graph, and the same proven optimum.
#[test]
fn empty_quadrants_leave_the_search_unchanged() {
    let mut rng = crate::search::SplitMix::new(31);
    let data = one_hot_data(&mut rng, 1_100, 0);
    let model = fast_model(&data);
    for k in [50, 400, 100_000] {
        let run = |with_quadrants: bool| {
            let mut search = Search::new(&data, &model, small::SMALL_ROWS);
            assert!(search.quadrants.is_some(), "18 words: the table is built");
            if !with_quadrants {
                search.quadrants = None;
            }
            search.floor_work = 0;
            let status = search.run(&Budget::unlimited(), Some(k), None);
            (
                status,
                search.bounds(),
                search.graph.or.len(),
                search.expansions,
            )
        };
        let with = run(true);
        assert_eq!(with, run(false), "{k} expansions");
        if k == 100_000 {
            assert_eq!(with.0, Status::Optimal);
        }
    }
}

/// Near its memory limit the search sheds splits (leaves them behind the deferred bound), grows
/// a smaller graph and still proves the same optimum.
#[test]
fn shedding_splits_near_the_memory_limit_keeps_the_optimum() {
    use crate::search::CancelFlag;
    let mut rng = crate::search::SplitMix::new(37);
    let data = one_hot_data(&mut rng, 1_100, 8);
    let model = fast_model(&data);
    let mut free = Search::new(&data, &model, small::SMALL_ROWS);
    assert_eq!(free.run(&Budget::unlimited(), None, None), Status::Optimal);
    assert_eq!(free.shed_splits, 0, "no limit, nothing shed");
    let needed = free.graph.memory();
    // The unlimited graph's size as the limit: shedding starts at half of it.
    let budget = Budget::new(None, None, Some(needed), CancelFlag::new()).unwrap();
    let mut tight = Search::new(&data, &model, small::SMALL_ROWS);
    assert_eq!(tight.run(&budget, None, None), Status::Optimal);
    assert!(tight.shed_splits > 0, "the limit was near enough to shed");
    assert!(
        tight.graph.memory() < needed,
        "shedding kept the graph smaller"
    );
    assert_eq!(tight.bounds(), free.bounds());
}

/// A second thread looks up half of each expansion's splits and changes nothing: the same bounds
/// after every number of expansions, the same graph, statistics and tree, on two classes (with
/// the count bound and the empty quadrants) and on three (without either).
#[test]
fn a_second_thread_leaves_the_search_unchanged() {
    let mut rng = crate::search::SplitMix::new(41);
    let two = one_hot_data(&mut rng, 1_100, 6);
    let (_, _, three) = random_data(&mut rng, (400, 10, 3), 3);
    for (data, k) in [(&two, 2), (&three, 3)] {
        let model = fast_model(data);
        for limit in [50, 400, 100_000] {
            let run = |two_threads: bool| {
                let mut search = Search::new(data, &model, small::SMALL_ROWS);
                search.two_threads = two_threads;
                let status = search.run(&Budget::unlimited(), Some(limit), None);
                let mut text = String::new();
                extract(&search, 0, &data.all_rows(), &mut text);
                let counts = [
                    search.expansions,
                    search.evaluated_splits,
                    search.graph.hash_collisions,
                    search.graph.or.len() as u64,
                    search.graph.and.len() as u64,
                ];
                (status, search.bounds(), counts, text)
            };
            let alone = run(false);
            assert_eq!(alone, run(true), "{k} classes, {limit} expansions");
            if limit == 100_000 {
                assert_eq!(alone.0, Status::Optimal, "{k} classes");
            }
        }
    }
}

/// The cost of `shape` below `rows` at `depth`, summed node by node from the model's terms.
fn shape_cost(data: &Dataset, m: &Posterior, shape: &regrow::Shape, rows: &Bitset, d: u32) -> f64 {
    let valid = dividing(data, rows);
    match shape {
        regrow::Shape::Leaf => m.leaf_cost(d, !valid.is_empty(), &data.class_counts(rows)),
        regrow::Shape::Split(f, cost, children) => {
            assert!(valid.contains(f), "feature {f} divides the rows it splits");
            let sides = [0, 1].map(|v| rows.and(data.rows_with(*f, v)));
            let total = m.split_penalty(d, valid.len())
                + shape_cost(data, m, &children[0], &sides[0], d + 1)
                + shape_cost(data, m, &children[1], &sides[1], d + 1);
            assert!(
                (total - cost).abs() < 1e-9,
                "a subtree costs {total}, not {cost}"
            );
            total
        }
    }
}

/// A regrown subtree costs what the grower says, recomputed node by node, and never less than
/// the exact optimum (random data and subsets, two and three classes).
#[test]
fn regrown_subtrees_cost_what_they_claim() {
    let mut rng = crate::search::SplitMix::new(43);
    for case in 0..300 {
        let n = 1 + rng.below(80);
        let f = 1 + rng.below(6);
        let k = 2 + case % 2;
        let (_, _, data) = random_data(&mut rng, (n, f, k), 2 + case % 3);
        let m = fast_model(&data);
        let mut rows = data.all_rows();
        for r in 0..n {
            if rng.below(4) == 0 {
                rows.remove(r);
            }
        }
        if rows.count() == 0 {
            continue;
        }
        let depth = rng.below(3) as u32;
        let budget = Budget::unlimited();
        let (cost, shape) = regrow::Grower::new(&data, &m, &budget).grow(&rows, depth);
        let recomputed = shape_cost(&data, &m, &shape, &rows, depth);
        assert!(
            (cost - recomputed).abs() < 1e-9,
            "case {case}: {cost} vs {recomputed}"
        );
        let exact = dp(&data, &m, &rows, depth, &mut HashMap::new());
        assert!(
            cost >= exact - 1e-9,
            "case {case}: {cost} below the optimum {exact}"
        );
    }
}

/// Past `LOOK_AHEAD_FEATURES` dividing features the look-ahead tries a shortlist (the cheapest
/// single splits): the subtree it grows still costs what it claims.
#[test]
fn regrown_subtrees_of_wide_data_cost_what_they_claim() {
    let mut rng = crate::search::SplitMix::new(44);
    for case in 0..3 {
        let (_, _, data) = random_data(&mut rng, (120, 600, 2), 2);
        let m = fast_model(&data);
        let rows = data.all_rows();
        let budget = Budget::unlimited();
        let (cost, shape) = regrow::Grower::new(&data, &m, &budget).grow(&rows, 0);
        let recomputed = shape_cost(&data, &m, &shape, &rows, 0);
        assert!(
            (cost - recomputed).abs() < 1e-9,
            "case {case}: {cost} vs {recomputed}"
        );
    }
}

/// XOR of two features, which a greedy tree cannot see: regrowing the incumbent finds it right
/// after the dive, and searches regrowing at every doubling from 8 expansions prove the exact
/// optimum.
#[test]
fn regrowth_finds_what_greedy_trees_miss_and_keeps_the_optimum() {
    let mut rng = crate::search::SplitMix::new(47);
    let (n, f) = (300, 6);
    let x: Vec<u32> = (0..n * f).map(|_| rng.below(2) as u32).collect();
    let y: Vec<u32> = (0..n)
        .map(|r| (x[r * f] ^ x[r * f + 1]) ^ u32::from(rng.below(20) == 0))
        .collect();
    let data = Dataset::new(&x, f, &y, Some(&vec![2; f]), Some(2), None).unwrap();
    let model = fast_model(&data);
    // The dive alone (one expansion: no split of the root beats its leaf), then a regrowth.
    let mut search = Search::new(&data, &model, small::SMALL_ROWS);
    search.next_regrowth = u64::MAX;
    search.run(&Budget::unlimited(), Some(1), None);
    let (greedy, none, dived) = (
        search.bounds().1,
        search.regrown_subtrees,
        search.expansions,
    );
    search.next_regrowth = 1;
    search.improve_incumbent(&Budget::unlimited(), None);
    let (regrown, grafted) = (search.bounds().1, search.regrown_subtrees);
    assert_eq!(none, 0);
    // Grafting stops at an expansion limit.
    assert!(search.expansions > dived + 1, "the graft expands nodes");
    for limit in dived..search.expansions {
        let mut limited = Search::new(&data, &model, small::SMALL_ROWS);
        limited.next_regrowth = u64::MAX;
        limited.run(&Budget::unlimited(), Some(1), None);
        limited.next_regrowth = 1;
        limited.improve_incumbent(&Budget::unlimited(), Some(limit));
        assert!(
            limited.expansions <= limit,
            "{} after {limit}",
            limited.expansions
        );
    }
    assert!(
        grafted > 0 && regrown < greedy - 1.0,
        "{regrown} vs {greedy}"
    );
    let exact = dp(&data, &model, &data.all_rows(), 0, &mut HashMap::new());
    assert!(regrown >= exact - 1e-9);
    let mut search = Search::new(&data, &model, small::SMALL_ROWS);
    search.next_regrowth = 8;
    assert_eq!(
        search.run(&Budget::unlimited(), None, None),
        Status::Optimal
    );
    assert!((search.bounds().1 - exact).abs() < 1e-9);

    // Random data too, two and three classes, with regrowth from the eighth expansion on.
    for case in 0..60 {
        let shape = (1 + rng.below(60), 1 + rng.below(5), 2 + case % 2);
        let (_, _, data) = random_data(&mut rng, shape, 2);
        let model = fast_model(&data);
        let mut search = Search::new(&data, &model, small::SMALL_ROWS);
        search.next_regrowth = 8;
        search.first_splits = 2;
        assert_eq!(
            search.run(&Budget::unlimited(), None, None),
            Status::Optimal
        );
        let exact = dp(&data, &model, &data.all_rows(), 0, &mut HashMap::new());
        assert!((search.bounds().1 - exact).abs() < 1e-9, "case {case}");
        assert_eq!(search.bounds().0, search.bounds().1);
    }
}
