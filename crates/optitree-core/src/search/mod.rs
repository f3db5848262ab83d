//! What every search shares: the budget it runs under, the outcome it returns, its statistics and
//! a memory-accounted cache. Solvers build on these and never on each other.

pub mod arena;
pub mod budget;
pub mod cache;
pub mod fork;
pub mod huge_pages;
pub mod outcome;
pub mod prefetch;
pub mod progress;
pub mod rng;
pub mod stats;
pub mod tagged_ids;

pub use arena::Arena;
pub use budget::{Budget, CancelFlag};
pub use cache::BoundedCache;
pub use fork::Fork;
pub use outcome::{Outcome, Status};
pub use prefetch::prefetch;
pub use progress::{ProgressBoard, Snapshot};
pub use rng::SplitMix;
pub use stats::Stats;
pub use tagged_ids::TaggedIds;
