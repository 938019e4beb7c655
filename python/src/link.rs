//! The remote client's transport (`ssx.connect`): a Zenoh session in client mode, the
//! daemon's control keys (`P/control/in` out, `P/control/out` in) and a publisher per command
//! key. Waiting for an answer releases the GIL and takes no Python callback on Zenoh's threads.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use crossbeam::channel::{Receiver, RecvTimeoutError, bounded};
use pyo3::exceptions::{PyConnectionError, PyTimeoutError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use zenoh::Wait;
use zenoh::bytes::Encoding;
use zenoh::pubsub::{Publisher, Subscriber};

/// How long `ask` looks for an answer before it blocks.
const SPIN: Duration = Duration::from_micros(400);

/// A connection to one daemon's control keys.
#[pyclass(module = "ssx._ssx")]
pub struct Link {
    session: zenoh::Session,
    prefix: String,
    send: Publisher<'static>,
    answers: Receiver<(Vec<u8>, bool)>,
    _sub: Subscriber<()>,
    commands: Mutex<HashMap<String, Publisher<'static>>>,
}

fn zerr(what: &str) -> impl Fn(zenoh::Error) -> PyErr + '_ {
    move |e| PyConnectionError::new_err(format!("{what}: {e}"))
}

#[pymethods]
impl Link {
    /// Opens a client session to `endpoint` (retrying until `timeout` seconds, while a daemon
    /// starts) and declares the control keys under `prefix`.
    #[new]
    fn new(py: Python<'_>, endpoint: &str, prefix: &str, timeout: f64) -> PyResult<Self> {
        let mut conf = zenoh::Config::default();
        let set = |c: &mut zenoh::Config, k: &str, v: String| {
            c.insert_json5(k, &v)
                .map_err(|e| PyValueError::new_err(format!("zenoh {k} = {v}: {e}")))
        };
        set(&mut conf, "mode", "\"client\"".into())?;
        set(
            &mut conf,
            "connect/endpoints",
            serde_json::to_string(&[endpoint]).expect("a string list"),
        )?;
        set(&mut conf, "scouting/multicast/enabled", "false".into())?;
        let prefix = prefix.trim_end_matches('/').to_string();
        let deadline = std::time::Instant::now() + Duration::from_secs_f64(timeout.max(0.0));
        let session = py.detach(|| {
            loop {
                match zenoh::open(conf.clone()).wait() {
                    Ok(s) => return Ok(s),
                    Err(e) if std::time::Instant::now() > deadline => {
                        return Err(PyConnectionError::new_err(format!(
                            "cannot reach a daemon at {endpoint}: {e}"
                        )));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(100)),
                }
            }
        })?;
        let (tx, answers) = bounded(64);
        let sub = session
            .declare_subscriber(format!("{prefix}/control/out"))
            .callback(move |s| {
                let binary = *s.encoding() == Encoding::APPLICATION_OCTET_STREAM;
                let _ = tx.try_send((s.payload().to_bytes().into_owned(), binary));
            })
            .wait()
            .map_err(zerr("subscribe to the control answers"))?;
        // Block, not Zenoh's default Drop: a command dropped on a congested queue would leave
        // its asker waiting for an answer that never comes.
        let send = session
            .declare_publisher(format!("{prefix}/control/in"))
            .express(true)
            .congestion_control(zenoh::qos::CongestionControl::Block)
            .wait()
            .map_err(zerr("declare the control publisher"))?;
        Ok(Link {
            session,
            prefix,
            send,
            answers,
            _sub: sub,
            commands: Mutex::default(),
        })
    }

    /// Sends a control command and waits up to `timeout` seconds for the next answer:
    /// (bytes, whether it is binary).
    fn ask<'py>(
        &self,
        py: Python<'py>,
        command: &str,
        timeout: f64,
    ) -> PyResult<(Bound<'py, PyBytes>, bool)> {
        let (bytes, binary) = py.detach(|| {
            self.send
                .put(command)
                .wait()
                .map_err(zerr("send the control command"))?;
            // A lockstep answer comes within a few hundred microseconds: look for it without
            // sleeping for a while first (waking a blocked thread costs tens of microseconds
            // on a VM), then block. Between looks the thread yields its core: on two cores the
            // Zenoh threads that carry the answer run there too (issue 49: per-step p99 377 µs
            // against 688 µs spinning with `spin_loop`, BENCHMARKS.md "Remote lockstep on every
            // run").
            let spin = std::time::Instant::now();
            let mut early = None;
            while spin.elapsed() < SPIN {
                if let Ok(a) = self.answers.try_recv() {
                    early = Some(a);
                    break;
                }
                std::thread::yield_now();
            }
            if let Some(a) = early {
                return Ok(a);
            }
            match self
                .answers
                .recv_timeout(Duration::from_secs_f64(timeout.max(0.0)))
            {
                Ok(a) => Ok(a),
                Err(RecvTimeoutError::Timeout) => Err(PyTimeoutError::new_err(format!(
                    "no answer to {command:?} on '{}/control/out' within {timeout} s",
                    self.prefix
                ))),
                Err(RecvTimeoutError::Disconnected) => {
                    Err(PyConnectionError::new_err("the session is closed"))
                }
            }
        })?;
        Ok((PyBytes::new(py, &bytes), binary))
    }

    /// Asks `command` as a Zenoh query on `P/control` (its reply is its own, whatever else is
    /// in flight); None when no daemon answered within `timeout` seconds. The client's first
    /// question: once answered, the daemon has also seen the subscription to the answers (one
    /// session's messages arrive in order), so no later answer on `P/control/out` is lost.
    fn query<'py>(
        &self,
        py: Python<'py>,
        command: &str,
        timeout: f64,
    ) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let reply = py.detach(|| -> PyResult<Option<Vec<u8>>> {
            let replies = self
                .session
                .get(format!("{}/control", self.prefix))
                .payload(command)
                .timeout(Duration::from_secs_f64(timeout.max(0.0)))
                .wait()
                .map_err(zerr("query the control"))?;
            Ok(replies.recv().ok().map(|r| match r.result() {
                Ok(s) => s.payload().to_bytes().into_owned(),
                Err(e) => e.payload().to_bytes().into_owned(),
            }))
        })?;
        Ok(reply.map(|b| PyBytes::new(py, &b)))
    }

    /// Publishes `payload` on `P/key` (a driver's command key), express.
    fn put(&self, py: Python<'_>, key: &str, payload: &[u8]) -> PyResult<()> {
        py.detach(|| {
            let mut c = self.commands.lock().unwrap_or_else(|e| e.into_inner());
            if !c.contains_key(key) {
                let p = self
                    .session
                    .declare_publisher(format!("{}/{key}", self.prefix))
                    .express(true)
                    .wait()
                    .map_err(zerr("declare a command publisher"))?;
                c.insert(key.to_string(), p);
            }
            c[key]
                .put(payload.to_vec())
                .wait()
                .map_err(zerr("publish a command"))
        })
    }

    /// Closes the session.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| self.session.close().wait())
            .map_err(zerr("close the session"))
    }
}
