//! Starting a run's worker threads and joining them, with a watchdog for a side that hangs.
use super::worker::{Job, ThreadSample, Worker};
use super::WORKER_STACK;
use crate::transport::Endpoint;
use std::io;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Running workers, and their endpoints for the watchdog.
pub type Started = (Vec<JoinHandle<ThreadSample>>, Vec<Arc<Endpoint>>);

/// Starts one named thread per worker.
pub fn spawn(workers: Vec<(Worker, Job)>) -> io::Result<Started> {
    let mut endpoints = Vec::with_capacity(workers.len());
    let mut handles = Vec::with_capacity(workers.len());
    for (worker, job) in workers {
        endpoints.push(worker.endpoint.clone());
        let name = format!("bytepath-{}-{:?}", worker.flow, worker.role).to_lowercase();
        let handle = std::thread::Builder::new()
            .name(name)
            .stack_size(WORKER_STACK)
            .spawn(move || worker.run(job))?;
        handles.push(handle);
    }
    Ok((handles, endpoints))
}

/// Joins every worker; after `deadline`, shuts their sockets down so blocked calls return.
pub(crate) fn collect(
    handles: Vec<JoinHandle<ThreadSample>>,
    endpoints: &[Arc<Endpoint>],
    deadline: Instant,
) -> (Vec<ThreadSample>, bool) {
    let mut fired = false;
    while handles.iter().any(|h| !h.is_finished()) {
        if Instant::now() > deadline {
            for ep in endpoints {
                ep.abort();
            }
            fired = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let samples = handles.into_iter().filter_map(|h| h.join().ok()).collect();
    (samples, fired)
}
