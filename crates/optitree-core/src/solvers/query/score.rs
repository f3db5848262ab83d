//! Per-node greedy scores (lower is better) for every query that splits a node.
//!
//! All λ-rules are computed in a form that is continuous and accurate over all of `[1, ∞]`
//! (spec §3.8): near λ = 1 the exponentiated-Rényi score `C_a` bunches up at 1, so for λ ≤ 1.05 we
//! rank by `(C_a − 1)/(1 − α)` evaluated with `expm1`/`log1p`; above, `C_a` overflows, so we rank
//! by `ln(π_a C_a)` computed in the log domain. Both are increasing functions of `C_a`, so they
//! pick the same query. Masses are normalised to the node (`π_i / π_a`); a node whose mass is zero
//! is scored with the uniform prior over its objects. Child sums are accumulated directly, never
//! as "node total minus the other child", so an empty or tiny child is exact.
//!
//! Invariant: a query that does not split the node (one side empty by count) scores NaN.

use std::ops::Range;

use super::QueryProblem;

/// The per-node rule of a greedy builder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Criterion {
    /// Minimise `max(π_no, π_yes)` (generalized binary search, λ = 1).
    Gbs,
    /// Minimise `‖π_no‖_α + ‖π_yes‖_α` over objects (exponential cost).
    LambdaGbs,
    /// Maximise the information gain about the group (λ = 1).
    Ggbs,
    /// Minimise `‖group masses_no‖_α + ‖group masses_yes‖_α` (exponential cost, groups).
    LambdaGgbs,
    /// Minimise `max(#objects_no, #objects_yes)` (λ = ∞).
    Count,
    /// Minimise `max(#groups_no, #groups_yes)` (λ = ∞, groups).
    GroupCount,
}

impl Criterion {
    /// The rule actually used at cost base `lambda`: the λ-rules become their limits at 1 and ∞.
    pub fn at(self, lambda: f64) -> Criterion {
        match self {
            Criterion::LambdaGbs if lambda == 1.0 => Criterion::Gbs,
            Criterion::LambdaGbs if lambda.is_infinite() => Criterion::Count,
            Criterion::LambdaGgbs if lambda == 1.0 => Criterion::Ggbs,
            Criterion::LambdaGgbs if lambda.is_infinite() => Criterion::GroupCount,
            other => other,
        }
    }

    /// Whether the rule looks at group masses rather than object masses.
    fn uses_groups(self) -> bool {
        matches!(
            self,
            Criterion::Ggbs | Criterion::LambdaGgbs | Criterion::GroupCount
        )
    }
}

/// `α = 1/(1 + log2 λ)` and `1 − α`, computed without cancellation near λ = 1.
pub fn alpha_and_complement(lambda: f64) -> (f64, f64) {
    if lambda.is_infinite() {
        return (0.0, 1.0);
    }
    let t = (lambda - 1.0).ln_1p() / std::f64::consts::LN_2;
    (1.0 / (1.0 + t), t / (1.0 + t))
}

/// Above this cost base the λ-rules rank in the log domain, at or below it by the stable excess.
const LOG_DOMAIN_ABOVE: f64 = 1.05;

/// Relative tolerance within which two scores count as tied.
pub const TIE_TOLERANCE: f64 = 1e-12;

/// Nodes with at least this many (object, query) cells are scored on two threads, each taking
/// half of the queries; every query's sums are accumulated in the same order either way, so the
/// result does not depend on the split.
const PARALLEL_CELLS: usize = 1 << 20;

/// Nodes with at most this many objects score each distinct yes-set once (see
/// [`NodeScorer::small_node_scores`]).
const SMALL_NODE: usize = 10;

/// Scores of every query at the node holding `objects` (NaN for queries that do not split it).
pub fn node_scores(
    problem: &QueryProblem,
    criterion: Criterion,
    lambda: f64,
    objects: &[u32],
) -> Vec<f64> {
    let node = NodeScorer::new(problem, criterion.at(lambda), lambda, objects);
    let n = problem.n_queries();
    if objects.len() * n < PARALLEL_CELLS || n < 2 {
        return node.scores(0..n);
    }
    let mid = n / 2;
    let (mut low, high) = std::thread::scope(|scope| {
        let high = scope.spawn(|| node.scores(mid..n));
        let low = node.scores(0..mid);
        (low, high.join())
    });
    match high {
        Ok(high) => {
            low.extend(high);
            low
        }
        // A panic cannot happen in pure arithmetic; if it did, score the rest here.
        Err(_) => {
            low.extend(node.scores(mid..n));
            low
        }
    }
}

