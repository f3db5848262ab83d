//! `NativeQueryProblem`: a query matrix, prior and groups held in the core once, so that building
//! trees and scoring a session's steps do not copy the matrix again.

use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use optitree_core::search::{Budget, CancelFlag, Status};
use optitree_core::solvers::query::{
    self, Criterion, QueryConfig, QueryProblem, QueryTreeArrays, TieBreak,
};
use optitree_core::Error;

use crate::errors::{to_py, IntoPy};
use crate::interrupt;

fn criterion(name: &str) -> PyResult<Criterion> {
    Ok(match name {
        "gbs" => Criterion::Gbs,
        "lambda-gbs" => Criterion::LambdaGbs,
        "ggbs" => Criterion::Ggbs,
        "lambda-ggbs" => Criterion::LambdaGgbs,
        "count" => Criterion::Count,
        "group-count" => Criterion::GroupCount,
        other => {
            return Err(to_py(Error::InvalidParameter(format!(
                "unknown query rule {other:?}; expected gbs, lambda-gbs, ggbs, lambda-ggbs, \
                 count or group-count"
            ))))
        }
    })
}

fn tree_to_py<'py>(py: Python<'py>, tree: QueryTreeArrays) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("query", tree.query.into_pyarray(py))?;
    d.set_item("child_no", tree.child_no.into_pyarray(py))?;
    d.set_item("child_yes", tree.child_yes.into_pyarray(py))?;
    d.set_item("depth", tree.depth.into_pyarray(py))?;
    d.set_item("leaf_of_object", tree.leaf_of_object.into_pyarray(py))?;
    Ok(d)
}

/// A query-learning problem held by the core.
#[pyclass(frozen, module = "optitree._core")]
pub struct NativeQueryProblem {
    problem: QueryProblem,
}

#[pymethods]
impl NativeQueryProblem {
    /// `answers`: uint8 (objects × queries) of 0/1; `prior`: non-negative weights; `groups`:
    /// group codes 0..m-1 or None for object identification.
    #[new]
    #[pyo3(signature = (answers, prior, groups=None))]
    fn new(
        answers: PyReadonlyArray2<'_, u8>,
        prior: PyReadonlyArray1<'_, f64>,
        groups: Option<PyReadonlyArray1<'_, i64>>,
    ) -> PyResult<Self> {
        let shape = answers.as_array().dim();
        let groups = match groups {
            None => None,
            Some(g) => Some(
                g.as_array()
                    .iter()
                    .map(|&c| u32::try_from(c))
                    .collect::<Result<Vec<u32>, _>>()
                    .map_err(|_| {
                        to_py(Error::Data(
                            "group codes must be integers in 0..2**32".into(),
                        ))
                    })?,
            ),
        };
        let problem = QueryProblem::new(
            answers.as_array().iter().copied().collect(),
            shape.0,
            shape.1,
            prior.as_array().to_vec(),
            groups,
        )
        .into_py()?;
        Ok(NativeQueryProblem { problem })
    }

    /// Builds the greedy tree with `rule` at cost base `lam`; `seed` selects random tie-breaking.
    /// Returns the tree arrays and `status` (`greedy`, or why the build stopped early).
    #[pyo3(signature = (rule, lam, seed=None, max_depth=None, time_limit=None))]
    fn build_greedy<'py>(
        &self,
        py: Python<'py>,
        rule: &str,
        lam: f64,
        seed: Option<u64>,
        max_depth: Option<u32>,
        time_limit: Option<f64>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let config = QueryConfig {
            criterion: criterion(rule)?,
            lambda: lam,
            tie_break: seed.map_or(TieBreak::First, TieBreak::Random),
            max_depth,
        };
        let cancel = CancelFlag::new();
        let budget = Budget::new(time_limit, None, None, cancel.clone()).into_py()?;
        let problem = &self.problem;
        let (tree, status) = interrupt::run(py, &cancel, || {
            query::build_greedy(problem, &config, &budget)
        })?
        .into_py()?;
        let d = tree_to_py(py, tree)?;
        d.set_item("status", status.as_str())?;
        Ok(d)
    }

    /// The exact optimum at cost base `lam`: the tree arrays, `cost` and `status` `optimal`; or
    /// only `status` when the time limit or Ctrl-C stopped it first.
    #[pyo3(signature = (lam, max_depth=None, time_limit=None))]
    fn build_optimal<'py>(
        &self,
        py: Python<'py>,
        lam: f64,
        max_depth: Option<u32>,
        time_limit: Option<f64>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let cancel = CancelFlag::new();
        let budget = Budget::new(time_limit, None, None, cancel.clone()).into_py()?;
        let problem = &self.problem;
        let result = interrupt::run(py, &cancel, || {
            query::build_optimal(problem, lam, max_depth, &budget)
        })?
        .into_py()?;
        Ok(match result {
            Ok((tree, cost)) => {
                let d = tree_to_py(py, tree)?;
                d.set_item("cost", cost)?;
                d.set_item("status", Status::Optimal.as_str())?;
                d
            }
            Err(status) => {
                let d = PyDict::new(py);
                d.set_item("status", status.as_str())?;
                d
            }
        })
    }

    /// Scores of every query at the node holding `objects` (NaN where a query does not split it;
    /// lower is better) and the indices tied for the best.
    fn node_scores<'py>(
        &self,
        py: Python<'py>,
        rule: &str,
        lam: f64,
        objects: PyReadonlyArray1<'py, i64>,
    ) -> PyResult<(Bound<'py, PyArray1<f64>>, Vec<usize>)> {
        let n = self.problem.n_objects() as i64;
        let objects: Vec<u32> = objects
            .as_array()
            .iter()
            .map(|&i| {
                if (0..n).contains(&i) {
                    Ok(i as u32)
                } else {
                    Err(to_py(Error::Data(format!(
                        "object index {i} is outside 0..{n}"
                    ))))
                }
            })
            .collect::<PyResult<_>>()?;
        query::check_cost_base(lam).into_py()?;
        let scores = query::node_scores(&self.problem, criterion(rule)?, lam, &objects);
        let tied = query::tied_best(&scores);
        Ok((scores.into_pyarray(py), tied))
    }

    /// Largest number of objects `build_optimal` accepts.
    #[classattr]
    fn max_optimal_objects() -> usize {
        query::MAX_OPTIMAL_OBJECTS
    }
}
