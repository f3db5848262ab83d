//! A board on which a running search posts its latest figures, so that another thread (the
//! Python binding's watcher, a command-line progress line) can show them without slowing the
//! search down: the solver posts every few thousand iterations, readers take a copy.

use std::sync::{Arc, Mutex};

/// The figures of one moment of a search.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Snapshot {
    /// Selection passes so far.
    pub iterations: u64,
    /// Nodes expanded so far.
    pub expansions: u64,
    /// Value of the best solution found so far.
    pub lower_bound: f64,
    /// Proven bound on the best achievable value.
    pub upper_bound: f64,
    /// Subproblems held in the cache.
    pub cached: u64,
    /// Bytes the solver currently holds (its own accounting).
    pub memory_bytes: u64,
    /// Seconds since the search started.
    pub seconds: f64,
    /// What the solver is doing, when not searching (`""`): `"rules"` while a proper-tree
    /// solve generates its candidate rules (`iterations` of `expansions` subsets visited,
    /// `cached` rules kept).
    pub phase: &'static str,
}

/// Shared, cheap-to-clone handle to the latest [`Snapshot`].
#[derive(Debug, Clone, Default)]
pub struct ProgressBoard(Arc<Mutex<Option<Snapshot>>>);

impl ProgressBoard {
    /// An empty board.
    pub fn new() -> Self {
        Self::default()
    }

    /// Posts the latest figures (replacing the previous ones).
    pub fn post(&self, snapshot: Snapshot) {
        // A poisoned lock only means a reader panicked mid-copy; the data is plain old data.
        let mut slot = self.0.lock().unwrap_or_else(|p| p.into_inner());
        *slot = Some(snapshot);
    }

    /// The latest figures, if any were posted.
    pub fn read(&self) -> Option<Snapshot> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readers_see_the_latest_post() {
        let board = ProgressBoard::new();
        assert_eq!(board.read(), None);
        let reader = board.clone();
        board.post(Snapshot {
            iterations: 3,
            ..Snapshot::default()
        });
        board.post(Snapshot {
            iterations: 7,
            ..Snapshot::default()
        });
        assert_eq!(reader.read().map(|s| s.iterations), Some(7));
    }
}
