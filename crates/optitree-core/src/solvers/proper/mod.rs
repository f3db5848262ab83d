//! Proper decision trees with arbitrary splitting rules (He & Little): the best tree made of
//! exactly K, or at most K, rules from a finite data-defined candidate list, where a rule may only
//! sit in a region that holds its defining points.
//!
//! - [`rules`]: candidate generators (axis, hyperplane, polynomial, mixed) and their tests;
//! - [`problem`]: the leaf objective, the constraints and the ancestry relation;
//! - [`combos`]: the paper's engine, `sodt` over every K-combination (exact K, or every k ≤ K);
//! - [`topdown`]: the memoised (rows, k, h) engine of spec §3.11 (at most K; the default);
//! - [`generic`]: the recursion with a pluggable `splits` (decision trees, matrix chains).
//!
//! Both engines are exact relative to the candidate list and agree on the optimum for "at most
//! K" (the tests check it on thousands of instances, against a brute-force oracle too).

pub mod combos;
pub mod generic;
mod linalg;
pub mod problem;
pub mod rules;
pub mod topdown;
mod words;

#[cfg(test)]
mod tests;

use crate::error::Result;
use crate::param_err;
use crate::search::{Budget, Outcome, ProgressBoard, Stats, Status};
use crate::tree::{NodeSpec, Tree, TreeSpec};

pub use problem::{Objective, Problem};
pub use rules::{Family, Points, RuleSet, RuleSpec, RuleTest, Sides};

/// A tree's structure over rule ids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleTree {
    /// A leaf.
    Leaf,
    /// `rule`'s left side (`plus`) goes to `left`.
    Node {
        rule: usize,
        left: Box<RuleTree>,
        right: Box<RuleTree>,
    },
}

impl RuleTree {
    /// Number of splits.
    pub fn n_splits(&self) -> usize {
        match self {
            RuleTree::Leaf => 0,
            RuleTree::Node { left, right, .. } => 1 + left.n_splits() + right.n_splits(),
        }
    }
}

/// Which engine runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineChoice {
    /// Top-down for "at most K", combinations for "exactly K".
    Auto,
    /// The paper's enumeration of K-combinations.
    Combinations,
    /// The memoised top-down recursion (at most K only).
    TopDown,
}

/// Parameters of a solve.
#[derive(Debug, Clone)]
pub struct ProperConfig {
    /// Number of splits K (≥ 1).
    pub n_splits: usize,
    /// The candidate rules.
    pub rules: RuleSpec,
    /// Exactly K splits (`true`) or the best with at most K.
    pub exactly: bool,
    /// The leaf loss.
    pub objective: Objective,
    /// Most levels of splits on any path (a single split has depth 1).
    pub max_depth: Option<u32>,
    /// Smallest allowed leaf (0 also allows empty leaves).
    pub min_samples_leaf: u64,
    /// Worker threads.
    pub n_jobs: usize,
    /// The engine.
    pub engine: EngineChoice,
    /// Refuse work estimated to take longer than this many seconds (`None`: never refuse).
    pub refuse_above_seconds: Option<f64>,
}

/// The result of a solve.
#[derive(Debug, Clone)]
pub struct ProperSolution {
    /// The tree (threshold and oblique nodes; class counts in every node). A single leaf when no
    /// proper tree satisfies the constraints.
    pub tree: Tree,
    /// Its objective on the training rows.
    pub cost: f64,
    /// Whether any proper tree satisfies the constraints.
    pub feasible: bool,
    /// The tree's rules in left-first level order (its canonical permutation).
    pub level_order: Vec<usize>,
}

/// The work a configuration implies, estimated before any rule is generated.
#[derive(Debug, Clone, Copy)]
pub struct WorkEstimate {
    /// Candidate rules (before duplicates are removed).
    pub rules: f64,
    /// Bytes the rule list needs.
    pub rule_bytes: f64,
    /// Elementary steps of the search in the worst case (no pruning).
    pub steps: f64,
    /// `steps` as seconds on this machine's thread count (about 1 ns a step).
    pub seconds: f64,
}

/// Rule lists larger than this are refused whatever the time limit (memory).
const MAX_RULE_BYTES: f64 = 6.0 * (1u64 << 30) as f64;

