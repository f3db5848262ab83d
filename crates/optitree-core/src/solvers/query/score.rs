//! Per-node greedy scores (lower is better) for every query that splits a node.
//!
//! All λ-rules are computed in a form that is continuous and accurate over all of `[1, ∞]`
//! (spec §3.8): near λ = 1 the exponentiated-Rényi score `C_a` bunches up at 1, so for λ ≤ 2 we
//! rank by `(C_a − 1)/(1 − α)` evaluated with `expm1`/`log1p`; above, `C_a` overflows, so we rank
//! by `ln(π_a C_a)` computed in the log domain. Both are increasing functions of `C_a`, so they
//! pick the same query. Masses are normalised to the node (`π_i / π_a`); a node whose mass is zero
//! is scored with the uniform prior over its objects. Child sums are accumulated directly, never
//! as "node total minus the other child", so an empty or tiny child is exact.
//!
//! Invariant: a query that does not split the node (one side empty by count) scores NaN.

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
const LOG_DOMAIN_ABOVE: f64 = 2.0;

/// Relative tolerance within which two scores count as tied.
pub const TIE_TOLERANCE: f64 = 1e-12;

/// Scores of every query at the node holding `objects` (NaN for queries that do not split it).
pub fn node_scores(
    problem: &QueryProblem,
    criterion: Criterion,
    lambda: f64,
    objects: &[u32],
) -> Vec<f64> {
    let criterion = criterion.at(lambda);
    let n_queries = problem.n_queries();
    let yes_count = yes_counts(problem, objects);
    let total = objects.len() as u32;
    let mut scores = if criterion.uses_groups() {
        group_scores(problem, criterion, lambda, objects)
    } else {
        object_scores(problem, criterion, lambda, objects, &yes_count)
    };
    for q in 0..n_queries {
        if yes_count[q] == 0 || yes_count[q] == total {
            scores[q] = f64::NAN;
        }
    }
    scores
}

/// The queries whose score is within [`TIE_TOLERANCE`] of the best, in index order.
pub fn tied_best(scores: &[f64]) -> Vec<usize> {
    let best = scores
        .iter()
        .copied()
        .filter(|s| !s.is_nan())
        .fold(f64::INFINITY, f64::min);
    if best == f64::INFINITY && !scores.contains(&f64::INFINITY) {
        return Vec::new();
    }
    let slack = TIE_TOLERANCE * best.abs().max(1.0);
    scores
        .iter()
        .enumerate()
        .filter(|(_, &s)| s <= best + slack || s == best)
        .map(|(q, _)| q)
        .collect()
}

