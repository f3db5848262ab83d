//! The limits a search runs under: a deadline, a node (expansion) limit, a memory limit and a
//! cancel flag that another thread (the Python binding, on Ctrl-C) can raise.
//!
//! Invariant: [`Budget::check`] is cheap enough to call at every node, and once it has reported a
//! stop reason it keeps reporting the same one, so a solver can unwind at its own pace.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use super::outcome::Status;
use crate::error::Result;
use crate::param_err;

/// A flag shared between a running search and whoever may want to stop it.
///
/// It can also carry a *poll*: a check run on one thread (the caller's) every so often while
/// the search asks whether it was cancelled, which may raise the flag itself. The Python binding
/// runs single-threaded searches on the calling thread this way, polling for Ctrl-C, instead of
/// starting a thread per call (a thread cost a small fit more than the fit itself).
#[derive(Clone, Default)]
pub struct CancelFlag(Arc<Shared>);

#[derive(Default)]
struct Shared {
    raised: AtomicBool,
    /// Calls to `is_cancelled` since the flag was made; the poll is considered every
    /// [`POLL_CALLS`] calls, so that most calls cost one atomic increment.
    calls: AtomicU32,
    poll: Mutex<Option<Poll>>,
}

struct Poll {
    owner: ThreadId,
    every: Duration,
    last: Instant,
    check: Box<dyn FnMut() -> bool + Send>,
}

/// How many `is_cancelled` calls pass between two looks at the clock for the poll.
const POLL_CALLS: u32 = 64;

impl std::fmt::Debug for CancelFlag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("CancelFlag")
            .field(&self.0.raised.load(Ordering::Relaxed))
            .finish()
    }
}

impl CancelFlag {
    /// A fresh, lowered flag.
    pub fn new() -> Self {
        Self::default()
    }
    /// Asks the search to stop as soon as it can.
    pub fn cancel(&self) {
        self.0.raised.store(true, Ordering::Relaxed);
    }
    /// Whether someone asked to stop (running the poll first when it is due on this thread).
    pub fn is_cancelled(&self) -> bool {
        let calls = self.0.calls.fetch_add(1, Ordering::Relaxed);
        if calls % POLL_CALLS == 0 && !self.0.raised.load(Ordering::Relaxed) {
            self.poll_if_due();
        }
        self.0.raised.load(Ordering::Relaxed)
    }

    /// Runs `check` on the calling thread about every `every` while a search on this thread asks
    /// [`CancelFlag::is_cancelled`]; `check` returning true raises the flag. Other threads never
    /// run it. Replaces any earlier poll.
    pub fn poll_on_this_thread(
        &self,
        every: Duration,
        check: impl FnMut() -> bool + Send + 'static,
    ) {
        let poll = Poll {
            owner: std::thread::current().id(),
            every,
            last: Instant::now(),
            check: Box::new(check),
        };
        *self.0.poll.lock().unwrap_or_else(|p| p.into_inner()) = Some(poll);
    }

    /// Removes the poll (dropping it on the calling thread).
    pub fn stop_polling(&self) {
        let poll = self.0.poll.lock().unwrap_or_else(|p| p.into_inner()).take();
        drop(poll);
    }

    fn poll_if_due(&self) {
        // Another thread holding the lock is not the owner: nothing to do here.
        let Ok(mut guard) = self.0.poll.try_lock() else {
            return;
        };
        let Some(poll) = guard.as_mut() else {
            return;
        };
        if poll.owner != std::thread::current().id() || poll.last.elapsed() < poll.every {
            return;
        }
        poll.last = Instant::now();
        if (poll.check)() {
            self.cancel();
        }
    }
}

/// Time, node and memory limits plus cancellation for one search.
#[derive(Debug, Clone)]
pub struct Budget {
    start: Instant,
    deadline: Option<Instant>,
    node_limit: Option<u64>,
    memory_limit: Option<usize>,
    cancel: CancelFlag,
    /// The first stop reason reported; shared-safe so worker threads can check one budget.
    stopped: OnceLock<Status>,
}

impl Budget {
    /// A budget without limits, started now.
    pub fn unlimited() -> Self {
        Budget {
            start: Instant::now(),
            deadline: None,
            node_limit: None,
            memory_limit: None,
            cancel: CancelFlag::new(),
            stopped: OnceLock::new(),
        }
    }

    /// A budget with the given limits (seconds, expansions, bytes), started now.
    pub fn new(
        time_limit: Option<f64>,
        node_limit: Option<u64>,
        memory_limit: Option<usize>,
        cancel: CancelFlag,
    ) -> Result<Self> {
        let start = Instant::now();
        let deadline = match time_limit {
            None => None,
            // 0 is a deadline already passed: the search returns its first tree.
            Some(t) if !(t.is_finite() && t >= 0.0) => {
                return param_err!("time_limit must be a number of seconds >= 0, got {t}")
            }
            Some(t) => Some(start + Duration::from_secs_f64(t.min(1e9))),
        };
        if node_limit == Some(0) {
            return param_err!("node_limit must be at least 1, got 0");
        }
        if memory_limit == Some(0) {
            return param_err!("memory_limit must be a positive number of bytes, got 0");
        }
        Ok(Budget {
            start,
            deadline,
            node_limit,
            memory_limit,
            cancel,
            stopped: OnceLock::new(),
        })
    }

