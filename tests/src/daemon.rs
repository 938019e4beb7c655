//! A daemon under test and a Zenoh client session to it, for the end-to-end tests of the Zenoh
//! extension and the ROS 2 node: `ssxd run` as a child process whose log is collected, a client
//! session to its loopback endpoint, control queries and message collection. Every wait is
//! bounded.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use zenoh::Wait;

use crate::ssxd;

/// `ssxd run` as a child; its log collected line by line. Killed when dropped.
pub struct Daemon {
    /// The process.
    pub child: Child,
    log: Arc<Mutex<Vec<String>>>,
    /// The thread reading the log; it ends when the daemon's stderr closes.
    reader: Option<std::thread::JoinHandle<()>>,
}

impl Daemon {
    /// Runs `scene` for `seconds` of simulated time, quietly.
    pub fn start(scene: &str, seconds: u32) -> Daemon {
        Self::start_with(scene, seconds, &[])
    }

    /// [`Daemon::start`] with more arguments.
    pub fn start_with(scene: &str, seconds: u32, extra: &[&str]) -> Daemon {
        Self::start_in(None, scene, seconds, extra)
    }

    /// [`Daemon::start_with`] in working directory `dir` (None: this process's).
    pub fn start_in(
        dir: Option<&std::path::Path>,
        scene: &str,
        seconds: u32,
        extra: &[&str],
    ) -> Daemon {
        let mut command = Command::new(ssxd());
        if let Some(d) = dir {
            command.current_dir(d);
        }
        let mut child = command
            .args(["run", scene, "--duration", &seconds.to_string(), "--quiet"])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn ssxd");
        let log = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&log);
        let stderr = child.stderr.take().unwrap();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                sink.lock().unwrap().push(line);
            }
        });
        Daemon {
            child,
            log,
            reader: Some(reader),
        }
    }

    /// What it has logged so far.
    pub fn log(&self) -> String {
        self.log.lock().unwrap().join("\n")
    }

    /// SIGINT, then its exit code and log (bounded wait).
    pub fn interrupt(mut self) -> (Option<i32>, String) {
        let pid = self.child.id().to_string();
        assert!(
            Command::new("kill")
                .args(["-INT", &pid])
                .status()
                .unwrap()
                .success()
        );
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                // The log reader drains to the end of the stream the exit closed.
                if let Some(reader) = self.reader.take() {
                    reader.join().expect("the log reader");
                }
                return (s.code(), self.log());
            }
            assert!(
                Instant::now() < deadline,
                "ssxd did not stop: {}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A client session to the daemon's endpoint, retried until the daemon listens (≤ 60 s: the
/// first run may still be loading libraries).
pub fn connect(port: u16, daemon: &mut Daemon) -> zenoh::Session {
    connect_with(|| client_config(port), daemon)
}

/// [`connect`] with the session's configuration made by `config` (TLS, certificates, ...).
pub fn connect_with(config: impl Fn() -> zenoh::Config, daemon: &mut Daemon) -> zenoh::Session {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let error = match zenoh::open(config()).wait() {
            Ok(s) => return s,
            Err(e) => e,
        };
        if let Some(status) = daemon.child.try_wait().unwrap() {
            panic!("ssxd exited ({status}) before listening: {}", daemon.log());
        }
        assert!(
            Instant::now() < deadline,
            "cannot connect to the daemon: {error}\n{}",
            daemon.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A Zenoh client of `tcp/127.0.0.1:PORT`, scouting off: how every test and benchmark talks
/// to a daemon (or an in-process extension) on loopback.
pub fn client_config(port: u16) -> zenoh::Config {
    let mut c = zenoh::Config::default();
    c.insert_json5("mode", r#""client""#).unwrap();
    c.insert_json5("connect/endpoints", &format!(r#"["tcp/127.0.0.1:{port}"]"#))
        .unwrap();
    c.insert_json5("scouting/multicast/enabled", "false")
        .unwrap();
    c
}

/// One control command; the JSON answer (an error reply too).
pub fn control(session: &zenoh::Session, prefix: &str, command: &str) -> Value {
    let replies = session
        .get(format!("{prefix}/control"))
        .payload(command)
        .timeout(Duration::from_secs(10))
        .wait()
        .unwrap();
    let reply = replies
        .recv_timeout(Duration::from_secs(11))
        .unwrap()
        .unwrap_or_else(|| panic!("no answer to '{command}'"));
    let bytes = match reply.result() {
        Ok(sample) => sample.payload().to_bytes().into_owned(),
        Err(e) => e.payload().to_bytes().into_owned(),
    };
    serde_json::from_slice(&bytes).unwrap_or_else(|e| {
        panic!(
            "the answer to '{command}' is not JSON ({e}): {}",
            String::from_utf8_lossy(&bytes)
        )
    })
}

/// Messages on a key, kept as JSON.
#[allow(clippy::type_complexity)]
pub fn collect(
    session: &zenoh::Session,
    key: &str,
) -> (Arc<Mutex<Vec<Value>>>, zenoh::pubsub::Subscriber<()>) {
    let got = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&got);
    let sub = session
        .declare_subscriber(key.to_string())
        .callback(move |s| {
            if let Ok(v) = serde_json::from_slice::<Value>(&s.payload().to_bytes()) {
                sink.lock().unwrap().push(v);
            }
        })
        .wait()
        .unwrap();
    (got, sub)
}

/// The counters of the subscription on `key` in a `stats` answer.
pub fn input_of<'a>(stats: &'a Value, key: &str) -> &'a Value {
    stats["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["key"] == key)
        .unwrap_or_else(|| panic!("no input '{key}' in {stats}"))
}

/// The daemon tests run one at a time: two real-time daemons and a flooding client at once
/// would share two cores.
pub fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// With `--watch-plugins` on `daemon`: once its watcher runs, copies `build` over the library
/// file `lib` (as a user's rebuild does) and waits, bounded, until the daemon swapped it in.
pub fn copy_build_and_wait_for_the_swap(
    daemon: &Daemon,
    lib: &std::path::Path,
    build: &std::path::Path,
) {
    wait_for("the watcher to start", Duration::from_secs(30), || {
        daemon.log().contains("--watch-plugins")
    });
    std::thread::sleep(Duration::from_millis(500));
    std::fs::copy(build, lib).expect("copy the new build over the library");
    wait_for("the swap", Duration::from_secs(30), || {
        daemon.log().contains("swapped library '")
    });
}

/// Waits (at most `timeout`) until `ok`.
pub fn wait_for(what: &str, timeout: Duration, mut ok: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !ok() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}
