//! What a run logs, read back by the tests that check a message (a miss naming its slowest
//! artifact, a plugin's batch call).

use std::sync::{Arc, Mutex};

/// Runs `f` with this thread's `tracing` output kept in memory; returns `f`'s result and the
/// text it logged.
pub fn logged<T>(f: impl FnOnce() -> T) -> (T, String) {
    let log = Buffer::default();
    let writer = log.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    let out = tracing::subscriber::with_default(subscriber, f);
    let text = String::from_utf8(log.0.lock().unwrap().clone()).unwrap();
    (out, text)
}

/// The log's bytes (a `tracing` writer).
#[derive(Clone, Default)]
struct Buffer(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Buffer {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