/// Estimates the rules and the worst-case search steps of `config` on `n` rows and `d` features.
pub fn estimate(n: usize, d: usize, n_classes: usize, config: &ProperConfig) -> WorkEstimate {
    let mut rules = rules::count(n, d, config.rules);
    if config.n_splits == 1 || config.max_depth == Some(1) {
        // One rule per partition is kept (Cover's count of separable partitions bounds them).
        rules = rules.min(rules::partition_count(n, d, config.rules));
    }
    let words = n.div_ceil(64) as f64;
    let def = match config.rules.family {
        Family::Axis => 1.0,
        Family::Hyperplane => d as f64,
        _ => rules::surface_points(d, config.rules.degree.max(1)) as f64,
    };
    let rule_bytes = rules * (words * 8.0 + def * 4.0 + 40.0);
    let k = config.n_splits as f64;
    let steps = match engine_for(config) {
        EngineChoice::Combinations => {
            // C(M, K) combinations of about 3^K sodt calls of W·C word operations each.
            let m = rules;
            let combos =
                (0..config.n_splits).fold(1.0, |a, i| a * (m - i as f64) / (i as f64 + 1.0));
            combos.max(1.0) * 3f64.powf(k) * (words * n_classes as f64 + k)
        }
        _ => {
            // T(k, h): each candidate root solves its sides with k − 1 splits.
            let m = rules;
            let axis = config.rules.family == Family::Axis;
            let one = if axis {
                (n * d) as f64
            } else {
                m * words * n_classes as f64
            };
            let levels = match config.max_depth {
                Some(h) => (h as f64).min(k),
                None => k,
            };
            one * (2.0 * m).powf(levels - 1.0)
        }
    };
    let threads = config.n_jobs.max(1) as f64;
    WorkEstimate {
        rules,
        rule_bytes,
        steps,
        seconds: steps * 1e-9 / threads,
    }
}

fn engine_for(config: &ProperConfig) -> EngineChoice {
    match config.engine {
        EngineChoice::Auto if config.exactly => EngineChoice::Combinations,
        EngineChoice::Auto => EngineChoice::TopDown,
        e => e,
    }
}

fn check_config(
    points: &Points,
    n_classes: usize,
    labels: &[u32],
    config: &ProperConfig,
) -> Result<()> {
    if config.n_splits == 0 {
        return param_err!("n_splits=0: a proper tree needs at least 1 split");
    }
    if labels.len() != points.n_rows() {
        return param_err!(
            "{} labels for {} rows: give one label per row",
            labels.len(),
            points.n_rows()
        );
    }
    if let Some(i) = labels.iter().position(|&c| c as usize >= n_classes) {
        return param_err!(
            "label {} of row {i} is not below n_classes={n_classes}",
            labels[i]
        );
    }
    if n_classes > 255 {
        return param_err!("{n_classes} classes: proper trees take at most 255");
    }
    let engine = engine_for(config);
    if engine == EngineChoice::TopDown && config.exactly {
        return param_err!(
            "engine='topdown' finds the best tree with at most n_splits splits; use \
             engine='combinations' (or 'auto') for exactly={}",
            config.exactly
        );
    }
    if engine == EngineChoice::Combinations && config.n_splits > combos::MAX_SPLITS {
        return param_err!(
            "n_splits={} with the combination engine: at most {}",
            config.n_splits,
            combos::MAX_SPLITS
        );
    }
    if config.rules.family == Family::Polynomial && config.rules.degree < 2 {
        return param_err!(
            "degree={} with rule='polynomial': use 2 or more (degree 1 is rule='hyperplane')",
            config.rules.degree
        );
    }
    let g = match config.rules.family {
        Family::Axis => 1,
        Family::Hyperplane => points.n_features(),
        _ => rules::surface_points(points.n_features(), config.rules.degree),
    };
    if g > 31 && config.rules.family == Family::Hyperplane {
        return param_err!(
            "hyperplanes over {} features pass through {g} rows each; at most 31 are supported: \
             use fewer features or axis rules",
            points.n_features()
        );
    }
    if g > 31 && config.rules.family != Family::Axis {
        return param_err!(
            "degree-{} surfaces over {} features pass through {g} rows each; at most 31 are \
             supported: use fewer features, a lower degree or axis rules",
            config.rules.degree,
            points.n_features()
        );
    }
    if config.exactly && !counting_allows(points.n_rows(), config) {
        return Ok(()); // infeasible by counting: answered at once, nothing to refuse
    }
    let est = estimate(points.n_rows(), points.n_features(), n_classes, config);
    if est.rule_bytes > MAX_RULE_BYTES {
        return param_err!(
            "{:.3e} candidate rules would need about {}: use fewer rows (a sample), fewer \
             features, axis rules, or side_assignment='closed'",
            est.rules,
            human_bytes(est.rule_bytes)
        );
    }
    if let Some(limit) = config.refuse_above_seconds {
        if est.seconds > limit {
            return param_err!(
                "this search looks hopeless: {:.3e} candidate rules and about {:.1e} steps in the \
                 worst case (roughly {} on {} thread(s)). Use fewer splits (n_splits), a sample \
                 of the rows, max_depth, or axis rules — or pass time_limit to run it anyway and \
                 get the best tree found in that time (memory_limit bounds memory, not time)",
                est.rules,
                est.steps,
                human_seconds(est.seconds),
                config.n_jobs.max(1)
            );
        }
    }
    Ok(())
}

