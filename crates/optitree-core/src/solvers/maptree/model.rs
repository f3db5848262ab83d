//! The BCART posterior (Chipman, George & McCulloch) with Dirichlet–Multinomial leaves: every term
//! of a tree's cost `−log P(T, Y | X)` and the Perfect Split heuristic.
//!
//! Floating-point expressions follow the reference implementation's order exactly (spec §1.4), so
//! that the reference-compatible search reproduces its bounds bit for bit; `ln Γ` is the C
//! library's, as in the reference (see [`crate::math`]).
//!
//! With K classes and pseudo-counts ρ, a leaf's marginal likelihood is `B_K(c + ρ) / B_K(ρ)` with
//! `ln B_K(a) = Σ_k lgamma(a_k) − lgamma(Σ_k a_k)`; for two classes this is the paper's
//! Beta–Binomial, evaluated in the same order.

use crate::error::Result;
use crate::param_err;

/// α, β and ρ of the model, with the constants derived from them.
#[derive(Debug, Clone)]
pub struct Posterior {
    ln_alpha: f64,
    beta: f64,
    rho: Vec<f64>,
    /// `ln B_K(ρ)`.
    ln_beta_rho: f64,
    /// Fast mode: every term precomputed for the counts and depths of one dataset.
    tables: Option<Tables>,
}

/// The terms of a cost, tabulated: `ln Γ` and `ln` dominate a search's time otherwise. Values
/// agree with the direct formulas to a few ulps (sums are grouped differently), so a search uses
/// either the tables throughout or not at all.
#[derive(Debug, Clone)]
struct Tables {
    /// `class_lgamma[k][c] = ln Γ(c + ρ_k)`.
    class_lgamma: Vec<Vec<f64>>,
    /// `total_lgamma[c] = ln Γ(c + Σρ)`.
    total_lgamma: Vec<f64>,
    /// `pure[k][c] = (ln Γ(c + ρ_k) + Σ_{j≠k} ln Γ(ρ_j)) − ln Γ(c + Σρ)`: a pure leaf's term.
    pure: Vec<Vec<f64>>,
    /// `ln p_split(d)` and `ln p_leaf(d)` of a splittable node, by depth.
    log_split: Vec<f64>,
    log_leaf: Vec<f64>,
    /// `ln k` for every possible number of valid features.
    ln: Vec<f64>,
}

/// `ln B_K(a) = Σ lgamma(a_k) − lgamma(Σ a_k)`, summed left to right.
fn ln_multi_beta(a: &[f64]) -> f64 {
    let mut total = 0.0;
    let mut lg = 0.0;
    for (k, &x) in a.iter().enumerate() {
        lg = if k == 0 {
            crate::math::ln_gamma(x)
        } else {
            lg + crate::math::ln_gamma(x)
        };
        total = if k == 0 { x } else { total + x };
    }
    lg - crate::math::ln_gamma(total)
}

impl Posterior {
    /// Checks `0 < α < 1`, `β ≥ 0`, `ρ_k > 0` (one per class, at least two classes).
    pub fn new(alpha: f64, beta: f64, rho: Vec<f64>) -> Result<Self> {
        if !(alpha > 0.0 && alpha < 1.0) {
            return param_err!("alpha must be in (0, 1), got {alpha}");
        }
        if !(beta >= 0.0 && beta.is_finite()) {
            return param_err!("beta must be a finite number >= 0, got {beta}");
        }
        if rho.len() < 2 {
            return param_err!(
                "rho needs one pseudo-count per class (at least 2), got {}",
                rho.len()
            );
        }
        if let Some(r) = rho.iter().find(|r| !(r.is_finite() && **r > 0.0)) {
            return param_err!("every rho must be a finite number > 0, got {r}");
        }
        let ln_beta_rho = ln_multi_beta(&rho);
        Ok(Posterior {
            ln_alpha: alpha.ln(),
            beta,
            rho,
            ln_beta_rho,
            tables: None,
        })
    }

