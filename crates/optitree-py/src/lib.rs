//! `optitree._core`: the Python face of optitree-core. This crate holds no algorithm, only
//! conversion between numpy and core types ([`convert`]), the one error mapping ([`errors`]) and
//! running long calls with the GIL released while watching for Ctrl-C ([`interrupt`]).

/// The extension's own allocations (never numpy's or Python's) go to mimalloc, which keeps and
/// reuses freed pages. With the system allocator, a fit's megabytes of short-lived buffers
/// (codes, row orders, bit sets) grew and trimmed the heap on every call: 666 page faults, a
/// third of a 4.3 ms fit on mushroom-o (now 2.7 ms); searches allocating many small records run
/// 3-8% faster too.
///
/// Built with `no_thp`: otherwise mimalloc advises huge pages for its whole arena, so every
/// small object that touches a fresh 2 MiB region makes all of it resident. A MAPTree search's
/// resident memory then ran ~25% above what its memory limit counts (mushroom, 200k
/// expansions: 602 → 562 MB peak RSS, no slower). The large arrays of a search still ask for
/// huge pages themselves (`search::huge_pages`).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod convert;
mod errors;
mod interrupt;
mod proper;
mod query;

use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use optitree_core::data::Dataset;
use optitree_core::search::{budget, Budget, CancelFlag, Outcome, ProgressBoard, Status};
use optitree_core::solvers::branches::{self, BranchesConfig};
use optitree_core::solvers::maptree::{self, MapTreeConfig};
use optitree_core::solvers::stump;
use optitree_core::tree::Tree;

use errors::IntoPy;

/// Two int64 index arrays returned together.
type IndexPair<'py> = (Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<i64>>);

/// Checks the arrays of a Python `Tree` (raises DataError naming the broken rule).
#[pyfunction]
fn tree_validate(tree: &Bound<'_, PyAny>) -> PyResult<()> {
    convert::tree_from_py(tree).map(|_| ())
}

/// Routes the rows of `x` (n_rows x n_features: float64 values, or uint8/uint16 category
/// codes): returns `(reached, predicting)` node indices (see the routing policy in the core's
/// `tree::routing`).
#[pyfunction]
fn tree_route<'py>(
    py: Python<'py>,
    tree: &Bound<'py, PyAny>,
    x: &Bound<'py, PyAny>,
) -> PyResult<IndexPair<'py>> {
    let t = convert::tree_from_py(tree)?;
    let (reached, predicting) = convert::RouteMatrix::of(x)?.walk(py, &t, convert::Walk::Route)?;
    Ok((
        convert::indices(py, reached),
        convert::indices(py, predicting),
    ))
}

/// Decision paths of the rows of `x` (as [`tree_route`] reads it) as CSR `(indptr, node
/// indices)`.
#[pyfunction]
fn tree_decision_path<'py>(
    py: Python<'py>,
    tree: &Bound<'py, PyAny>,
    x: &Bound<'py, PyAny>,
) -> PyResult<IndexPair<'py>> {
    let t = convert::tree_from_py(tree)?;
    let (indptr, nodes) = convert::RouteMatrix::of(x)?.walk(py, &t, convert::Walk::Paths)?;
    Ok((convert::indices(py, indptr), convert::indices(py, nodes)))
}

/// Codes of an integer matrix (same shape) and each column's distinct values.
type Factorized<'py> = (Bound<'py, PyAny>, Vec<Vec<i64>>);

/// Sorted-label codes (same shape) and the distinct values of each column of an integer matrix,
/// by counting; None when a column's range exceeds `max_span` (the caller then sorts). The
/// codes are uint8 when every column has at most 256 values, uint16 up to 65,536, else
/// float64: mushroom's as bytes took 0.95 MB to write, not 7.6, and no cast to the bytes the
/// searches read.
#[pyfunction]
fn factorize_int_columns<'py>(
    py: Python<'py>,
    x: PyReadonlyArray2<'py, i64>,
    max_span: u64,
) -> PyResult<Option<Factorized<'py>>> {
    let arr = x.as_array();
    let n_cols = arr.ncols();
    let mut copy = Vec::new();
    let rows = int_rows(&arr, &mut copy);
    let rows = rows.iter().copied();
    let plan =
        py.detach(|| optitree_core::data::plan_factorization(rows.clone(), n_cols, max_span));
    let Some(plan) = plan else {
        return Ok(None);
    };
    let shape = (arr.nrows(), n_cols);
    let codes = match plan.most_labels() {
        0..=256 => code_matrix::<u8>(py, &plan, rows, shape)?,
        257..=65536 => code_matrix::<u16>(py, &plan, rows, shape)?,
        _ => code_matrix::<f64>(py, &plan, rows, shape)?,
    };
    Ok(Some((codes, plan.into_labels())))
}