/// `91.1 GB`, or `2.5e9 GB` past what a fixed-point figure reads well.
fn human_bytes(bytes: f64) -> String {
    let gb = bytes / 1e9;
    if gb < 1e5 {
        format!("{gb:.1} GB")
    } else {
        format!("{gb:.1e} GB")
    }
}

fn human_seconds(s: f64) -> String {
    if s < 120.0 {
        format!("{s:.0} s")
    } else if s < 7200.0 {
        format!("{:.0} min", s / 60.0)
    } else if s < 172_800.0 {
        format!("{:.0} h", s / 3600.0)
    } else {
        format!("{:.0} days", s / 86400.0)
    }
}

/// Whether exactly `n_splits` splits can fit at all: within `max_depth` levels (at most
/// `2^depth − 1` splits), and with `n_splits + 1` leaves of `min_samples_leaf` rows each.
fn counting_allows(n_rows: usize, config: &ProperConfig) -> bool {
    let k = config.n_splits as u128;
    let depth_ok = match config.max_depth {
        Some(d) if d < 64 => k < (1u128 << d),
        _ => true,
    };
    depth_ok && (k + 1) * u128::from(config.min_samples_leaf) <= n_rows as u128
}

/// Finds the best proper tree. Labels are class codes in `0..n_classes`.
pub fn solve(
    points: &Points,
    labels: &[u32],
    n_classes: usize,
    config: &ProperConfig,
    budget: &Budget,
    board: Option<&ProgressBoard>,
) -> Result<Outcome<ProperSolution>> {
    check_config(points, n_classes, labels, config)?;
    if config.exactly && !counting_allows(points.n_rows(), config) {
        let empty = RuleSet::from_parts(points.n_rows(), &[]);
        let problem = Problem::new(&empty, labels, n_classes, config.objective, 0);
        return infeasible(points, &problem, Status::Optimal, Stats::new(), budget);
    }
    // One split: a rule counts only through its partition, so keep one rule per partition.
    let one_split = config.n_splits == 1 || config.max_depth == Some(1);
    let mut rule_set = rules::generate_reporting(points, config.rules, one_split, budget, board)?;
    // A generation the budget stopped skips the duplicate pass (it copies every rule).
    let stopped = budget.check(0, rule_set.heap_bytes());
    if stopped.is_none() && !(config.exactly && config.min_samples_leaf == 0) {
        rules::remove_duplicates(&mut rule_set);
    }
    let before_thinning = rule_set.len();
    if let Some(status) = stopped.or_else(|| budget.check(0, rule_set.heap_bytes())) {
        // Stopped while generating: no search ran. A tree grown greedily from the rules made so
        // far, each used where its defining rows lie, is a proper tree, so it comes back in a
        // short scan rather than a leaf (exactly K splits when `exactly` and the rules allow).
        let min_leaf = config.min_samples_leaf;
        let problem = Problem::new(&rule_set, labels, n_classes, config.objective, min_leaf);
        let mut stats = Stats::new();
        stats.set_count("candidate_rules", rule_set.len() as u64);
        stats.set_count("duplicate_rules", rule_set.duplicates);
        stats.set_count("rank_deficient_subsets", rule_set.rank_deficient);
        stats.set_count("memory_bytes", rule_set.heap_bytes() as u64);
        let (tree, scanned) = greedy_tree(&problem, config, GREEDY_SCAN_WORDS);
        stats.set_count("greedy_rules_scanned", scanned);
        let root_leaf = problem.leaf_cost(&words::full(points.n_rows()));
        if tree == RuleTree::Leaf && root_leaf.is_infinite() {
            return infeasible(points, &problem, status, stats, budget);
        }
        return finish(points, &problem, tree, status, stats, budget);
    }
    // Thinning: a rule that leaves fewer than `min_samples_leaf` rows on a side can never be used.
    let min_leaf = config.min_samples_leaf;
    if min_leaf > 0 {
        let n = points.n_rows() as u64;
        rule_set.retain(|s, r| {
            let left = words::popcount(s.plus(r));
            left >= min_leaf && n - left >= min_leaf
        });
    }
    let mut stats = Stats::new();
    stats.set_count("candidate_rules", rule_set.len() as u64);
    stats.set_count("rules_thinned", (before_thinning - rule_set.len()) as u64);
    stats.set_count("duplicate_rules", rule_set.duplicates);
    stats.set_count("rank_deficient_subsets", rule_set.rank_deficient);
    let problem = Problem::new(&rule_set, labels, n_classes, config.objective, min_leaf);
    let depth = config.max_depth.unwrap_or(u32::MAX);
    let (tree, status) = match engine_for(config) {
        EngineChoice::Combinations => {
            let cfg = combos::CombosConfig {
                n_splits: config.n_splits,
                exactly: config.exactly,
                depth,
                n_jobs: config.n_jobs,
            };
            stats.set_count(
                "combinations_total",
                combos::total_combinations(rule_set.len(), &cfg).min(u128::from(u64::MAX)) as u64,
            );
            let res = combos::odt(&problem, &cfg, budget, board);
            stats.set_count("combinations", res.combinations);
            stats.set_count("combinations_pruned", res.pruned);
            stats.set_count("sodt_calls", res.sodt_calls);
            let tree = match &res.best {
                Some((_, combo)) => {
                    let mut s = combos::Sodt::new(&problem, combo.len());
                    s.tree(combo, depth).map(|(_, t)| t)
                }
                None => None,
            };
            (tree, res.status.unwrap_or(Status::Optimal))
        }
        _ => {
            let cands = topdown::Candidates::new(&problem, points, one_split);
            let h = config.max_depth.map_or(usize::MAX, |d| d as usize);
            let res = topdown::solve(
                &problem,
                &cands,
                config.n_splits,
                h,
                config.n_jobs,
                budget,
                board,
            );
            stats.set_count("candidates", res.candidates);
            stats.set_count("subproblems", res.subproblems);
            stats.set_count("splits_evaluated", res.splits);
            // What the memory limit counts: the memo and the rules.
            stats.set_count("memory_bytes", (res.memory + rule_set.heap_bytes()) as u64);
            let feasible = problem.leaf_cost(&words::full(points.n_rows())).is_finite();
            (feasible.then_some(res.tree), res.status)
        }
    };
    // A search the budget stopped may hold less than the greedy tree: the limit can pass while
    // the candidates are prepared, before the search has tried a split (wine, 110 rows,
    // hyperplanes: a leaf at 1.2 s where a stopped generation gave a 3-split tree at 0.8 s).
    let tree = if status == Status::Optimal {
        tree
    } else {
        or_greedy(&problem, config, tree, &mut stats)
    };
    match tree {
        Some(t) => finish(points, &problem, t, status, stats, budget),
        None => infeasible(points, &problem, status, stats, budget),
    }
}

