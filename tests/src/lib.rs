//! Helpers for ssx's end-to-end tests and benchmarks: write scenes to a temporary directory,
//! load them with the real loader and build real Environments on the real Rapier engine.

pub mod ablation;
pub mod bench;
pub mod daemon;
pub mod fidelity;
pub mod lab;
pub mod soak;
pub mod tls_stress;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ssx_artifacts::Scene;
use ssx_core::{
    Clock, Environment, LatePolicy, Mode, MonotonicClock, NullRenderEngine, PluginRegistry,
    RenderEngine, SsxError,
};

/// The registry ssxd uses (the Rapier engine; plugins come from libraries), after making sure
/// the workspace's plugin libraries are built.
pub fn registry() -> PluginRegistry {
    rust_plugin_dir();
    let mut r = PluginRegistry::new();
    ssx_engines::register(&mut r);
    r
}

/// The repository root (for the shipped library and scenes).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// A directory of scene and artifact files for one test.
pub struct Workspace {
    dir: tempfile::TempDir,
}

impl Default for Workspace {
    fn default() -> Self {
        Self::new()
    }
}

impl Workspace {
    /// A new empty directory.
    pub fn new() -> Self {
        Self {
            dir: tempfile::tempdir().expect("temporary directory"),
        }
    }
    /// Its path.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
    /// Writes a file (creating directories) and returns its path.
    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let p = self.dir.path().join(name);
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d).expect("create directory");
        }
        std::fs::write(&p, text).expect("write file");
        p
    }
}

/// Loads a scene with [`registry`] and builds it in `mode` with `workers` on `clock`.
pub fn build_with(
    scene: &Path,
    registry: &PluginRegistry,
    workers: usize,
    mode: Mode,
    strict: bool,
    clock: Arc<dyn Clock>,
) -> Result<Environment, SsxError> {
    build_rendered(
        scene,
        registry,
        workers,
        mode,
        strict,
        clock,
        Box::new(NullRenderEngine::default()),
    )
}

/// [`build_with`], drawn by `render`.
pub fn build_rendered(
    scene: &Path,
    registry: &PluginRegistry,
    workers: usize,
    mode: Mode,
    strict: bool,
    clock: Arc<dyn Clock>,
    render: Box<dyn RenderEngine>,
) -> Result<Environment, SsxError> {
    let s = Scene::load(scene, registry)?;
    let mut env = Environment::build(
        s.config(workers, mode, LatePolicy::CatchUp, strict),
        registry,
        &s.extensions,
        &s.artifacts,
        render,
        clock,
    )?;
    // A reset with a new seed makes the scene anew from the file, as ssxd does.
    env.set_scene_source(Box::new(s.source(None, registry)));
    Ok(env)
}

/// A fast run of `scene` on 2 workers that records every step, losslessly, into the MCAP file
/// `path`; the file is finished when the Environment is dropped.
pub fn build_recorded(
    scene: &Path,
    registry: &PluginRegistry,
    strict: bool,
    path: &Path,
) -> Result<Environment, SsxError> {
    let out = ssx_view::Output::new(
        ssx_view::Hub::new(),
        None,
        Some(&ssx_view::RecordOptions {
            path: path.to_path_buf(),
            every: 1,
            lossless: true,
            run: ssx_view::RunRecord::default(),
        }),
    )
    .map_err(|e| SsxError::Config(e.to_string()))?;
    let clock = Arc::new(MonotonicClock::new(std::time::Duration::ZERO));
    build_rendered(scene, registry, 2, Mode::Fast, strict, clock, Box::new(out))
}

/// Loads and builds a scene in fast mode with `workers` and the plugins of `registry`.
pub fn build_fast_with(
    scene: &Path,
    registry: &PluginRegistry,
    workers: usize,
    strict: bool,
) -> Result<Environment, SsxError> {
    let clock = Arc::new(MonotonicClock::new(std::time::Duration::ZERO));
    build_with(scene, registry, workers, Mode::Fast, strict, clock)
}

/// Loads and builds a scene in fast mode with `workers` and the standard plugins.
pub fn build_fast(scene: &Path, workers: usize) -> Result<Environment, SsxError> {
    build_fast_with(scene, &registry(), workers, false)
}