/// The queries whose score is within [`TIE_TOLERANCE`] of the best, in index order.
pub fn tied_best(scores: &[f64]) -> Vec<usize> {
    let Some(best) = scores
        .iter()
        .copied()
        .filter(|s| !s.is_nan())
        .reduce(f64::min)
    else {
        return Vec::new(); // no query splits the node
    };
    let slack = TIE_TOLERANCE * best.abs().max(1.0);
    scores
        .iter()
        .enumerate()
        .filter(|(_, &s)| s <= best + slack || s == best)
        .map(|(q, _)| q)
        .collect()
}

/// What the scoring of one node needs once, whatever range of queries it scores.
struct NodeScorer<'a> {
    problem: &'a QueryProblem,
    criterion: Criterion,
    lambda: f64,
    alpha: f64,
    eps: f64,
    objects: &'a [u32],
    /// Per-object weights summed on each side of every query (object rules), see [`Self::new`].
    weights: Vec<Vec<f64>>,
    /// Node-local group index of every object, and the number of groups present (group rules).
    slot: Vec<usize>,
    n_local: usize,
}

impl<'a> NodeScorer<'a> {
    fn new(
        problem: &'a QueryProblem,
        criterion: Criterion,
        lambda: f64,
        objects: &'a [u32],
    ) -> Self {
        let (alpha, eps) = alpha_and_complement(lambda);
        let q = relative_masses(problem, objects);
        let weights = match criterion {
            Criterion::Gbs => vec![q],
            Criterion::LambdaGbs if lambda > LOG_DOMAIN_ABOVE => {
                vec![q.iter().map(|&x| x.powf(alpha)).collect()]
            }
            Criterion::LambdaGbs => {
                // Stable excess needs P_c = Σ q_i and E_c = Σ q_i·expm1(−ε ln q_i) per side.
                let e = q
                    .iter()
                    .map(|&x| {
                        if x > 0.0 {
                            x * (-eps * x.ln()).exp_m1()
                        } else {
                            0.0
                        }
                    })
                    .collect();
                vec![q, e]
            }
            Criterion::Count => Vec::new(),
            Criterion::Ggbs | Criterion::LambdaGgbs | Criterion::GroupCount => vec![q],
        };
        let (slot, n_local) = if criterion.uses_groups() {
            local_groups(problem, objects)
        } else {
            (Vec::new(), 0)
        };
        NodeScorer {
            problem,
            criterion,
            lambda,
            alpha,
            eps,
            objects,
            weights,
            slot,
            n_local,
        }
    }

    fn scores(&self, range: Range<usize>) -> Vec<f64> {
        if self.objects.len() <= SMALL_NODE {
            self.small_node_scores(range)
        } else if self.criterion.uses_groups() {
            self.group_scores(range)
        } else {
            self.object_scores(range)
        }
    }

    /// Object rules: one pass over the node's rows accumulating, per query, the yes-count and
    /// every weight on each side (directly, never as "total minus the other side").
    fn object_scores(&self, range: Range<usize>) -> Vec<f64> {
        let n = range.len();
        let k = self.weights.len();
        let mut yes_count = vec![0.0f64; n];
        let mut yes = vec![vec![0.0f64; n]; k];
        let mut no = vec![vec![0.0f64; n]; k];
        for (pos, &i) in self.objects.iter().enumerate() {
            let row = &self.problem.row(i as usize)[range.clone()];
            for (c, &a) in yes_count.iter_mut().zip(row) {
                *c += f64::from(a);
            }
            for w in 0..k {
                let wi = self.weights[w][pos];
                if wi == 0.0 {
                    continue;
                }
                // Branch-free so the loop vectorises; `w − w·b` is exact for b ∈ {0, 1}.
                for ((y, o), &a) in yes[w].iter_mut().zip(no[w].iter_mut()).zip(row) {
                    let wb = wi * f64::from(a);
                    *y += wb;
                    *o += wi - wb;
                }
            }
        }
        let total = self.objects.len() as f64;
        (0..n)
            .map(|j| {
                let side = |sums: &[Vec<f64>]| {
                    [
                        sums.first().map_or(0.0, |v| v[j]),
                        sums.get(1).map_or(0.0, |v| v[j]),
                    ]
                };
                self.finish_object(yes_count[j], total, side(&no), side(&yes))
            })
            .collect()
    }

