//! The one error type of the core. The binding crate maps each variant to exactly one Python class.
//!
//! Invariant: every message names the offending parameter, column, row or node and says what is allowed.

use std::fmt;

/// An error the core reports instead of panicking.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// The data are unusable (shape, codes, labels, weights, tree arrays).
    Data(String),
    /// A parameter is outside its allowed range.
    InvalidParameter(String),
    /// A broken internal invariant: a bug in optitree, never the user's fault.
    Internal(String),
}

/// Result alias used throughout the core.
pub type Result<T> = std::result::Result<T, Error>;

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Data(m) | Error::InvalidParameter(m) | Error::Internal(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for Error {}

/// Shorthand for `Err(Error::Data(format!(...)))`.
#[macro_export]
macro_rules! data_err {
    ($($arg:tt)*) => { Err($crate::error::Error::Data(format!($($arg)*))) };
}

/// Shorthand for `Err(Error::InvalidParameter(format!(...)))`.
#[macro_export]
macro_rules! param_err {
    ($($arg:tt)*) => { Err($crate::error::Error::InvalidParameter(format!($($arg)*))) };
}
