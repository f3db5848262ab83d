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

use optitree_core::search::CancelFlag;

const POLL: Duration = Duration::from_millis(20);

/// Runs `work` off the GIL; on Ctrl-C raises `cancel` and still returns the work's result.
pub fn run<T: Send>(
    py: Python<'_>,
    cancel: &CancelFlag,
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
        }
        let out = py.detach(|| worker.join()).map_err(|_| {
            crate::errors::to_py(optitree_core::Error::Internal(
                "optitree internal error: the search thread panicked; please report this".into(),
            ))
        })?;
        match pending {
            Some(e) => Err(e),
            None => Ok(out),
        }
    })
}
