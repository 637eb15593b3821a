//! The thread behind [`super::eval_in_background`]: tapes run one at a time, in the order they
//! were submitted, each numbered (its "ticket", stored in its ops so that a later [`super::eval`]
//! waits for them instead of running them again).

extern crate std;

use alloc::collections::VecDeque;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use crate::array::Op;

struct Queue {
    tapes: VecDeque<(usize, Vec<Arc<Op>>)>,
    submitted: usize,
}

static QUEUE: Mutex<Queue> = Mutex::new(Queue { tapes: VecDeque::new(), submitted: 0 });
static WORK: Condvar = Condvar::new();
static DONE: Condvar = Condvar::new();
/// The number of the last tape that finished.
static COMPLETED: AtomicUsize = AtomicUsize::new(0);
/// How long a waiter spins on [`COMPLETED`] before it sleeps: a decode step's token is
/// usually a few hundred microseconds away, and a futex wake-up costs tens of them.
const SPIN: Duration = Duration::from_micros(200);

fn queue() -> MutexGuard<'static, Queue> {
    QUEUE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Numbers `tape`, marks its ops and hands it to the evaluator thread.
pub(super) fn submit(tape: Vec<Arc<Op>>) {
    if tape.is_empty() {
        return;
    }
    static STARTED: OnceLock<bool> = OnceLock::new();
    let started = *STARTED.get_or_init(|| std::thread::Builder::new().name("mlx-arm-eval".into()).spawn(evaluator).is_ok());
    if !started {
        // No thread to hand it to: evaluate here, as `eval` would.
        for op in tape {
            let _ = super::run(op);
        }
        return;
    }
    let mut q = queue();
    q.submitted += 1;
    let ticket = q.submitted;
    for op in &tape {
        op.ticket.store(ticket, Ordering::Release);
    }
    q.tapes.push_back((ticket, tape));
    drop(q);
    WORK.notify_one();
}

/// Returns once tape `ticket` (and so every earlier one) has run; at once for 0.
pub(super) fn wait_for(ticket: usize) {
    if ticket == 0 || COMPLETED.load(Ordering::Acquire) >= ticket {
        return;
    }
    let start = Instant::now();
    while start.elapsed() < SPIN {
        if COMPLETED.load(Ordering::Acquire) >= ticket {
            return;
        }
        core::hint::spin_loop();
    }
    let mut q = queue();
    while COMPLETED.load(Ordering::Acquire) < ticket {
        q = DONE.wait(q).unwrap_or_else(|e| e.into_inner());
    }
}

fn evaluator() {
    loop {
        let (ticket, tape) = {
            let mut q = queue();
            loop {
                if let Some(t) = q.tapes.pop_front() {
                    break t;
                }
                q = WORK.wait(q).unwrap_or_else(|e| e.into_inner());
            }
        };
        // A failed op marks its outputs failed (and so every op after it that reads them):
        // the error reaches whoever reads those arrays.
        for op in tape {
            let _ = super::run(op);
        }
        let q = queue();
        COMPLETED.store(ticket, Ordering::Release);
        drop(q);
        DONE.notify_all();
    }
}