/// How many objects of the node answer yes to each query.
fn yes_counts(problem: &QueryProblem, objects: &[u32]) -> Vec<u32> {
    let mut counts = vec![0u32; problem.n_queries()];
    for &i in objects {
        for (c, &a) in counts.iter_mut().zip(problem.row(i as usize)) {
            *c += u32::from(a);
        }
    }
    counts
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

/// Per query, the sums of `weight` over the node's no-objects and yes-objects.
fn side_sums(problem: &QueryProblem, objects: &[u32], weight: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let n = problem.n_queries();
    let (mut no, mut yes) = (vec![0.0; n], vec![0.0; n]);
    for (&i, &w) in objects.iter().zip(weight) {
        if w == 0.0 {
            continue;
        }
        let row = problem.row(i as usize);
        for q in 0..n {
            // Branch-free so the loop vectorises; `w − w·b` is exact for b ∈ {0, 1}.
            let wb = w * f64::from(row[q]);
            yes[q] += wb;
            no[q] += w - wb;
        }
    }
    (no, yes)
}

fn object_scores(
    problem: &QueryProblem,
    criterion: Criterion,
    lambda: f64,
    objects: &[u32],
    yes_count: &[u32],
) -> Vec<f64> {
    let total = objects.len() as u32;
    if criterion == Criterion::Count {
        return yes_count
            .iter()
            .map(|&y| f64::from(y.max(total - y)))
            .collect();
    }
    let q = relative_masses(problem, objects);
    if criterion == Criterion::Gbs {
        let (no, yes) = side_sums(problem, objects, &q);
        return no.iter().zip(&yes).map(|(a, b)| a.max(*b)).collect();
    }
    let (alpha, eps) = alpha_and_complement(lambda);
    if lambda > LOG_DOMAIN_ABOVE {
        // ln(π_a C_a) = ln(s_no^(1/α) + s_yes^(1/α)) with s_c = Σ_{i∈c} q_i^α.
        let powered: Vec<f64> = q.iter().map(|&x| x.powf(alpha)).collect();
        let (no, yes) = side_sums(problem, objects, &powered);
        return no
            .iter()
            .zip(&yes)
            .map(|(a, b)| log_add_exp(a.ln() / alpha, b.ln() / alpha))
            .collect();
    }
    // Stable excess: with P_c = Σ q_i and E_c = Σ q_i·expm1(−ε ln q_i) per side, the child's
    // normalised Σ p^α − 1 is u_c = (E_c/P_c)·e^b + expm1(b), b = ε ln P_c (see module docs).
    let e: Vec<f64> = q
        .iter()
        .map(|&x| {
            if x > 0.0 {
                x * (-eps * x.ln()).exp_m1()
            } else {
                0.0
            }
        })
        .collect();
    let (p_no, p_yes) = side_sums(problem, objects, &q);
    let (e_no, e_yes) = side_sums(problem, objects, &e);
    (0..problem.n_queries())
        .map(|k| {
            excess_from_sums(p_no[k], e_no[k], alpha, eps)
                + excess_from_sums(p_yes[k], e_yes[k], alpha, eps)
        })
        .collect()
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

fn group_scores(
    problem: &QueryProblem,
    criterion: Criterion,
    lambda: f64,
    objects: &[u32],
) -> Vec<f64> {
    // Local group index for the groups present at the node.
    let mut local = vec![u32::MAX; problem.n_groups()];
    let mut n_local = 0usize;
    let slot: Vec<usize> = objects
        .iter()
        .map(|&i| {
            let g = problem.group(i as usize) as usize;
            if local[g] == u32::MAX {
                local[g] = n_local as u32;
                n_local += 1;
            }
            local[g] as usize
        })
        .collect();
    let n = problem.n_queries();
    let m = n_local;
    if criterion == Criterion::GroupCount {
        let mut yes = vec![0u32; n * m];
        let mut all = vec![0u32; m];
        for (&i, &g) in objects.iter().zip(&slot) {
            all[g] += 1;
            for (q, &a) in problem.row(i as usize).iter().enumerate() {
                yes[q * m + g] += u32::from(a);
            }
        }
        return (0..n)
            .map(|q| {
                let cell = &yes[q * m..(q + 1) * m];
                let n_yes = cell.iter().filter(|&&c| c > 0).count();
                let n_no = cell.iter().zip(&all).filter(|(&c, &a)| a > c).count();
                n_yes.max(n_no) as f64
            })
            .collect();
    }
    let w = relative_masses(problem, objects);
    let (mut no, mut yes) = (vec![0.0; n * m], vec![0.0; n * m]);
    for ((&i, &g), &wi) in objects.iter().zip(&slot).zip(&w) {
        for (q, &a) in problem.row(i as usize).iter().enumerate() {
            let wb = wi * f64::from(a);
            yes[q * m + g] += wb;
            no[q * m + g] += wi - wb;
        }
    }
    let (alpha, eps) = alpha_and_complement(lambda);
    let in_logs = criterion == Criterion::LambdaGgbs && lambda > LOG_DOMAIN_ABOVE;
    let side_term = |cell: &[f64]| match criterion {
        Criterion::Ggbs => weighted_entropy(cell),
        _ if in_logs => log_quasi_norm(cell, alpha),
        _ => group_excess(cell, alpha, eps),
    };
    (0..n)
        .map(|q| {
            let a = side_term(&no[q * m..(q + 1) * m]);
            let b = side_term(&yes[q * m..(q + 1) * m]);
            if in_logs {
                log_add_exp(a, b)
            } else {
                a + b
            }
        })
        .collect()
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

/// `ln ‖cell‖_α = (1/α) ln Σ x^α`, by log-sum-exp so that tiny α does not overflow.
fn log_quasi_norm(cell: &[f64], alpha: f64) -> f64 {
    let logs: Vec<f64> = cell
        .iter()
        .filter(|&&x| x > 0.0)
        .map(|&x| alpha * x.ln())
        .collect();
    let Some(hi) = logs.iter().copied().reduce(f64::max) else {
        return f64::NEG_INFINITY;
    };
    (hi + logs.iter().map(|l| (l - hi).exp()).sum::<f64>().ln()) / alpha
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