/// Steps `n` times, failing the test on error.
/// Every number of every body state (pose, quaternion, velocities), as bits: two runs agree
/// bit for bit when these are equal.
pub fn state_bits(states: &[ssx_core::BodyState]) -> Vec<u64> {
    states
        .iter()
        .flat_map(|s| {
            let q = s.pose.rotation.quaternion();
            [
                s.pose.translation.x,
                s.pose.translation.y,
                s.pose.translation.z,
                q.w,
                q.i,
                q.j,
                q.k,
                s.linvel.x,
                s.linvel.y,
                s.linvel.z,
                s.angvel.x,
                s.angvel.y,
                s.angvel.z,
            ]
        })
        .map(f64::to_bits)
        .collect()
}

pub fn step_n(env: &mut Environment, n: u64) {
    for _ in 0..n {
        env.step().expect("step");
    }
}

/// A shipped artifact file, as an absolute path for scenes written elsewhere.
pub fn library(name: &str) -> String {
    repo_root()
        .join("artifacts/library")
        .join(name)
        .display()
        .to_string()
}

/// The body state of an artifact's first body.
pub fn state_of(env: &Environment, artifact: &str) -> ssx_core::BodyState {
    let info = env.artifact(artifact).expect("artifact exists");
    env.states()[info.bodies.start as usize]
}

/// The `ssxd` binary built for these tests.
pub fn ssxd() -> PathBuf {
    workspace_build().join("ssxd")
}

/// The library-swap scenes: the artifact `bot`, a 1 kg ball at z = 1 m in zero gravity, driven
/// by the C fixture driver `pusher` from `libpusher.so` (a copy of the fixture build `build`, made
/// next to the scene), τ = 1 ms. `scene_extra` goes into the scene before its artifacts (with a
/// trailing comma: `"extensions": [...],`), `artifact_extra` into the artifact (with a leading
/// one: `, "replicate": ...`). Returns the scene and the library.
pub fn pusher_scene(
    ws: &Workspace,
    build: &str,
    scene_extra: &str,
    artifact_extra: &str,
) -> (PathBuf, PathBuf) {
    let lib = ws.path().join("libpusher.so");
    std::fs::copy(c_library(build), &lib).expect("copy the fixture build");
    ws.write(
        "ball.json",
        r#"{ "bodies": [ { "name": "b", "mass": 1.0, "colliders": [ { "shape": { "sphere": { "radius": 0.1 } } } ] } ],
  "driver": { "library": "libpusher.so", "plugin": "pusher", "descriptor": {} } }"#,
    );
    let scene = ws.write(
        "s.json",
        &format!(
            r#"{{ "timestep": 0.001, "gravity": [0, 0, 0], {scene_extra}
  "artifacts": [ {{ "name": "bot", "artifact": "ball.json", "pose": {{ "position": [0, 0, 1] }}{artifact_extra} }} ] }}"#
        ),
    );
    (scene, lib)
}

/// A C plugin library built by this crate's build script (`name` without `lib` and `.so`).
pub fn c_library(name: &str) -> PathBuf {
    Path::new(env!("OUT_DIR")).join(format!("lib{name}.so"))
}

/// The directory holding the workspace's Rust plugin libraries (hover, pose, the test
/// fixtures), built once on demand.
pub fn rust_plugin_dir() -> PathBuf {
    workspace_build()
}

