//! Proper trees (He & Little): `fit_proper` runs the core solver on a float matrix, and
//! `proper_candidate_rules` exposes the candidate rules (for inspection and tests).

use numpy::{PyArray2, PyReadonlyArray1, PyReadonlyArray2, ToPyArray};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use optitree_core::search::{Budget, CancelFlag, ProgressBoard};
use optitree_core::solvers::proper::{
    self, EngineChoice, Family, Objective, Points, ProperConfig, RuleSpec, Sides,
};
use optitree_core::Error;

use crate::errors::{self, IntoPy};
use crate::{interrupt, outcome_to_py};

fn points(x: &PyReadonlyArray2<'_, f64>) -> PyResult<Points> {
    let a = x.as_array();
    let (n, d) = a.dim();
    Points::new(n, d, a.iter().copied().collect()).into_py()
}

fn choice<T: Copy>(name: &str, value: &str, options: &[(&str, T)]) -> PyResult<T> {
    options
        .iter()
        .find(|(k, _)| *k == value)
        .map(|(_, v)| *v)
        .ok_or_else(|| {
            let allowed: Vec<&str> = options.iter().map(|(k, _)| *k).collect();
            errors::to_py(Error::InvalidParameter(format!(
                "{name}={value:?}: use one of {allowed:?}"
            )))
        })
}

fn rule_spec(rule: &str, degree: u32, sides: &str) -> PyResult<RuleSpec> {
    let family = choice(
        "rule",
        rule,
        &[
            ("axis", Family::Axis),
            ("hyperplane", Family::Hyperplane),
            ("polynomial", Family::Polynomial),
            ("mixed", Family::Mixed),
        ],
    )?;
    let sides = choice(
        "side_assignment",
        sides,
        &[("all", Sides::All), ("closed", Sides::Closed)],
    )?;
    Ok(RuleSpec {
        family,
        degree,
        sides,
    })
}

/// The best proper tree: a dict with the tree arrays, status, bounds, statistics, `cost`,
/// `feasible` and `level_order` (rule ids of the tree, left-first level order).
#[pyfunction]
#[pyo3(signature = (x, labels, n_classes, n_splits, *, rule="axis", degree=2, side_assignment="all",
    exactly=false, objective="misclassification", max_depth=None, min_samples_leaf=1, n_jobs=1,
    engine="auto", time_limit=None, memory_limit=None, refuse_above_seconds=None, progress=None))]
#[allow(clippy::too_many_arguments)]
pub fn fit_proper<'py>(
    py: Python<'py>,
    x: PyReadonlyArray2<'py, f64>,
    labels: PyReadonlyArray1<'py, i64>,
    n_classes: usize,
    n_splits: usize,
    rule: &str,
    degree: u32,
    side_assignment: &str,
    exactly: bool,
    objective: &str,
    max_depth: Option<u32>,
    min_samples_leaf: u64,
    n_jobs: usize,
    engine: &str,
    time_limit: Option<f64>,
    memory_limit: Option<usize>,
    refuse_above_seconds: Option<f64>,
    progress: Option<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let pts = points(&x)?;
    let labels: Vec<u32> = labels
        .as_array()
        .iter()
        .map(|&c| u32::try_from(c).unwrap_or(u32::MAX))
        .collect();
    let config = ProperConfig {
        n_splits,
        rules: rule_spec(rule, degree, side_assignment)?,
        exactly,
        objective: choice(
            "objective",
            objective,
            &[
                ("misclassification", Objective::Misclassification),
                ("gini", Objective::Gini),
                ("entropy", Objective::Entropy),
            ],
        )?,
        max_depth,
        min_samples_leaf,
        n_jobs: n_jobs.max(1),
        engine: choice(
            "engine",
            engine,
            &[
                ("auto", EngineChoice::Auto),
                ("combinations", EngineChoice::Combinations),
                ("topdown", EngineChoice::TopDown),
            ],
        )?,
        refuse_above_seconds,
    };
    let cancel = CancelFlag::new();
    let budget = Budget::new(time_limit, None, memory_limit, cancel.clone()).into_py()?;
    let board = ProgressBoard::new();
    let reporter = progress.map(|callback| interrupt::Reporter::new(board.clone(), callback));
    let outcome = interrupt::run_reporting(py, &cancel, reporter, || {
        proper::solve(&pts, &labels, n_classes, &config, &budget, Some(&board))
    })?
    .into_py()?;
    let out = outcome_to_py(py, &outcome, &outcome.solution.tree)?;
    out.set_item("cost", outcome.solution.cost)?;
    out.set_item("feasible", outcome.solution.feasible)?;
    out.set_item("level_order", outcome.solution.level_order.clone())?;
    Ok(out)
}

/// Sides (rules × rows) and defining rows of each candidate rule.
type CandidateRules<'py> = (Bound<'py, PyArray2<bool>>, Vec<Vec<u32>>);

/// The candidate rules for `x`: `(plus, defining)` with `plus[r, i]` true when row `i` goes left
/// of rule `r`, and `defining[r]` the rows that define rule `r`.
#[pyfunction]
#[pyo3(signature = (x, rule="axis", degree=2, side_assignment="all"))]
pub fn proper_candidate_rules<'py>(
    py: Python<'py>,
    x: PyReadonlyArray2<'py, f64>,
    rule: &str,
    degree: u32,
    side_assignment: &str,
) -> PyResult<CandidateRules<'py>> {
    let pts = points(&x)?;
    let spec = rule_spec(rule, degree, side_assignment)?;
    let mut set = proper::rules::generate(&pts, spec, false, &Budget::unlimited()).into_py()?;
    proper::rules::remove_duplicates(&mut set);
    let n = pts.n_rows();
    let mut plus = numpy::ndarray::Array2::<bool>::from_elem((set.len(), n), false);
    for r in 0..set.len() {
        let side = set.plus(r);
        for i in 0..n {
            plus[(r, i)] = side[i / 64] >> (i % 64) & 1 == 1;
        }
    }
    let defining = (0..set.len()).map(|r| set.defining(r).to_vec()).collect();
    Ok((plus.to_pyarray(py), defining))
}
