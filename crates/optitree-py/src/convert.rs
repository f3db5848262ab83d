//! Conversions between numpy / Python objects and core types. Every check on user-supplied
//! arrays happens here or in the core; nothing is unwrapped.

use std::borrow::Cow;

use numpy::{
    IntoPyArray, PyArray1, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2,
    PyUntypedArrayMethods,
};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use optitree_core::data::{codes_of_columns, column_major_codes, transpose_bytes, Codes, Table};
use optitree_core::search::stats::StatValue;
use optitree_core::search::Stats;
use optitree_core::tree::{Tree, TreeArrays};
use optitree_core::Error;

use crate::errors::{to_py, IntoPy};

fn vec_attr<T: numpy::Element + Copy>(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<Vec<T>> {
    let arr: PyReadonlyArray1<'_, T> = obj.getattr(name)?.extract().map_err(|_| {
        to_py(Error::Data(format!(
            "tree attribute {name:?} is not a 1-D array of the expected dtype"
        )))
    })?;
    Ok(arr.as_array().to_vec())
}

/// Reads the arrays of a Python `optitree.tree.Tree` and validates them into a core tree.
pub fn tree_from_py(obj: &Bound<'_, PyAny>) -> PyResult<Tree> {
    let value: PyReadonlyArray2<'_, f64> = obj.getattr("value")?.extract().map_err(|_| {
        to_py(Error::Data(
            "tree attribute 'value' is not a 2-D float64 array".into(),
        ))
    })?;
    let n_classes = value.shape()[1];
    let arrays = TreeArrays {
        kind: vec_attr(obj, "kind")?,
        feature: vec_attr(obj, "feature")?,
        threshold: vec_attr(obj, "threshold")?,
        oblique_index: vec_attr(obj, "oblique_index")?,
        children_ptr: vec_attr(obj, "children_ptr")?,
        children: vec_attr(obj, "children")?,
        value: value.as_array().iter().copied().collect(),
        oblique_ptr: vec_attr(obj, "oblique_ptr")?,
        term_coef: vec_attr(obj, "term_coef")?,
        term_ptr: vec_attr(obj, "term_ptr")?,
        term_features: vec_attr(obj, "term_features")?,
        n_features: obj.getattr("n_features")?.extract()?,
        n_classes,
    };
    Tree::new(arrays).into_py()
}

/// The tree's arrays as a dict of numpy arrays (the keyword arguments of `Tree`).
pub fn tree_to_py<'py>(py: Python<'py>, tree: &Tree) -> PyResult<Bound<'py, PyDict>> {
    let a = tree.to_arrays();
    let d = PyDict::new(py);
    let n_nodes = a.kind.len();
    d.set_item("kind", a.kind.into_pyarray(py))?;
    d.set_item("feature", a.feature.into_pyarray(py))?;
    d.set_item("threshold", a.threshold.into_pyarray(py))?;
    d.set_item("oblique_index", a.oblique_index.into_pyarray(py))?;
    d.set_item("children_ptr", a.children_ptr.into_pyarray(py))?;
    d.set_item("children", a.children.into_pyarray(py))?;
    d.set_item(
        "value",
        a.value.into_pyarray(py).reshape([n_nodes, a.n_classes])?,
    )?;
    d.set_item("oblique_ptr", a.oblique_ptr.into_pyarray(py))?;
    d.set_item("term_coef", a.term_coef.into_pyarray(py))?;
    d.set_item("term_ptr", a.term_ptr.into_pyarray(py))?;
    d.set_item("term_features", a.term_features.into_pyarray(py))?;
    d.set_item("n_features", a.n_features)?;
    Ok(d)
}