    /// The object-rule score of one partition from its yes-count and per-side weight sums.
    fn finish_object(&self, ny: f64, total: f64, no: [f64; 2], yes: [f64; 2]) -> f64 {
        if ny == 0.0 || ny == total {
            return f64::NAN;
        }
        match self.criterion {
            Criterion::Count => ny.max(total - ny),
            Criterion::Gbs => no[0].max(yes[0]),
            Criterion::LambdaGbs if self.lambda > LOG_DOMAIN_ABOVE => {
                // ln(π_a C_a) = ln(s_no^(1/α) + s_yes^(1/α)), s_c = Σ_{i∈c} q_i^α.
                log_add_exp(no[0].ln() / self.alpha, yes[0].ln() / self.alpha)
            }
            _ => {
                excess_from_sums(no[0], no[1], self.alpha, self.eps)
                    + excess_from_sums(yes[0], yes[1], self.alpha, self.eps)
            }
        }
    }

    /// Group rules: per query and side, the mass (or count) of every group present.
    fn group_scores(&self, range: Range<usize>) -> Vec<f64> {
        let (n, m) = (range.len(), self.n_local);
        let mut yes_count = vec![0u32; n * m];
        let mut all = vec![0u32; m];
        let (mut no, mut yes) = (vec![0.0; n * m], vec![0.0; n * m]);
        for ((&i, &g), &wi) in self.objects.iter().zip(&self.slot).zip(&self.weights[0]) {
            all[g] += 1;
            let row = &self.problem.row(i as usize)[range.clone()];
            for (j, &a) in row.iter().enumerate() {
                let wb = wi * f64::from(a);
                yes_count[j * m + g] += u32::from(a);
                yes[j * m + g] += wb;
                no[j * m + g] += wi - wb;
            }
        }
        (0..n)
            .map(|j| {
                let cells = j * m..(j + 1) * m;
                self.finish_group(
                    &yes_count[cells.clone()],
                    &all,
                    &no[cells.clone()],
                    &yes[cells],
                )
            })
            .collect()
    }

    /// The group-rule score of one partition from per-group yes-counts, group sizes and
    /// per-side group masses.
    fn finish_group(&self, counts: &[u32], all: &[u32], no: &[f64], yes: &[f64]) -> f64 {
        let ny: u32 = counts.iter().sum();
        if ny == 0 || ny == all.iter().sum::<u32>() {
            return f64::NAN;
        }
        let in_logs = self.criterion == Criterion::LambdaGgbs && self.lambda > LOG_DOMAIN_ABOVE;
        let side_term = |cell: &[f64]| match self.criterion {
            Criterion::Ggbs => weighted_entropy(cell),
            _ if in_logs => log_quasi_norm(cell, self.alpha),
            _ => group_excess(cell, self.alpha, self.eps),
        };
        match self.criterion {
            Criterion::GroupCount => {
                let n_yes = counts.iter().filter(|&&c| c > 0).count();
                let n_no = counts.iter().zip(all).filter(|(&c, &a)| a > c).count();
                n_yes.max(n_no) as f64
            }
            _ if in_logs => log_add_exp(side_term(no), side_term(yes)),
            _ => side_term(no) + side_term(yes),
        }
    }

    /// Small nodes: a query's score depends only on which objects answer yes, and a node of
    /// `n` objects has at most `2^n` such sets, so each distinct set is scored once. This keeps
    /// the many tiny nodes near the leaves from paying a full score per query.
    fn small_node_scores(&self, range: Range<usize>) -> Vec<f64> {
        let mut masks = vec![0u32; range.len()];
        for (pos, &i) in self.objects.iter().enumerate() {
            let row = &self.problem.row(i as usize)[range.clone()];
            for (mask, &a) in masks.iter_mut().zip(row) {
                *mask |= u32::from(a) << pos;
            }
        }
        let mut memo = vec![None; 1usize << self.objects.len()];
        masks
            .iter()
            .map(|&mask| *memo[mask as usize].get_or_insert_with(|| self.partition_score(mask)))
            .collect()
    }