    /// Seconds since the budget started.
    pub fn elapsed(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    /// The memory limit in bytes, if any (solvers size their caches with it).
    pub fn memory_limit(&self) -> Option<usize> {
        self.memory_limit
    }

    /// The cancel flag (clone it to cancel from elsewhere).
    pub fn cancel_flag(&self) -> &CancelFlag {
        &self.cancel
    }

    /// The reason [`Budget::check`] has reported, if it has (without looking at the clock).
    pub fn stopped(&self) -> Option<Status> {
        self.stopped.get().copied()
    }

    /// Why the search must stop now, if it must: given the nodes expanded so far and the bytes the
    /// solver currently holds. Cancellation wins over limits; the first reason found sticks.
    pub fn check(&self, nodes: u64, memory_bytes: usize) -> Option<Status> {
        if let Some(&s) = self.stopped.get() {
            return Some(s);
        }
        let reason = if self.cancel.is_cancelled() {
            Some(Status::Interrupted)
        } else if self.node_limit.is_some_and(|l| nodes >= l) {
            Some(Status::NodeLimit)
        } else if self.memory_limit.is_some_and(|l| memory_bytes > l) {
            Some(Status::MemoryLimit)
        } else if self.deadline.is_some_and(|d| Instant::now() >= d) {
            Some(Status::TimeLimit)
        } else {
            None
        };
        reason.map(|r| *self.stopped.get_or_init(|| r))
    }
}

/// Busy work that only stops when the budget says so: the binding exposes it to test time limits,
/// cancellation and Ctrl-C handling end to end without depending on any solver.
pub fn spin_until_stopped(budget: &Budget) -> (Status, u64) {
    let mut nodes = 0u64;
    loop {
        if let Some(s) = budget.check(nodes, 0) {
            return (s, nodes);
        }
        nodes += 1;
        std::hint::spin_loop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_validated() {
        for t in [-1.0, f64::NAN, f64::INFINITY] {
            let e = Budget::new(Some(t), None, None, CancelFlag::new()).unwrap_err();
            assert!(e.to_string().contains("time_limit"), "{e}");
        }
        // Zero is a deadline already passed, not an error.
        let b = Budget::new(Some(0.0), None, None, CancelFlag::new()).expect("valid");
        assert_eq!(b.check(0, 0), Some(Status::TimeLimit));
        assert!(Budget::new(None, Some(0), None, CancelFlag::new()).is_err());
        assert!(Budget::new(None, None, Some(0), CancelFlag::new()).is_err());
    }

    #[test]
    fn each_limit_reports_its_own_status() {
        let b = Budget::new(None, Some(10), None, CancelFlag::new()).expect("valid");
        assert_eq!(b.check(9, 0), None);
        assert_eq!(b.check(10, 0), Some(Status::NodeLimit));
        let b = Budget::new(None, None, Some(100), CancelFlag::new()).expect("valid");
        assert_eq!(b.check(0, 101), Some(Status::MemoryLimit));
        assert_eq!(
            b.check(0, 0),
            Some(Status::MemoryLimit),
            "a stop reason sticks"
        );
        let b = Budget::new(Some(0.01), None, None, CancelFlag::new()).expect("valid");
        assert_eq!(spin_until_stopped(&b).0, Status::TimeLimit);
        assert!(b.elapsed() >= 0.01);
    }

    #[test]
    fn cancellation_from_another_thread_stops_the_search() {
        let flag = CancelFlag::new();
        let b = Budget::new(None, None, None, flag.clone()).expect("valid");
        let canceller = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            flag.cancel();
        });
        assert_eq!(spin_until_stopped(&b).0, Status::Interrupted);
        canceller.join().expect("canceller thread");
    }

    /// A poll runs on its own thread only, about as often as asked, and can stop the search.
    #[test]
    fn a_poll_on_the_searching_thread_can_stop_it() {
        let flag = CancelFlag::new();
        let polls = Arc::new(AtomicU32::new(0));
        let counted = Arc::clone(&polls);
        flag.poll_on_this_thread(Duration::from_millis(1), move || {
            counted.fetch_add(1, Ordering::Relaxed) >= 4
        });
        // Another thread asking never runs it.
        let other = flag.clone();
        std::thread::spawn(move || {
            let start = Instant::now();
            while start.elapsed() < Duration::from_millis(20) {
                assert!(!other.is_cancelled());
            }
        })
        .join()
        .expect("other thread");
        assert_eq!(polls.load(Ordering::Relaxed), 0);
        let b = Budget::new(None, None, None, flag.clone()).expect("valid");
        assert_eq!(spin_until_stopped(&b).0, Status::Interrupted);
        assert_eq!(polls.load(Ordering::Relaxed), 5);
        flag.stop_polling();
        let fresh = CancelFlag::new();
        fresh.poll_on_this_thread(Duration::ZERO, || false);
        fresh.stop_polling();
        assert!(!(0..1000).any(|_| fresh.is_cancelled()));
    }
}