    /// Precomputes every term for up to `max_count` rows, `max_features` valid features and
    /// depths below `max_depth` (larger arguments fall back to the formulas).
    pub fn tabulate(&mut self, max_count: usize, max_features: usize, max_depth: u32) {
        self.tables = None; // the formulas below must not read a previous table
        let ln_gamma = crate::math::ln_gamma;
        let counts = 0..=max_count;
        let class_lgamma: Vec<Vec<f64>> = self
            .rho
            .iter()
            .map(|&r| counts.clone().map(|c| ln_gamma(c as f64 + r)).collect())
            .collect();
        let rho_total: f64 = self.rho.iter().sum();
        let total_lgamma: Vec<f64> = counts.map(|c| ln_gamma(c as f64 + rho_total)).collect();
        let all: f64 = self.rho.iter().map(|&r| ln_gamma(r)).sum();
        let other_classes: Vec<f64> = self.rho.iter().map(|&r| all - ln_gamma(r)).collect();
        let pure = class_lgamma
            .iter()
            .zip(&other_classes)
            .map(|(class, &other)| {
                let totals = class.iter().zip(&total_lgamma);
                totals.map(|(&c, &total)| (c + other) - total).collect()
            })
            .collect();
        self.tables = Some(Tables {
            class_lgamma,
            total_lgamma,
            pure,
            log_split: (0..max_depth).map(|d| self.log_split(d)).collect(),
            log_leaf: (0..max_depth)
                .map(|d| self.log_leaf_splittable(d))
                .collect(),
            // Counts of features, and of the bits telling groups of rows apart.
            ln: (0..=max_features.max(64))
                .map(|k| (k as f64).ln())
                .collect(),
        });
    }

    /// Number of classes.
    pub fn n_classes(&self) -> usize {
        self.rho.len()
    }

    /// `ln p_split(d) = ln α − β ln(d + 1)`.
    #[inline]
    pub fn log_split(&self, depth: u32) -> f64 {
        if let Some(&v) = self
            .tables
            .as_ref()
            .and_then(|t| t.log_split.get(depth as usize))
        {
            return v;
        }
        self.ln_alpha - self.beta * f64::from(depth + 1).ln()
    }

    /// `ln p_leaf` of a splittable node at `depth` (an unsplittable one has 0).
    #[inline]
    pub fn log_leaf_splittable(&self, depth: u32) -> f64 {
        if let Some(&v) = self
            .tables
            .as_ref()
            .and_then(|t| t.log_leaf.get(depth as usize))
        {
            return v;
        }
        (1.0 - self.log_split(depth).exp()).ln()
    }

    /// `ln k`, from the table when there is one.
    #[inline]
    pub fn ln_count(&self, k: usize) -> f64 {
        match self.tables.as_ref().and_then(|t| t.ln.get(k)) {
            Some(&v) => v,
            None => (k as f64).ln(),
        }
    }

    /// The cost of splitting a node at `depth` with `n_valid` valid features: `−ln p_inner`.
    pub fn split_penalty(&self, depth: u32, n_valid: usize) -> f64 {
        -(self.log_split(depth) - self.ln_count(n_valid))
    }

    /// The tables, when they cover every count in `counts`.
    fn tables_for(&self, counts: &[u64]) -> Option<&Tables> {
        let t = self.tables.as_ref()?;
        let total: u64 = counts.iter().sum();
        (total < t.total_lgamma.len() as u64).then_some(t)
    }

    /// Log marginal likelihood of a leaf with class counts `counts`.
    pub fn log_likelihood(&self, counts: &[u64]) -> f64 {
        if let Some(t) = self.tables_for(counts) {
            let mut total = 0;
            let mut sum = 0.0;
            for (k, &c) in counts.iter().enumerate() {
                sum += t.class_lgamma[k][c as usize];
                total += c;
            }
            return sum - t.total_lgamma[total as usize] - self.ln_beta_rho;
        }
        let shifted: Vec<f64> = counts
            .iter()
            .zip(&self.rho)
            .map(|(&c, &r)| c as f64 + r)
            .collect();
        ln_multi_beta(&shifted) - self.ln_beta_rho
    }