/// The stopped search's `tree`, or the greedy tree where it costs less (see [`greedy_tree`];
/// under `exactly` only a greedy tree of that many splits).
fn or_greedy(
    problem: &Problem<'_>,
    config: &ProperConfig,
    tree: Option<RuleTree>,
    stats: &mut Stats,
) -> Option<RuleTree> {
    let (greedy, scanned) = greedy_tree(problem, config, GREEDY_SCAN_WORDS);
    stats.set_count("greedy_rules_scanned", scanned);
    let all = words::full(problem.rules.n_rows());
    let usable = !(config.exactly && greedy == RuleTree::Leaf);
    let searched = tree
        .as_ref()
        .map_or(f64::INFINITY, |t| tree_cost(problem, t, &all));
    let better = usable && tree_cost(problem, &greedy, &all) < searched;
    stats.set_count("greedy_tree_returned", u64::from(better));
    if better {
        Some(greedy)
    } else {
        tree
    }
}

/// The cost of `tree` on the rows of `mask` (infinite where a leaf is too small).
fn tree_cost(problem: &Problem<'_>, tree: &RuleTree, mask: &[u64]) -> f64 {
    match tree {
        RuleTree::Leaf => problem.leaf_cost(mask),
        RuleTree::Node { rule, left, right } => {
            let side = problem.rules.plus(*rule);
            let mut low = vec![0u64; mask.len()];
            let mut high = vec![0u64; mask.len()];
            words::and_into(mask, side, &mut low);
            words::and_not_into(mask, side, &mut high);
            tree_cost(problem, left, &low) + tree_cost(problem, right, &high)
        }
    }
}