/// The codes of `plan` in `C`, as a numpy matrix of `shape`.
fn code_matrix<'a, 'py, C: optitree_core::data::Code + numpy::Element + Send>(
    py: Python<'py>,
    plan: &optitree_core::data::Plan,
    rows: impl ExactSizeIterator<Item = &'a [i64]> + Send,
    shape: (usize, usize),
) -> PyResult<Bound<'py, PyAny>> {
    let codes = py.detach(|| plan.codes::<C>(rows)).ok_or_else(|| {
        pyo3::exceptions::PyValueError::new_err("codes do not fit the chosen type")
    })?;
    Ok(matrix_of(py, shape, codes)?.into_any())
}

/// The row-major `cells` as a numpy matrix of `shape`.
fn matrix_of<T: numpy::Element>(
    py: Python<'_>,
    shape: (usize, usize),
    cells: Vec<T>,
) -> PyResult<Bound<'_, numpy::PyArray2<T>>> {
    let matrix = numpy::ndarray::Array2::from_shape_vec(shape, cells)
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
    Ok(matrix.into_pyarray(py))
}

/// Codes (float64, same shape) of an integer matrix under each column's fit-time labels, -1 for
/// a value not among them; None when the labels' ranges together exceed `max_slots` (the caller
/// then matches cells one by one).
#[pyfunction]
fn codes_under_labels<'py>(
    py: Python<'py>,
    x: PyReadonlyArray2<'py, i64>,
    labels: Vec<Vec<i64>>,
    max_slots: usize,
) -> PyResult<Option<Bound<'py, numpy::PyArray2<f64>>>> {
    let arr = x.as_array();
    if arr.ncols() != labels.len() {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "x has {} columns but labels describes {}",
            arr.ncols(),
            labels.len()
        )));
    }
    let mut copy = Vec::new();
    let rows = int_rows(&arr, &mut copy);
    let codes = py.detach(|| {
        optitree_core::data::codes_under_labels(rows.iter().copied(), &labels, max_slots)
    });
    let Some(codes) = codes else {
        return Ok(None);
    };
    Ok(Some(matrix_of(py, (arr.nrows(), arr.ncols()), codes)?))
}

/// The rows of an int64 matrix as slices of adjacent cells: read in place from a C-ordered
/// matrix and from a column slice of one (`data[:, :-1]`: cells adjacent, rows apart); any
/// other layout is first copied into `copy` in row-major order. A slice a row costs nothing
/// next to the pass over the cells (8,124 of them for mushroom).
fn int_rows<'a>(
    arr: &'a numpy::ndarray::ArrayView2<'a, i64>,
    copy: &'a mut Vec<i64>,
) -> Vec<&'a [i64]> {
    let in_place = arr.rows().into_iter().map(|r| r.to_slice());
    if let Some(rows) = in_place.collect::<Option<Vec<_>>>() {
        return rows;
    }
    *copy = arr.iter().copied().collect();
    copy.chunks_exact(arr.ncols().max(1)).collect()
}

/// Summary of a categorical dataset as the Rust core sees it (rows, features, classes,
/// categories per feature, class totals). Exercises the bitset data layer from Python.
#[pyfunction]
#[pyo3(signature = (codes, labels, n_classes=None, n_values=None, sample_weight=None))]
fn dataset_summary<'py>(
    py: Python<'py>,
    codes: convert::CodeMatrix<'py>,
    labels: PyReadonlyArray1<'py, i64>,
    n_classes: Option<usize>,
    n_values: Option<Vec<usize>>,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
) -> PyResult<Bound<'py, PyDict>> {
    let table = convert::table(
        &codes,
        &labels,
        n_classes,
        n_values.as_deref(),
        sample_weight.as_ref(),
    )?;
    let data = Dataset::from_table(table);
    let out = PyDict::new(py);
    out.set_item("n_rows", data.n_rows())?;
    out.set_item("n_features", data.n_features())?;
    out.set_item("n_classes", data.n_classes())?;
    let n_values: Vec<usize> = (0..data.n_features()).map(|f| data.n_values(f)).collect();
    out.set_item("n_values", n_values)?;
    out.set_item(
        "class_totals",
        data.class_weights(&data.all_rows()).into_pyarray(py),
    )?;
    Ok(out)
}