/// The rows of `x` as one row-major slice, after checking the column count against the tree.
pub fn matrix_for<'a, T: numpy::Element + Copy>(
    tree: &Tree,
    x: &'a PyReadonlyArray2<'_, T>,
) -> PyResult<Cow<'a, [T]>> {
    let cols = x.shape()[1];
    if cols != tree.n_features() {
        return Err(to_py(Error::Data(format!(
            "X has {cols} columns but the tree reads {} features",
            tree.n_features()
        ))));
    }
    // `as_slice` also takes a column-major array, whose slice is not row-major.
    Ok(match x.as_slice() {
        Ok(s) if x.is_c_contiguous() => Cow::Borrowed(s),
        _ => Cow::Owned(x.as_array().iter().copied().collect()),
    })
}

/// A matrix routed through a tree: float64 values, or category codes as the encoder gives
/// integer data (one or two bytes a cell).
pub enum RouteMatrix<'py> {
    /// float64 values.
    F64(PyReadonlyArray2<'py, f64>),
    /// `uint8` codes.
    U8(PyReadonlyArray2<'py, u8>),
    /// `uint16` codes.
    U16(PyReadonlyArray2<'py, u16>),
}

impl<'py> RouteMatrix<'py> {
    /// The matrix `x` as its array type reads: a derived extraction would try each variant in
    /// turn and build a Python error for each that fails (11 µs of an 18 µs route of monk1's
    /// codes).
    pub fn of(x: &Bound<'py, PyAny>) -> PyResult<Self> {
        if let Ok(a) = x.cast::<numpy::PyArray2<f64>>() {
            return Ok(RouteMatrix::F64(a.try_readonly()?));
        }
        if let Ok(a) = x.cast::<numpy::PyArray2<u8>>() {
            return Ok(RouteMatrix::U8(a.try_readonly()?));
        }
        if let Ok(a) = x.cast::<numpy::PyArray2<u16>>() {
            return Ok(RouteMatrix::U16(a.try_readonly()?));
        }
        Err(pyo3::exceptions::PyTypeError::new_err(
            "X must be a 2-D float64, uint8 or uint16 numpy array",
        ))
    }

    /// The tree's routes (`Walk::Route`: each row's reached and predicting node) or decision
    /// paths (`Walk::Paths`, CSR) of the rows, with the GIL released.
    pub fn walk(&self, py: Python<'_>, tree: &Tree, walk: Walk) -> PyResult<NodeLists> {
        match self {
            RouteMatrix::F64(x) => walk_rows(py, tree, x, walk),
            RouteMatrix::U8(x) => walk_rows(py, tree, x, walk),
            RouteMatrix::U16(x) => walk_rows(py, tree, x, walk),
        }
    }
}

/// What [`RouteMatrix::walk`] gives.
#[derive(Clone, Copy)]
pub enum Walk {
    /// [`Tree::route_rows`].
    Route,
    /// [`Tree::decision_paths`].
    Paths,
}

/// Two lists of node indices (per row, or CSR offsets and nodes).
pub type NodeLists = (Vec<usize>, Vec<usize>);

/// [`RouteMatrix::walk`] for one cell type.
fn walk_rows<T: optitree_core::tree::Cell + numpy::Element + Sync>(
    py: Python<'_>,
    tree: &Tree,
    x: &PyReadonlyArray2<'_, T>,
    walk: Walk,
) -> PyResult<NodeLists> {
    let rows = matrix_for(tree, x)?;
    let n_rows = x.as_array().nrows();
    Ok(py.detach(|| match walk {
        Walk::Route => tree.route_rows(rows.as_ref(), n_rows),
        Walk::Paths => tree.decision_paths(rows.as_ref(), n_rows),
    }))
}

/// Node indices as an int64 numpy array.
pub fn indices(py: Python<'_>, v: Vec<usize>) -> Bound<'_, PyArray1<i64>> {
    v.into_iter()
        .map(|i| i as i64)
        .collect::<Vec<_>>()
        .into_pyarray(py)
}

/// A matrix of category codes as numpy holds it: one byte a cell when every feature has at
/// most 256 values (a wide binarised table then takes an eighth of the memory, and the time to
/// fill and read it), two bytes for at most 65,536, else 64-bit integers.
#[derive(FromPyObject)]
pub enum CodeMatrix<'py> {
    /// `uint8` codes.
    U8(PyReadonlyArray2<'py, u8>),
    /// `uint16` codes.
    U16(PyReadonlyArray2<'py, u16>),
    /// `int64` codes (checked to be in `0..2^32`).
    I64(PyReadonlyArray2<'py, i64>),
}

impl CodeMatrix<'_> {
    /// `(n_rows, n_features)`.
    pub fn shape(&self) -> (usize, usize) {
        let s = match self {
            CodeMatrix::U8(a) => a.shape(),
            CodeMatrix::U16(a) => a.shape(),
            CodeMatrix::I64(a) => a.shape(),
        };
        (s[0], s[1])
    }

    /// The column-major copy (see [`column_major`]): bytes stay bytes.
    fn columns(&self) -> PyResult<Codes> {
        Ok(match self {
            // Every byte is a code: a row-major matrix is only transposed.
            CodeMatrix::U8(a) => match a.as_array().as_slice() {
                Some(cells) => transpose_bytes(cells, a.shape()[1]).into(),
                None => column_major(a, |&c| Some(c))?.into(),
            },
            CodeMatrix::U16(a) => column_major(a, |&c| Some(u32::from(c)))?.into(),
            CodeMatrix::I64(a) => column_major(a, |&c| u32::try_from(c).ok())?.into(),
        })
    }
}

/// The column-major copy of a code matrix (n_rows x n_features), every code checked: a plain
/// copy when numpy holds the matrix column by column (Fortran order, as the estimators build
/// binarised views), else a tiled transpose (read in place when contiguous); an error names
/// the first cell that is not a code.
fn column_major<T: numpy::Element + Copy + std::fmt::Display, C: Copy + Default>(
    codes: &PyReadonlyArray2<'_, T>,
    code: impl Fn(&T) -> Option<C>,
) -> PyResult<Vec<C>> {
    let arr = codes.as_array();
    let converted = match (arr.as_slice(), arr.t().as_slice()) {
        (None, Some(by_column)) => codes_of_columns(by_column, arr.nrows(), code),
        (by_row, _) => {
            let cells: Cow<'_, [T]> = match by_row {
                Some(cells) => cells.into(),
                None => arr.iter().copied().collect::<Vec<_>>().into(),
            };
            column_major_codes(&cells, arr.ncols(), code)
        }
    };
    converted.map_err(|(r, f)| {
        to_py(Error::Data(format!(
            "feature {f} has code {} at row {r}; codes must be integers in 0..2^32",
            arr[[r, f]]
        )))
    })
}

/// The checked core table of category codes (n_rows x n_features) and integer labels.
pub fn table(
    codes: &CodeMatrix<'_>,
    labels: &PyReadonlyArray1<'_, i64>,
    n_classes: Option<usize>,
    n_values: Option<&[usize]>,
    weights: Option<&PyReadonlyArray1<'_, f64>>,
) -> PyResult<Table> {
    let (n_rows, n_features) = codes.shape();
    let columns = codes.columns()?;
    let labels_arr = labels.as_array();
    if labels_arr.len() != n_rows {
        return Err(to_py(Error::Data(format!(
            "X has {n_rows} rows but y has {} labels",
            labels_arr.len()
        ))));
    }
    let mut y = Vec::with_capacity(n_rows);
    for (r, &l) in labels_arr.iter().enumerate() {
        y.push(u32::try_from(l).map_err(|_| {
            to_py(Error::Data(format!(
                "label {l} at row {r} is not a class code in 0..2^32"
            )))
        })?);
    }
    let w = weights.map(|w| w.as_array().to_vec());
    Table::new(columns, n_features, y, n_values, n_classes, w).into_py()
}

/// Statistics as an ordered dict of ints and floats.
pub fn stats_to_py<'py>(py: Python<'py>, stats: &Stats) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (name, v) in stats.iter() {
        match v {
            StatValue::Count(c) => d.set_item(name, c)?,
            StatValue::Real(x) => d.set_item(name, x)?,
        }
    }
    Ok(d)
}
