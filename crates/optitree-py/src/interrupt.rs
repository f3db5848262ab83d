//! Running a long core call with the GIL released while the calling thread keeps watching for
//! signals, so that Ctrl-C stops the search promptly and returns its best result.
//!
//! The work runs on a scoped worker thread. The caller's thread (the one Python delivers signals
//! to) wakes every few milliseconds, runs the Python signal handlers, and on KeyboardInterrupt
//! raises the search's cancel flag; the search then returns its incumbent with status
//! `interrupted`, which the estimator reports with a warning. Any other exception raised by a
//! signal handler is re-raised once the worker has finished.

use std::sync::{Condvar, Mutex};
use std::time::Duration;

use pyo3::exceptions::PyKeyboardInterrupt;
use pyo3::prelude::*;

use optitree_core::search::{CancelFlag, ProgressBoard};

const POLL: Duration = Duration::from_millis(20);
/// How often progress is handed to the Python callback.
const REPORT_EVERY: Duration = Duration::from_millis(500);

/// Hands a search's latest figures to a Python callable (with the GIL held, on the caller's
/// thread), at most every [`REPORT_EVERY`].
pub struct Reporter<'py> {
    board: ProgressBoard,
    callback: Bound<'py, PyAny>,
    last: std::time::Instant,
    reported: bool,
}

impl<'py> Reporter<'py> {
    /// Reports the figures posted on `board` to `callback(dict)`.
    pub fn new(board: ProgressBoard, callback: Bound<'py, PyAny>) -> Self {
        Reporter {
            board,
            callback,
            last: std::time::Instant::now(),
            reported: false,
        }
    }

    fn report(&mut self, force: bool) -> PyResult<()> {
        // Short searches stay silent; long ones also report their final figures.
        if (!force && self.last.elapsed() < REPORT_EVERY) || (force && !self.reported) {
            return Ok(());
        }
        self.reported = true;
        self.last = std::time::Instant::now();
        let Some(s) = self.board.read() else {
            return Ok(());
        };
        let d = pyo3::types::PyDict::new(self.callback.py());
        d.set_item("iterations", s.iterations)?;
        d.set_item("expansions", s.expansions)?;
        d.set_item("lower_bound", s.lower_bound)?;
        d.set_item("upper_bound", s.upper_bound)?;
        d.set_item("cached", s.cached)?;
        d.set_item("memory_bytes", s.memory_bytes)?;
        d.set_item("seconds", s.seconds)?;
        self.callback.call1((d,))?;
        Ok(())
    }
}

/// Runs `work` off the GIL; on Ctrl-C raises `cancel` and still returns the work's result.
pub fn run<T: Send>(
    py: Python<'_>,
    cancel: &CancelFlag,
    work: impl FnOnce() -> T + Send,
) -> PyResult<T> {
    run_reporting(py, cancel, None, work)
}

/// [`run`], also reporting progress through `reporter` while the work runs and once at the end.
/// An exception raised by the progress callback cancels the search and is re-raised.
pub fn run_reporting<T: Send>(
    py: Python<'_>,
    cancel: &CancelFlag,
    mut reporter: Option<Reporter<'_>>,
    work: impl FnOnce() -> T + Send,
) -> PyResult<T> {
    let done = (Mutex::new(false), Condvar::new());
    let done_ref = &done;
    std::thread::scope(|scope| {
        let worker = scope.spawn(move || {
            // Signal completion even if `work` panics, so the watcher never waits forever.
            struct Notify<'a>(&'a (Mutex<bool>, Condvar));
            impl Drop for Notify<'_> {
                fn drop(&mut self) {
                    let mut flag = self.0 .0.lock().unwrap_or_else(|p| p.into_inner());
                    *flag = true;
                    self.0 .1.notify_all();
                }
            }
            let _notify = Notify(done_ref);
            work()
        });
        let mut pending: Option<PyErr> = None;
        loop {
            let finished = py.detach(|| {
                let flag = done.0.lock().unwrap_or_else(|p| p.into_inner());
                let (flag, _) = done
                    .1
                    .wait_timeout_while(flag, POLL, |d| !*d)
                    .unwrap_or_else(|p| p.into_inner());
                *flag
            });
            if finished {
                break;
            }
            if let Err(e) = py.check_signals() {
                cancel.cancel();
                if !e.is_instance_of::<PyKeyboardInterrupt>(py) && pending.is_none() {
                    pending = Some(e);
                }
            }
            if let Some(Err(e)) = reporter.as_mut().map(|r| r.report(false)) {
                cancel.cancel();
                pending.get_or_insert(e);
            }
        }
        let out = py.detach(|| worker.join()).map_err(|_| {
            crate::errors::to_py(optitree_core::Error::Internal(
                "optitree internal error: the search thread panicked; please report this".into(),
            ))
        })?;
        if let Some(Err(e)) = reporter.as_mut().map(|r| r.report(true)) {
            pending.get_or_insert(e);
        }
        match pending {
            Some(e) => Err(e),
            None => Ok(out),
        }
    })
}