/// The best tree with at most one multiway split (exact), as a dict with the tree arrays, status,
/// bounds and statistics.
#[pyfunction]
#[pyo3(signature = (codes, labels, n_classes=None, n_values=None, sample_weight=None, time_limit=None))]
fn fit_stump<'py>(
    py: Python<'py>,
    codes: convert::CodeMatrix<'py>,
    labels: PyReadonlyArray1<'py, i64>,
    n_classes: Option<usize>,
    n_values: Option<Vec<usize>>,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
    time_limit: Option<f64>,
) -> PyResult<Bound<'py, PyDict>> {
    let table = convert::table(
        &codes,
        &labels,
        n_classes,
        n_values.as_deref(),
        sample_weight.as_ref(),
    )?;
    let data = Dataset::from_table(table);
    let cancel = CancelFlag::new();
    let budget = Budget::new(time_limit, None, None, cancel.clone()).into_py()?;
    let outcome =
        interrupt::run_here(py, &cancel, None, || stump::best_stump(&data, &budget))?.into_py()?;
    outcome_to_py(py, &outcome, &outcome.solution)
}

/// Branches: the tree maximising `accuracy − λ·splits` with λ = `penalty_num / penalty_den`, as a
/// dict with the tree arrays, status, bounds, statistics and the exact `correct`/`splits`.
/// `progress`, if given, is called with a dict of the search's figures about twice a second.
#[pyfunction]
#[pyo3(signature = (codes, labels, penalty_num, penalty_den, *, n_classes=None, n_values=None,
    sample_weight=None, max_depth=None, min_samples_leaf=1, fewest_splits=true, time_limit=None,
    node_limit=None, memory_limit=None, progress=None, chains=None))]
#[allow(clippy::too_many_arguments)]
fn fit_branches<'py>(
    py: Python<'py>,
    codes: convert::CodeMatrix<'py>,
    labels: PyReadonlyArray1<'py, i64>,
    penalty_num: u64,
    penalty_den: u64,
    n_classes: Option<usize>,
    n_values: Option<Vec<usize>>,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
    max_depth: Option<u32>,
    min_samples_leaf: u64,
    fewest_splits: bool,
    time_limit: Option<f64>,
    node_limit: Option<u64>,
    memory_limit: Option<usize>,
    progress: Option<Bound<'py, PyAny>>,
    chains: Option<Vec<Option<u32>>>,
) -> PyResult<Bound<'py, PyDict>> {
    // The clock starts before the data are converted: wide data take a while (a fit's time
    // limit covers all of it).
    let cancel = CancelFlag::new();
    let budget = Budget::new(time_limit, node_limit, memory_limit, cancel.clone()).into_py()?;
    let data = convert::table(
        &codes,
        &labels,
        n_classes,
        n_values.as_deref(),
        sample_weight.as_ref(),
    )?;
    let config = BranchesConfig {
        penalty: (penalty_num, penalty_den),
        max_depth,
        min_samples_leaf,
        fewest_splits,
    };
    let board = ProgressBoard::new();
    let reporter = progress.map(|callback| interrupt::Reporter::new(board.clone(), callback));
    let outcome = interrupt::run_here(py, &cancel, reporter, || {
        let chains = chains.as_deref().unwrap_or_default();
        branches::solve_with_chains(data, &config, chains, &budget, Some(&board))
    })?
    .into_py()?;
    let out = outcome_to_py(py, &outcome, &outcome.solution.tree)?;
    out.set_item("correct", outcome.solution.correct)?;
    out.set_item("splits", outcome.solution.splits)?;
    out.set_item("objective", outcome.solution.objective)?;
    Ok(out)
}

/// MAPTree: the maximum-a-posteriori tree on binary features (codes 0/1) under the BCART prior
/// with Dirichlet–Multinomial leaves, as a dict with the tree arrays, status, the bounds on the
/// cost `−log P(T, Y | X)` (`lower_bound` ≤ MAP cost ≤ `upper_bound`), statistics and the
/// reference's tree string. `fast` selects the fast search mode (same optimum; the default is the
/// reference implementation's order); `threads` above 1 gives it a second thread (same search).
#[pyfunction]
#[pyo3(signature = (codes, labels, alpha, beta, rho, *, n_classes=None, max_expansions=None,
    time_limit=None, memory_limit=None, progress=None, fast=false, threads=1))]