    /// The score of the partition whose yes-side is the objects at the set bits of `mask`.
    fn partition_score(&self, mask: u32) -> f64 {
        let is_yes = |pos: usize| (mask >> pos) & 1 == 1;
        if !self.criterion.uses_groups() {
            let (mut no, mut yes) = ([0.0; 2], [0.0; 2]);
            for pos in 0..self.objects.len() {
                let side = if is_yes(pos) { &mut yes } else { &mut no };
                for (k, w) in self.weights.iter().enumerate() {
                    side[k] += w[pos];
                }
            }
            let total = self.objects.len() as f64;
            return self.finish_object(f64::from(mask.count_ones()), total, no, yes);
        }
        let m = self.n_local;
        let (mut counts, mut all) = (vec![0u32; m], vec![0u32; m]);
        let (mut no, mut yes) = (vec![0.0; m], vec![0.0; m]);
        for (pos, &g) in self.slot.iter().enumerate() {
            all[g] += 1;
            let w = self.weights[0][pos];
            if is_yes(pos) {
                counts[g] += 1;
                yes[g] += w;
            } else {
                no[g] += w;
            }
        }
        self.finish_group(&counts, &all, &no, &yes)
    }
}

/// Node-local index of each object's group (in order of first appearance) and their number.
fn local_groups(problem: &QueryProblem, objects: &[u32]) -> (Vec<usize>, usize) {
    let mut local = vec![usize::MAX; problem.n_groups()];
    let mut n_local = 0usize;
    let slot = objects
        .iter()
        .map(|&i| {
            let g = problem.group(i as usize) as usize;
            if local[g] == usize::MAX {
                local[g] = n_local;
                n_local += 1;
            }
            local[g]
        })
        .collect();
    (slot, n_local)
}

/// Each object's mass relative to the node; the uniform prior if the node has no mass.
fn relative_masses(problem: &QueryProblem, objects: &[u32]) -> Vec<f64> {
    let mass: f64 = objects.iter().map(|&i| problem.prior()[i as usize]).sum();
    if mass > 0.0 {
        objects
            .iter()
            .map(|&i| problem.prior()[i as usize] / mass)
            .collect()
    } else {
        vec![1.0 / objects.len() as f64; objects.len()]
    }
}

/// One child's term `P_c (D_c − 1) / ε` of the stable λ-GBS score.
fn excess_from_sums(p: f64, e: f64, alpha: f64, eps: f64) -> f64 {
    if p <= 0.0 {
        return 0.0;
    }
    let b = eps * p.ln();
    let u = (e / p) * b.exp() + b.exp_m1();
    p * diversity_minus_one(u.max(0.0), alpha) / eps
}

/// `D − 1` from `u = Σ p^α − 1`: `D = (1 + u)^(1/α)`.
fn diversity_minus_one(u: f64, alpha: f64) -> f64 {
    (u.ln_1p() / alpha).exp_m1()
}

/// `ln(e^a + e^b)` without overflow; `−∞` terms vanish.
pub fn log_add_exp(a: f64, b: f64) -> f64 {
    let (hi, lo) = if a >= b { (a, b) } else { (b, a) };
    if hi == f64::NEG_INFINITY {
        return hi;
    }
    hi + (lo - hi).exp().ln_1p()
}

/// `m_c · H(groups in c)` in nats, from the child's group masses (relative to the node).
fn weighted_entropy(cell: &[f64]) -> f64 {
    let m: f64 = cell.iter().sum();
    if m <= 0.0 {
        return 0.0;
    }
    -cell
        .iter()
        .filter(|&&x| x > 0.0)
        .map(|&x| x * (x / m).ln())
        .sum::<f64>()
}

/// `ln ‖cell‖_α = (1/α) ln Σ x^α`. The masses are relative to the node (`x ≤ 1`), so `x^α ≤ 1`
/// and the sum cannot overflow however small α is; only `(Σ x^α)^(1/α)` could, hence the log.
fn log_quasi_norm(cell: &[f64], alpha: f64) -> f64 {
    let sum: f64 = cell
        .iter()
        .filter(|&&x| x > 0.0)
        .map(|&x| x.powf(alpha))
        .sum();
    sum.ln() / alpha
}

/// `m_c (D_c − 1)/ε` from the child's group masses, with `D_c` the child's α-diversity.
fn group_excess(cell: &[f64], alpha: f64, eps: f64) -> f64 {
    let m: f64 = cell.iter().sum();
    if m <= 0.0 {
        return 0.0;
    }
    let u: f64 = cell
        .iter()
        .filter(|&&x| x > 0.0)
        .map(|&x| {
            let p = x / m;
            p * (-eps * p.ln()).exp_m1()
        })
        .sum();
    m * diversity_minus_one(u, alpha) / eps
}
