//! optitree-core: the pure-Rust heart of optitree.
//!
//! Layers, each depending only on those above it in this list:
//! - [`data`]: bitsets and the compact categorical dataset (per-(feature, value) and per-class row sets);
//! - [`tree`]: the one tree model every solver returns and every exporter reads;
//! - [`search`]: what all searches share: budget (time, nodes, memory, cancel), outcome, statistics, cache;
//! - [`solvers`]: the solvers, which never depend on each other.
//!
//! Nothing here knows about Python; the binding crate converts and maps errors.

pub mod data;
pub mod error;
pub mod math;
pub mod search;
pub mod solvers;
pub mod tree;

#[cfg(test)]
pub mod oracle;

pub use error::{Error, Result};
