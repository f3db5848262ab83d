//! The one mapping from core errors to the Python exception classes declared in
//! `optitree/exceptions.py`. Exhaustive on purpose: a new core variant must be mapped here.

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyType;

use optitree_core::Error;

fn exception_class<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyType>> {
    let module = py.import("optitree.exceptions")?;
    module
        .getattr(name)?
        .cast_into::<PyType>()
        .map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// Converts a core error into the matching Python exception.
pub fn to_py(err: Error) -> PyErr {
    let (class, message) = match err {
        Error::Data(m) => ("DataError", m),
        Error::InvalidParameter(m) => ("InvalidParameterError", m),
        Error::Internal(m) => ("InternalError", m),
    };
    Python::attach(|py| match exception_class(py, class) {
        Ok(cls) => PyErr::from_type(cls, message),
        Err(e) => e,
    })
}

/// `core::Result<T>` → `PyResult<T>` through [`to_py`].
pub trait IntoPy<T> {
    /// Maps the error, keeps the value.
    fn into_py(self) -> PyResult<T>;
}

impl<T> IntoPy<T> for Result<T, Error> {
    fn into_py(self) -> PyResult<T> {
        self.map_err(to_py)
    }
}