#[allow(clippy::too_many_arguments)]
fn fit_maptree<'py>(
    py: Python<'py>,
    codes: convert::CodeMatrix<'py>,
    labels: PyReadonlyArray1<'py, i64>,
    alpha: f64,
    beta: f64,
    rho: Vec<f64>,
    n_classes: Option<usize>,
    max_expansions: Option<u64>,
    time_limit: Option<f64>,
    memory_limit: Option<usize>,
    progress: Option<Bound<'py, PyAny>>,
    fast: bool,
    threads: usize,
) -> PyResult<Bound<'py, PyDict>> {
    // The clock starts before the data are converted (see `fit_branches`).
    let cancel = CancelFlag::new();
    let budget = Budget::new(time_limit, None, memory_limit, cancel.clone()).into_py()?;
    let n_features = codes.shape().1;
    let table = convert::table(&codes, &labels, n_classes, Some(&vec![2; n_features]), None)?;
    let data = Dataset::from_table(table);
    let config = MapTreeConfig {
        alpha,
        beta,
        rho,
        max_expansions,
        fast,
        threads,
    };
    let board = ProgressBoard::new();
    let reporter = progress.map(|callback| interrupt::Reporter::new(board.clone(), callback));
    let outcome = interrupt::run_here(py, &cancel, reporter, || {
        maptree::solve(&data, &config, &budget, Some(&board))
    })?
    .into_py()?;
    let out = outcome_to_py(py, &outcome, &outcome.solution.tree)?;
    out.set_item("cost", outcome.solution.cost)?;
    out.set_item("reference_string", &outcome.solution.reference_string)?;
    Ok(out)
}

/// Spins until the budget stops it; returns `(status, iterations)`. A test hook for time limits,
/// node limits and Ctrl-C handling that depends on no solver: on the calling thread (as
/// single-threaded searches run), or on a worker thread (as parallel ones do).
#[pyfunction]
#[pyo3(signature = (time_limit=None, node_limit=None, on_worker_thread=false))]
fn _spin(
    py: Python<'_>,
    time_limit: Option<f64>,
    node_limit: Option<u64>,
    on_worker_thread: bool,
) -> PyResult<(String, u64)> {
    let cancel = CancelFlag::new();
    let budget = Budget::new(time_limit, node_limit, None, cancel.clone()).into_py()?;
    let spin = || budget::spin_until_stopped(&budget);
    let (status, n) = if on_worker_thread {
        interrupt::run(py, &cancel, spin)?
    } else {
        interrupt::run_here(py, &cancel, None, spin)?
    };
    Ok((status.as_str().to_owned(), n))
}

/// The parts every solver returns: tree arrays, status, bounds and statistics.
pub(crate) fn outcome_to_py<'py, T>(
    py: Python<'py>,
    outcome: &Outcome<T>,
    tree: &Tree,
) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("tree", convert::tree_to_py(py, tree)?)?;
    out.set_item("status", outcome.status.as_str())?;
    out.set_item("lower_bound", outcome.lower_bound)?;
    out.set_item("upper_bound", outcome.upper_bound)?;
    out.set_item("statistics", convert::stats_to_py(py, &outcome.stats)?)?;
    Ok(out)
}

/// The status names shared by Rust, Python, the CLI and JSON.
#[pyfunction]
fn status_names() -> Vec<&'static str> {
    Status::ALL.iter().map(|s| s.as_str()).collect()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(tree_validate, m)?)?;
    m.add_function(wrap_pyfunction!(tree_route, m)?)?;
    m.add_function(wrap_pyfunction!(tree_decision_path, m)?)?;
    m.add_function(wrap_pyfunction!(dataset_summary, m)?)?;
    m.add_function(wrap_pyfunction!(factorize_int_columns, m)?)?;
    m.add_function(wrap_pyfunction!(codes_under_labels, m)?)?;
    m.add_function(wrap_pyfunction!(fit_stump, m)?)?;
    m.add_function(wrap_pyfunction!(fit_branches, m)?)?;
    m.add_function(wrap_pyfunction!(fit_maptree, m)?)?;
    m.add_function(wrap_pyfunction!(proper::fit_proper, m)?)?;
    m.add_function(wrap_pyfunction!(proper::proper_candidate_rules, m)?)?;
    m.add_function(wrap_pyfunction!(status_names, m)?)?;
    m.add_function(wrap_pyfunction!(_spin, m)?)?;
    m.add_class::<query::NativeQueryProblem>()?;
    Ok(())
}
