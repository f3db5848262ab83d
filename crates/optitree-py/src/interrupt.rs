//! Running a long core call with the GIL released while the calling thread keeps watching for
//! signals, so that Ctrl-C stops the search promptly and returns its best result.
//!
//! Two ways. [`run_here`], for searches that run on one thread: the work runs on the calling
//! thread (the one Python delivers signals to), and the search's own cancellation checks poll,
//! every few milliseconds, the Python signal handlers and the progress callback (see
//! [`CancelFlag::poll_on_this_thread`]). [`run`] and [`run_reporting`], for work that spreads over
//! threads of its own: the work runs on a scoped worker thread while the caller's thread wakes
//! every few milliseconds to do the same. Starting and joining that thread cost a small fit on
//! our 2-core virtual machine about 0.2 ms, more than the fit itself, hence the first way.
//!
//! Either way, on KeyboardInterrupt the search's cancel flag is raised; the search then returns
//! its incumbent with status `interrupted`, which the estimator reports with a warning. Any other
//! exception raised by a signal handler or the progress callback is re-raised once the work has
//! finished.

use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use pyo3::exceptions::PyKeyboardInterrupt;
use pyo3::prelude::*;

use optitree_core::search::{CancelFlag, ProgressBoard};

const POLL: Duration = Duration::from_millis(20);
/// How often progress is handed to the Python callback.
const REPORT_EVERY: Duration = Duration::from_millis(500);

/// Hands a search's latest figures to a Python callable (with the GIL held, on the caller's
/// thread), at most every [`REPORT_EVERY`].
pub struct Reporter {
    board: ProgressBoard,
    callback: Py<PyAny>,
    last: std::time::Instant,
    reported: bool,
}

impl Reporter {
    /// Reports the figures posted on `board` to `callback(dict)`.
    pub fn new(board: ProgressBoard, callback: Bound<'_, PyAny>) -> Self {
        Reporter {
            board,
            callback: callback.unbind(),
            last: std::time::Instant::now(),
            reported: false,
        }
    }

    fn report(&mut self, py: Python<'_>, force: bool) -> PyResult<()> {
        // Short searches stay silent; long ones also report their final figures.
        if (!force && self.last.elapsed() < REPORT_EVERY) || (force && !self.reported) {
            return Ok(());
        }
        self.reported = true;
        self.last = std::time::Instant::now();
        let Some(s) = self.board.read() else {
            return Ok(());
        };
        let d = pyo3::types::PyDict::new(py);
        d.set_item("iterations", s.iterations)?;
        d.set_item("expansions", s.expansions)?;
        d.set_item("lower_bound", s.lower_bound)?;
        d.set_item("upper_bound", s.upper_bound)?;
        d.set_item("cached", s.cached)?;
        d.set_item("memory_bytes", s.memory_bytes)?;
        d.set_item("seconds", s.seconds)?;
        d.set_item("phase", s.phase)?;
        self.callback.call1(py, (d,))?;
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
    mut reporter: Option<Reporter>,
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
            if watch(py, reporter.as_mut(), &mut pending) {
                cancel.cancel();
            }
        }
        let out = py.detach(|| worker.join()).map_err(|_| {
            crate::errors::to_py(optitree_core::Error::Internal(
                "optitree internal error: the search thread panicked; please report this".into(),
            ))
        })?;
        finish(py, out, reporter.as_mut(), pending)
    })
}

/// One look while the work runs: Python's signal handlers, then the progress report. Returns
/// whether the search must stop (on any exception); keeps the first exception other than
/// KeyboardInterrupt in `pending` (a KeyboardInterrupt becomes the status `interrupted`).
fn watch(py: Python<'_>, reporter: Option<&mut Reporter>, pending: &mut Option<PyErr>) -> bool {
    let mut stop = false;
    if let Err(e) = py.check_signals() {
        stop = true;
        if !e.is_instance_of::<PyKeyboardInterrupt>(py) {
            pending.get_or_insert(e);
        }
    }
    if let Some(Err(e)) = reporter.map(|r| r.report(py, false)) {
        stop = true;
        pending.get_or_insert(e);
    }
    stop
}

/// The work's result once it is done: reports the final figures, then raises what `pending`
/// holds, if anything.
fn finish<T>(
    py: Python<'_>,
    out: T,
    reporter: Option<&mut Reporter>,
    mut pending: Option<PyErr>,
) -> PyResult<T> {
    if let Some(Err(e)) = reporter.map(|r| r.report(py, true)) {
        pending.get_or_insert(e);
    }
    match pending {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// Runs `work` on the calling thread with the GIL released, for work that checks `cancel` from
/// that thread (single-threaded searches): each check may poll, every [`POLL`], the Python
/// signal handlers and `reporter` (see the module docs). Reports once more at the end.
pub fn run_here<T: Send>(
    py: Python<'_>,
    cancel: &CancelFlag,
    reporter: Option<Reporter>,
    work: impl FnOnce() -> T + Send,
) -> PyResult<T> {
    let pending: Arc<Mutex<Option<PyErr>>> = Arc::default();
    let reporter = Arc::new(Mutex::new(reporter));
    let (polled_pending, polled_reporter) = (Arc::clone(&pending), Arc::clone(&reporter));
    cancel.poll_on_this_thread(POLL, move || {
        Python::attach(|py| {
            let mut pending = polled_pending.lock().unwrap_or_else(|p| p.into_inner());
            let mut reporter = polled_reporter.lock().unwrap_or_else(|p| p.into_inner());
            watch(py, reporter.as_mut(), &mut pending)
        })
    });
    let out = py.detach(work);
    cancel.stop_polling();
    let pending = pending.lock().unwrap_or_else(|p| p.into_inner()).take();
    let mut reporter = reporter.lock().unwrap_or_else(|p| p.into_inner());
    finish(py, out, reporter.as_mut(), pending)
}
