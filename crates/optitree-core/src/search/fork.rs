//! A second thread for a search that splits one step's work in two (`n_jobs = 2`).
//!
//! A search step lasts tens of microseconds (a MAPTree expansion on mushroom: ~50 µs), far too
//! short to start a thread for, or to wake a sleeping one through the kernel each time. So the
//! thread lives as long as the search and, between steps, waits spinning for a while before it
//! parks: the main thread hands it a closure, runs its own part, and waits for the closure to
//! finish. The closure may borrow from the caller's stack (like `std::thread::scope`), because
//! [`Fork::join`] never returns, nor unwinds, before the worker is done with it.

use std::any::Any;
use std::cell::UnsafeCell;
use std::hint::spin_loop;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long the worker spins for the next job before it parks: longer than the gap between two
/// steps of a busy search, so that it is never woken through the kernel while the search runs.
const SPIN: Duration = Duration::from_micros(200);

/// A wait that spins for [`SPIN`] before it turns to something gentler.
struct Spin {
    since: Instant,
    spins: u32,
}

impl Spin {
    fn new() -> Self {
        Spin {
            since: Instant::now(),
            spins: 0,
        }
    }

    /// Spins once and returns true while the wait is young; false once it has lasted
    /// [`SPIN`] (the clock is read every 64 spins).
    fn spun(&mut self) -> bool {
        self.spins = self.spins.wrapping_add(1);
        let young = self.spins % 64 != 0 || self.since.elapsed() < SPIN;
        if young {
            spin_loop();
        }
        young
    }
}

/// A job as the worker sees it: its borrows erased (see [`Fork::join`]).
type Job = *mut (dyn FnMut() + Send + 'static);

/// What the two threads share.
struct Shared {
    /// Number of the last job posted, and of the last one finished.
    posted: AtomicU64,
    finished: AtomicU64,
    quit: AtomicBool,
    /// The posted job. Written by the main thread only while no job is running (before
    /// `posted` rises), read by the worker only after it saw `posted` rise.
    job: UnsafeCell<Option<Job>>,
    /// A panic of the worker's part, re-raised on the main thread.
    panic: Mutex<Option<Box<dyn Any + Send>>>,
}

// SAFETY: `job` is handed over through `posted`/`finished` (release/acquire), so the two threads
// never access it at the same time; the job it points to is `Send`. Everything else is atomic
// or locked.
#[allow(unsafe_code)]
unsafe impl Sync for Shared {}
#[allow(unsafe_code)]
unsafe impl Send for Shared {}

/// The worker thread of a two-thread search.
pub struct Fork {
    shared: Arc<Shared>,
    worker: Option<JoinHandle<()>>,
    jobs: u64,
}

impl Fork {
    /// Starts the worker thread; `None` when the system refuses one (the search then runs on
    /// its own thread alone, with the same result).
    pub fn new() -> Option<Fork> {
        let shared = Arc::new(Shared {
            posted: AtomicU64::new(0),
            finished: AtomicU64::new(0),
            quit: AtomicBool::new(false),
            job: UnsafeCell::new(None),
            panic: Mutex::new(None),
        });
        let theirs = Arc::clone(&shared);
        let worker = std::thread::Builder::new()
            .name("optitree-fork".into())
            .spawn(move || serve(&theirs))
            .ok()?;
        Some(Fork {
            shared,
            worker: Some(worker),
            jobs: 0,
        })
    }

    /// Runs `theirs` on the worker thread while `mine` runs on this one; returns `mine`'s
    /// result once both are done. A panic in either is re-raised here, after both are done.
    #[allow(unsafe_code)]
    pub fn join<R>(&mut self, mut theirs: impl FnMut() + Send, mine: impl FnOnce() -> R) -> R {
        let job: *mut (dyn FnMut() + Send + '_) = &mut theirs;
        // SAFETY: only the lifetime is erased. The worker calls the job before `finished`
        // reaches this job's number, and this function waits for that before it returns or
        // re-raises a panic, so every borrow `theirs` holds outlives its use.
        let job: Job = unsafe { std::mem::transmute::<*mut (dyn FnMut() + Send + '_), Job>(job) };
        // SAFETY: no job runs now (the previous `join` waited for its own), so the worker does
        // not read the slot.
        unsafe { *self.shared.job.get() = Some(job) };
        self.jobs += 1;
        self.shared.posted.store(self.jobs, Ordering::Release);
        if let Some(worker) = &self.worker {
            worker.thread().unpark(); // an atomic store unless the worker sleeps
        }
        let result = catch_unwind(AssertUnwindSafe(mine));
        let mut spin = Spin::new();
        while self.shared.finished.load(Ordering::Acquire) < self.jobs {
            if spin.spun() {
                continue;
            }
            // Jobs run under `catch_unwind`, so the worker cannot die with one: never spin on a
            // thread that is gone (it no longer touches the job).
            let gone = self.worker.as_ref().is_none_or(|w| w.is_finished());
            assert!(!gone, "the fork's worker thread stopped");
            std::thread::yield_now(); // the worker may wait for this core
        }
        let panic = self
            .shared
            .panic
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take();
        if let Some(panic) = panic {
            resume_unwind(panic);
        }
        result.unwrap_or_else(|panic| resume_unwind(panic))
    }
}

impl Drop for Fork {
    fn drop(&mut self) {
        self.shared.quit.store(true, Ordering::Release);
        if let Some(worker) = self.worker.take() {
            worker.thread().unpark();
            let _ = worker.join();
        }
    }
}

/// The worker's loop: waits for a job (spinning, then parked), runs it, reports it done.
#[allow(unsafe_code)]
fn serve(shared: &Shared) {
    let mut done = 0;
    loop {
        let mut spin = Spin::new();
        while shared.posted.load(Ordering::Acquire) == done {
            if shared.quit.load(Ordering::Acquire) {
                return;
            }
            if !spin.spun() {
                // Unpark tokens are not lost: a job posted before this parks returns at once.
                std::thread::park();
            }
        }
        done += 1;
        // SAFETY: the main thread wrote the slot before raising `posted` (acquired above) and
        // does not touch it, nor the job, until `finished` reaches `done`. Taken, so that no
        // pointer to a finished job stays behind.
        let job = unsafe { (*shared.job.get()).take() };
        if let Some(job) = job {
            // SAFETY: see `Fork::join`: the job outlives this call.
            let run = catch_unwind(AssertUnwindSafe(|| unsafe { (*job)() }));
            if let Err(panic) = run {
                *shared
                    .panic
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(panic);
            }
        }
        shared.finished.store(done, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::Fork;

    #[test]
    fn both_parts_run_and_borrow_from_the_caller() {
        let mut fork = Fork::new().expect("a thread");
        let data: Vec<u64> = (0..1000).collect();
        for round in 0..1000u64 {
            let mut theirs = 0;
            let mine = fork.join(
                || theirs = data[1..].iter().step_by(2).map(|x| x + round).sum::<u64>(),
                || data.iter().step_by(2).map(|x| x + round).sum::<u64>(),
            );
            assert_eq!(mine + theirs, data.iter().map(|x| x + round).sum::<u64>());
        }
    }

    #[test]
    fn a_panic_on_either_side_reaches_the_caller_and_the_fork_goes_on() {
        let mut fork = Fork::new().expect("a thread");
        let theirs = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            fork.join(|| panic!("worker"), || 1)
        }));
        assert!(theirs.is_err());
        let mine = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            fork.join(|| {}, || panic!("main"))
        }));
        assert!(mine.is_err());
        let mut seen = false;
        assert_eq!(fork.join(|| seen = true, || 2), 2);
        assert!(seen);
    }
}