/// Word operations the greedy tree of a stopped solve may take (tens of milliseconds: it runs
/// after the time limit has passed).
const GREEDY_SCAN_WORDS: usize = 1 << 25;

/// A tree grown greedily over the problem's rules, one split at a time, within `max_words`
/// words of row-set work, and the number of (leaf, rule) pairs it scanned. Each step takes the
/// split that lowers the cost most among the unused rules whose defining rows lie in the leaf
/// (so the tree is proper) at a depth below the config's `max_depth`; it stops at `n_splits` splits, or
/// when no split lowers the cost (ties go to fewer splits), unless `exactly`, which takes the
/// least costly feasible split each time. If `exactly` finds fewer than `n_splits`, the leaf
/// comes back (no tree of that size was found).
fn greedy_tree(problem: &Problem<'_>, config: &ProperConfig, max_words: usize) -> (RuleTree, u64) {
    struct Grown {
        rows: Vec<u64>,
        depth: u32,
        split: Option<(usize, usize, usize)>, // (rule, left node, right node)
    }
    let rules = problem.rules;
    let (k, exactly) = (config.n_splits, config.exactly);
    let max_depth = config.max_depth.unwrap_or(u32::MAX);
    let per_rule = (problem.n_words() * (problem.n_classes() + 1)).max(1);
    // Each step scans every leaf (at most k + 1) against a prefix of the rules.
    let scan = rules.len().min(max_words / (per_rule * k.max(1) * (k + 1)));
    let mut nodes = vec![Grown {
        rows: words::full(rules.n_rows()),
        depth: 0,
        split: None,
    }];
    let mut used = vec![false; scan];
    let (mut left, mut right) = (
        vec![0u64; problem.n_classes()],
        vec![0u64; problem.n_classes()],
    );
    let mut totals = left.clone();
    let mut side = vec![0u64; problem.n_words()];
    let mut scanned = 0u64;
    for _ in 0..k {
        let mut best: Option<(f64, usize, usize)> = None; // (cost change, node, rule)
        for (id, node) in nodes.iter().enumerate() {
            if node.split.is_some() || node.depth >= max_depth {
                continue;
            }
            problem.counts(&node.rows, &mut totals);
            let before = problem.leaf_from_counts(&totals);
            for r in (0..scan).filter(|&r| !used[r] && rules.available(r, &node.rows)) {
                scanned += 1;
                words::and_into(&node.rows, rules.plus(r), &mut side);
                problem.counts(&side, &mut left);
                for ((rc, &t), &l) in right.iter_mut().zip(&totals).zip(&left) {
                    *rc = t - l;
                }
                let change =
                    problem.leaf_from_counts(&left) + problem.leaf_from_counts(&right) - before;
                let better = best.is_none_or(|(c, ..)| change < c);
                if change.is_finite() && (exactly || change < 0.0) && better {
                    best = Some((change, id, r));
                }
            }
        }
        let Some((_, id, r)) = best else { break };
        used[r] = true;
        let (depth, n) = (nodes[id].depth + 1, nodes.len());
        let mut plus = vec![0u64; problem.n_words()];
        let mut minus = vec![0u64; problem.n_words()];
        words::and_into(&nodes[id].rows, rules.plus(r), &mut plus);
        words::and_not_into(&nodes[id].rows, rules.plus(r), &mut minus);
        nodes[id].split = Some((r, n, n + 1));
        for rows in [plus, minus] {
            nodes.push(Grown {
                rows,
                depth,
                split: None,
            });
        }
    }
    fn build(nodes: &[Grown], id: usize) -> RuleTree {
        match nodes[id].split {
            None => RuleTree::Leaf,
            Some((rule, l, r)) => RuleTree::Node {
                rule,
                left: Box::new(build(nodes, l)),
                right: Box::new(build(nodes, r)),
            },
        }
    }
    let tree = build(&nodes, 0);
    if exactly && tree.n_splits() < k {
        return (RuleTree::Leaf, scanned);
    }
    (tree, scanned)
}

