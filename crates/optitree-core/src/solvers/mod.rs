//! The solvers. Each lives in its own module, depends only on `data`, `tree` and `search`, and
//! never on another solver: shared pieces move down into those layers.

pub mod branches;
pub mod maptree;
pub mod proper;
pub mod query;
pub mod stump;