/// Builds, once per process, what the tests and tools run but their own build does not make:
/// the `ssxd` binary and the plugin cdylibs, in the profile this executable was built with (a
/// test of `cargo test --release`, a bench or `cargo run --release --bin figure8`: release; a
/// plain `cargo test`: debug), so that a tool never starts a build of another profile and never
/// drives plugins of another optimisation. Returns that profile's output directory.
///
/// From an integration test, the build selects the whole workspace and that test target (this
/// process's own), so cargo resolves the same features as `cargo test --workspace` and every
/// dependency the test build made is reused as it is. A narrower build (`-p ssxd`, or the
/// plugins by name) resolves fewer features, and cargo compiles a second copy of much of the
/// dependency graph (117 crates for the plugins' build): gigabytes of artifacts, which once
/// filled the CI machine's disk.
/// From anything else (a benchmark, a tool), the workspace's libraries and binaries alone.
fn workspace_build() -> PathBuf {
    static ONCE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    ONCE.get_or_init(|| {
        let root = repo_root();
        // An integration test's executable is `<target>-<hash>`.
        let own_test = std::env::current_exe()
            .ok()
            .and_then(|exe| Some(exe.file_stem()?.to_str()?.rsplit_once('-')?.0.to_owned()));
        let (out, profile) = own_profile();
        let mut cargo = std::process::Command::new(env!("CARGO"));
        cargo.args(["build", "--quiet", "--workspace", "--lib", "--bins"]);
        cargo.args(["--profile", &profile]);
        if let Some(target_dir) = out.parent() {
            cargo.arg("--target-dir").arg(target_dir);
        }
        // Not the variables cargo set for this test process: build scripts that watch them
        // (ring's `rerun-if-env-changed=CARGO_PKG_NAME`, ...) would see them change between this
        // build and the test build, and each would compile ring, rustls and zenoh again. Nor
        // RUSTC_BOOTSTRAP, which a run of the tests with libtest's `--report-time` needs and
        // which build scripts that probe for nightly features watch.
        for (name, _) in std::env::vars_os() {
            let n = name.to_string_lossy();
            if n.starts_with("CARGO_PKG_")
                || n.starts_with("CARGO_BIN_EXE_")
                || [
                    "CARGO_MANIFEST_DIR",
                    "CARGO_MANIFEST_PATH",
                    "CARGO_MANIFEST_LINKS",
                    "CARGO_CRATE_NAME",
                    "CARGO_BIN_NAME",
                    "CARGO_PRIMARY_PACKAGE",
                    "CARGO_TARGET_TMPDIR",
                    "OUT_DIR",
                    "RUSTC_BOOTSTRAP",
                ]
                .contains(&n.as_ref())
            {
                cargo.env_remove(&name);
            }
        }
        if let Some(name) = own_test.as_ref().filter(|n| {
            root.join(format!("tests/tests/{n}.rs")).is_file()
                || root.join(format!("tests/tests/{n}/main.rs")).is_file()
        }) {
            cargo.args(["--test", name]);
        } else if let Some(name) = own_test
            .as_ref()
            .filter(|n| root.join(format!("examples/{n}.rs")).is_file())
        {
            // An example's test (examples/embed.rs): the same features again.
            cargo.args(["--example", name]);
        }
        let status = cargo.current_dir(&root).status().expect("run cargo build");
        assert!(
            status.success(),
            "building ssxd and the plugin libraries failed"
        );
        out
    })
    .clone()
}

/// The output directory this executable was built into (`target/release` for
/// `target/release/deps/plugins-0123abcd` or `target/release/figure8`) and the profile cargo
/// knows it by (`dev` for `debug`).
fn own_profile() -> (PathBuf, String) {
    let exe = std::env::current_exe().expect("the test executable's path");
    let mut dir = exe
        .parent()
        .expect("an executable has a directory")
        .to_path_buf();
    // Tests and benches live in `deps/`, examples in `examples/`.
    if dir.ends_with("deps") || dir.ends_with("examples") {
        dir.pop();
    }
    let profile = match dir.file_name().and_then(|n| n.to_str()) {
        Some("debug") => "dev".to_owned(),
        Some(name) => name.to_owned(),
        None => panic!("no build profile in {}", exe.display()),
    };
    (dir, profile)
}

/// A loopback port nothing listens on (now).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A shipped scene, rewritten into `ws` with absolute artifact paths, the extension listening
/// on `port` and keys under `prefix`.
pub fn hil_scene(
    ws: &Workspace,
    name: &str,
    port: u16,
    prefix: &str,
    edit: impl FnOnce(&mut serde_json::Value),
) -> String {
    shipped_scene(ws, name, |s| {
        let d = &mut s["extensions"][0]["descriptor"];
        d["listen"] = serde_json::json!([format!("tcp/127.0.0.1:{port}")]);
        d["prefix"] = serde_json::json!(prefix);
        edit(s);
    })
}

/// A shipped scene, rewritten into `ws` with absolute artifact, include and map paths, then
/// `edit`ed.
pub fn shipped_scene(
    ws: &Workspace,
    name: &str,
    edit: impl FnOnce(&mut serde_json::Value),
) -> String {
    let path = repo_root().join(format!("artifacts/scenes/{name}.json"));
    let mut s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let absolute = |rel: &str| path.parent().unwrap().join(rel).display().to_string();
    for a in s["artifacts"].as_array_mut().unwrap() {
        let rel = a["artifact"].as_str().unwrap().to_string();
        a["artifact"] = serde_json::json!(absolute(&rel));
    }
    if let Some(includes) = s.get_mut("include").and_then(|i| i.as_array_mut()) {
        for i in includes {
            *i = serde_json::json!(absolute(i.as_str().unwrap()));
        }
    }
    if let Some(map) = s.get_mut("map").and_then(|m| m.as_object_mut()) {
        for key in ["image", "yaml"] {
            if let Some(rel) = map.get(key).and_then(|v| v.as_str()).map(str::to_string) {
                map.insert(key.into(), serde_json::json!(absolute(&rel)));
            }
        }
    }
    edit(&mut s);
    let out = ws.path().join(format!("{name}.json"));
    std::fs::write(&out, serde_json::to_string_pretty(&s).unwrap()).unwrap();
    out.display().to_string()
}