    /// `Σ_k LL(c_k e_k)`: every class alone in its own leaf, as the reference evaluates it for two
    /// classes: `(Σ_k ln B(ρ + c_k e_k)) − K ln B(ρ)`.
    pub fn log_likelihood_perfect(&self, counts: &[u64]) -> f64 {
        if let Some(t) = self.tables_for(counts) {
            let mut sum = 0.0;
            for (k, &c) in counts.iter().enumerate() {
                let c = c as usize;
                sum += t.pure[k][c];
            }
            return sum - self.rho.len() as f64 * self.ln_beta_rho;
        }
        let mut sum = 0.0;
        let mut a = self.rho.clone();
        for (k, &c) in counts.iter().enumerate() {
            a[k] = c as f64 + self.rho[k];
            let term = ln_multi_beta(&a);
            sum = if k == 0 { term } else { sum + term };
            a[k] = self.rho[k];
        }
        sum - self.rho.len() as f64 * self.ln_beta_rho
    }

    /// [`Self::log_likelihood`] of two classes with counts `(a, b)`: the same value, without the
    /// general path's loop (the fast mode's count bounds ask for it hundreds of millions of
    /// times).
    #[inline]
    pub fn log_likelihood_two(&self, a: u64, b: u64) -> f64 {
        if let Some(t) = &self.tables {
            let terms = (
                t.class_lgamma[0].get(a as usize),
                t.class_lgamma[1].get(b as usize),
                t.total_lgamma.get((a + b) as usize),
            );
            if let (Some(x), Some(y), Some(total)) = terms {
                return ((x + y) - total) - self.ln_beta_rho; // the general path's order
            }
        }
        self.log_likelihood(&[a, b])
    }

    /// [`Self::log_likelihood_perfect`] of two classes with counts `(a, b)`, as
    /// [`Self::log_likelihood_two`] is to [`Self::log_likelihood`].
    #[inline]
    pub fn log_likelihood_perfect_two(&self, a: u64, b: u64) -> f64 {
        if let Some(t) = &self.tables {
            if let (Some(x), Some(y)) = (t.pure[0].get(a as usize), t.pure[1].get(b as usize)) {
                return (x + y) - 2.0 * self.ln_beta_rho; // the general path's order
            }
        }
        self.log_likelihood_perfect(&[a, b])
    }

    /// Cost of a leaf: `−(ln p_leaf + LL)`.
    pub fn leaf_cost(&self, depth: u32, splittable: bool, counts: &[u64]) -> f64 {
        let log_leaf = if splittable {
            self.log_leaf_splittable(depth)
        } else {
            0.0
        };
        -(log_leaf + self.log_likelihood(counts))
    }

    /// The Perfect Split heuristic: the cheaper of stopping without the leaf prior and one split
    /// into pure, unsplittable children (without the `1/|V|` factor). Admissible and consistent.
    pub fn heuristic(&self, depth: u32, counts: &[u64]) -> f64 {
        let perfect = -(self.log_split(depth) + self.log_likelihood_perfect(counts));
        let stop = -(0.0 + self.log_likelihood(counts));
        perfect.min(stop)
    }

    /// The Perfect Split heuristic when the number of valid features is known (fast mode): an
    /// unsplittable node costs exactly `−LL`; otherwise the leaf alternative pays its leaf prior
    /// and the split alternative its `ln |V|`. Admissible: every other term of a subtree's cost
    /// is non-negative, and by the paper's Lemmas 13–14 its leaves' likelihood is at most that of
    /// one pure leaf per class.
    pub fn heuristic_known_splits(&self, depth: u32, counts: &[u64], n_valid: usize) -> f64 {
        if n_valid == 0 {
            return self.leaf_cost(depth, false, counts);
        }
        let perfect = -((self.log_split(depth) - (n_valid as f64).ln())
            + self.log_likelihood_perfect(counts));
        perfect.min(self.leaf_cost(depth, true, counts))
    }
}