/// The outcome for a found tree: re-routes the rows, builds the tree and checks its cost.
fn finish(
    points: &Points,
    problem: &Problem<'_>,
    tree: RuleTree,
    status: Status,
    mut stats: Stats,
    budget: &Budget,
) -> Result<Outcome<ProperSolution>> {
    let all = words::full(points.n_rows());
    let mut cost = 0.0;
    let root = node_spec(points, problem, &tree, &all, &mut cost)?;
    let level_order = combos::level_order(&tree);
    let built = TreeSpec {
        root,
        n_features: points.n_features(),
        n_classes: problem.n_classes(),
    }
    .build()?;
    stats.set_real("seconds", budget.elapsed());
    Ok(Outcome {
        solution: ProperSolution {
            tree: built,
            cost,
            feasible: true,
            level_order,
        },
        status,
        lower_bound: if status == Status::Optimal { cost } else { 0.0 },
        upper_bound: cost,
        stats,
    })
}

fn infeasible(
    points: &Points,
    problem: &Problem<'_>,
    status: Status,
    mut stats: Stats,
    budget: &Budget,
) -> Result<Outcome<ProperSolution>> {
    let all = words::full(points.n_rows());
    let mut counts = vec![0u64; problem.n_classes()];
    problem.counts(&all, &mut counts);
    let tree = TreeSpec {
        root: NodeSpec::Leaf {
            value: counts.iter().map(|&c| c as f64).collect(),
        },
        n_features: points.n_features(),
        n_classes: problem.n_classes(),
    }
    .build()?;
    stats.set_real("seconds", budget.elapsed());
    Ok(Outcome {
        solution: ProperSolution {
            tree,
            cost: f64::INFINITY,
            feasible: false,
            level_order: Vec::new(),
        },
        status,
        lower_bound: f64::INFINITY,
        upper_bound: f64::INFINITY,
        stats,
    })
}

/// The node for `tree` on the rows `mask`, adding its leaves' costs to `cost`.
fn node_spec(
    points: &Points,
    problem: &Problem<'_>,
    tree: &RuleTree,
    mask: &[u64],
    cost: &mut f64,
) -> Result<NodeSpec> {
    let mut counts = vec![0u64; problem.n_classes()];
    problem.counts(mask, &mut counts);
    let value: Vec<f64> = counts.iter().map(|&c| c as f64).collect();
    match tree {
        RuleTree::Leaf => {
            *cost += problem.objective.leaf(&counts);
            Ok(NodeSpec::Leaf { value })
        }
        RuleTree::Node { rule, left, right } => {
            let side = problem.rules.plus(*rule);
            let mut l = vec![0u64; mask.len()];
            let mut r = vec![0u64; mask.len()];
            words::and_into(mask, side, &mut l);
            words::and_not_into(mask, side, &mut r);
            let low = Box::new(node_spec(points, problem, left, &l, cost)?);
            let high = Box::new(node_spec(points, problem, right, &r, cost)?);
            Ok(match problem.rules.test(points, *rule)? {
                RuleTest::Axis { feature, threshold } => NodeSpec::Threshold {
                    feature,
                    threshold,
                    value,
                    low,
                    high,
                },
                RuleTest::Oblique(test) => NodeSpec::Oblique {
                    test,
                    value,
                    low,
                    high,
                },
            })
        }
    }
}
