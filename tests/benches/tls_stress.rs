//! The secured link under stress for 10 minutes (issue 49; or `-- --seconds N`): two sessions
//! on the shipped lab configuration publish 1 MB payloads and small express messages to each
//! other at once (`--large BYTES`, `--small BYTES`) through a relay that counts TLS records, long enough for several TLS key
//! updates each way (`ssx_tests::tls_stress`). Prints the figures, writes
//! target/bench/tls_stress.json, and fails on a lost or reordered message or a dead direction.
//! A crash ends the process: the shell sees its signal.
//!
//! `cargo bench -p ssx-tests --bench tls_stress`

use ssx_tests::repo_root;

fn main() {
    let mut options = ssx_tests::tls_stress::Options {
        seconds: 600.0,
        ..Default::default()
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().and_then(|s| s.parse::<f64>().ok());
        match a.as_str() {
            "--seconds" => options.seconds = value().expect("--seconds S"),
            "--large" => options.large = value().expect("--large BYTES") as usize,
            "--small" => options.small = value().expect("--small BYTES") as usize,
            _ => {}
        }
    }
    let ws = ssx_tests::Workspace::new();
    let report = ssx_tests::tls_stress::run(ws.path(), &options);
    let summary = report.summary();
    println!("{summary:#}");
    let out = repo_root().join("target/bench");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("tls_stress.json"), format!("{summary:#}\n")).unwrap();
    if let Err(e) = report.check(5.0) {
        panic!("{e}");
    }
}