/// How a bounded run of ssxd ended.
#[derive(Debug)]
pub struct Bounded {
    /// Exit status, if it exited.
    pub code: Option<i32>,
    /// The signal that killed it, if one did.
    pub signal: Option<i32>,
    /// What it printed.
    pub stdout: String,
    /// What it logged.
    pub stderr: String,
    /// How long it ran.
    pub elapsed: std::time::Duration,
}

/// Runs ssxd under `prlimit` (address space at most `memory` bytes) and kills it after
/// `seconds`; panics if it had to be killed.
pub fn ssxd_bounded(args: &[&str], seconds: u64, memory: u64) -> Bounded {
    ssxd_bounded_in(args, seconds, memory, None)
}

/// [`ssxd_bounded`] with its temporary files (the plugin copies) in `tmp` when given, where no
/// other process's are: the folders a killed ssxd left in the shared one are swept, and said
/// in the log, by the next ssxd that starts there.
pub fn ssxd_bounded_in(args: &[&str], seconds: u64, memory: u64, tmp: Option<&Path>) -> Bounded {
    use std::os::unix::process::ExitStatusExt;
    // Built (once) before the clock starts.
    let exe = ssxd();
    let started = std::time::Instant::now();
    let mut command = std::process::Command::new("prlimit");
    if let Some(dir) = tmp {
        command.env("TMPDIR", dir);
    }
    let mut child = command
        .arg(format!("--as={memory}"))
        .arg("--")
        .arg(exe)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run ssxd under prlimit (util-linux)");
    let pipe = |mut r: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = r.read_to_end(&mut v);
            String::from_utf8_lossy(&v).into_owned()
        })
    };
    let out = pipe(Box::new(child.stdout.take().unwrap()));
    let err = pipe(Box::new(child.stderr.take().unwrap()));
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if started.elapsed() > std::time::Duration::from_secs(seconds) {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "ssxd {args:?} ran longer than {seconds} s; stderr: {}",
                err.join().unwrap()
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    Bounded {
        code: status.code(),
        signal: status.signal(),
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
        elapsed: started.elapsed(),
    }
}

/// A Python 3 that can import the test clients' packages (`eclipse-zenoh` and `rosbags` for the
/// ROS 2 client, `mcap` for the docs' recording recovery; pinned): the system's `python3` if it
/// already can, else a virtual environment made once under the target directory with those
/// packages installed from PyPI. Panics with what to install when neither works.
pub fn python_for_clients() -> PathBuf {
    const PACKAGES: [&str; 3] = ["eclipse-zenoh==1.10.2", "rosbags==0.11.9", "mcap==1.2.2"];
    const PROBE: &str = "import zenoh, rosbags, numpy, mcap, importlib.metadata as m; \
        assert m.version('eclipse-zenoh').startswith('1.10.')";
    static ONCE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    ONCE.get_or_init(|| {
        let can = |python: &Path| {
            std::process::Command::new(python)
                .args(["-c", PROBE])
                .stderr(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        };
        let system = PathBuf::from("python3");
        if can(&system) {
            return system;
        }
        let target =
            std::env::var_os("CARGO_TARGET_DIR").map_or(repo_root().join("target"), PathBuf::from);
        let venv = target.join("client-venv");
        let python = venv.join("bin/python3");
        if !can(&python) {
            let made = std::process::Command::new("python3")
                .args(["-m", "venv"])
                .arg(&venv)
                .status()
                .is_ok_and(|s| s.success());
            let installed = made
                && std::process::Command::new(&python)
                    .args([
                        "-m",
                        "pip",
                        "install",
                        "--quiet",
                        "--disable-pip-version-check",
                    ])
                    .args(PACKAGES)
                    .status()
                    .is_ok_and(|s| s.success());
            if !(installed && can(&python)) {
                // No venv module (Debian without python3-venv): the user's site-packages.
                let user = std::process::Command::new("python3")
                    .args([
                        "-m",
                        "pip",
                        "install",
                        "--user",
                        "--quiet",
                        "--disable-pip-version-check",
                    ])
                    .args(PACKAGES)
                    .status()
                    .is_ok_and(|s| s.success());
                if user && can(&system) {
                    return system;
                }
            }
            assert!(
                installed && can(&python),
                "the client tests need Python 3 with {} (tried a virtual environment in {})",
                PACKAGES.join(" and "),
                venv.display()
            );
        }
        python
    })
    .clone()
}
