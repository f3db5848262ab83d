//! What a search returns: its best solution, the status saying why it stopped, and proven bounds.
//!
//! Invariant: `lower_bound <= upper_bound` (up to floating error) and, when `status` is
//! [`Status::Optimal`], the two are equal.

use std::fmt;
use std::str::FromStr;

use super::stats::Stats;

/// Why a search stopped. The names are the same in Rust, Python, the CLI and JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    /// The returned solution is proven optimal.
    Optimal,
    /// The time limit was reached.
    TimeLimit,
    /// The node (expansion) limit was reached.
    NodeLimit,
    /// The memory limit was reached.
    MemoryLimit,
    /// The search was cancelled (Ctrl-C or the cancel flag).
    Interrupted,
    /// A heuristic builder that proves nothing.
    Greedy,
}

impl Status {
    /// Every status, in a fixed order.
    pub const ALL: [Status; 6] = [
        Status::Optimal,
        Status::TimeLimit,
        Status::NodeLimit,
        Status::MemoryLimit,
        Status::Interrupted,
        Status::Greedy,
    ];

    /// The shared name of the status.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Optimal => "optimal",
            Status::TimeLimit => "time_limit",
            Status::NodeLimit => "node_limit",
            Status::MemoryLimit => "memory_limit",
            Status::Interrupted => "interrupted",
            Status::Greedy => "greedy",
        }
    }

    /// Whether the status proves optimality.
    pub fn is_optimal(self) -> bool {
        self == Status::Optimal
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Status {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Status::ALL
            .into_iter()
            .find(|st| st.as_str() == s)
            .ok_or_else(|| {
                let names: Vec<_> = Status::ALL.iter().map(|s| s.as_str()).collect();
                format!("unknown status {s:?}; known: {}", names.join(", "))
            })
    }
}

/// The result of a search.
#[derive(Debug, Clone)]
pub struct Outcome<T> {
    /// The best solution found (the incumbent).
    pub solution: T,
    /// Why the search stopped.
    pub status: Status,
    /// Proven lower bound on the optimal objective.
    pub lower_bound: f64,
    /// Proven upper bound on the optimal objective.
    pub upper_bound: f64,
    /// Counters and timings.
    pub stats: Stats,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for s in Status::ALL {
            assert_eq!(s.as_str().parse::<Status>(), Ok(s));
        }
        assert!("done"
            .parse::<Status>()
            .unwrap_err()
            .contains("optimal, time_limit"));
    }
}
