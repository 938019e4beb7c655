//! `ssxd sweep` from outside: the real binary runs real `ssxd run` processes over the shipped
//! exploration scene. A sweep's figures equal single runs of the same scenes; a sweep stopped
//! half-way and started again runs only what is missing; bad sweep files are refused before
//! any run.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use ssx_tests::{Workspace, repo_root, ssxd};

fn scenes() -> PathBuf {
    repo_root().join("artifacts/scenes")
}

/// A sweep of the exploration scene: explorers × building seeds, `duration` simulated seconds.
fn exploration_sweep(ws: &Workspace, duration: f64) -> PathBuf {
    let sweep = json!({
        "scene": scenes().join("exploration.json"),
        "parameters": [
            { "path": "artifacts[1].replicate.grid.count", "values": [2, 4] },
            { "path": "map.building.seed", "values": [1, 2, 3] },
            { "path": "watch", "values": [[]] }
        ],
        "duration": duration,
        "keep": ["explore.explored", "steps", "achieved_rt_factor"]
    });
    ws.write("sweep.json", &sweep.to_string())
}

fn sweep(file: &Path, out: &Path, extra: &[&str]) -> Output {
    Command::new(ssxd())
        .arg("sweep")
        .arg(file)
        .arg("--out")
        .arg(out)
        .args(extra)
        .output()
        .expect("run ssxd sweep")
}

/// `ssxd sweep --summary OUT`.
fn summarise(out: &Path) -> Output {
    Command::new(ssxd())
        .args(["sweep", "--summary"])
        .arg(out)
        .output()
        .expect("run ssxd sweep --summary")
}

/// `results.csv` as rows of cells (no cell of these sweeps is quoted).
fn rows(out: &Path) -> Vec<Vec<String>> {
    std::fs::read_to_string(out.join("results.csv"))
        .expect("results.csv")
        .lines()
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

#[test]
fn a_two_by_three_sweep_gives_six_rows_equal_to_single_runs_of_the_same_scenes() {
    let ws = Workspace::new();
    let file = exploration_sweep(&ws, 3.0);
    let out = ws.path().join("out");
    let o = sweep(&file, &out, &["--jobs", "2"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("sweep: 6 runs, 0 failed; results in "),
        "{stderr}"
    );
    // One command: the sweep ends with its summary.
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("6 runs in 6 configurations; table in "),
        "{stdout}"
    );
    let table = rows(&out);
    assert_eq!(
        table[0],
        [
            "run",
            "artifacts[1].replicate.grid.count",
            "map.building.seed",
            "watch",
            "seed",
            "explore.explored",
            "steps",
            "achieved_rt_factor",
            "exit_status",
            "wall_s",
            "error"
        ]
    );
    assert_eq!(table.len(), 7, "a header and six rows");
    let base: Value =
        serde_json::from_str(&std::fs::read_to_string(scenes().join("exploration.json")).unwrap())
            .unwrap();
    for (k, row) in table[1..].iter().enumerate() {
        let (count, seed) = ([2, 4][k / 3], [1, 2, 3][k % 3]);
        assert_eq!(
            row[..5],
            [
                format!("{k:04}"),
                count.to_string(),
                seed.to_string(),
                "[]".into(),
                String::new()
            ]
        );
        assert_eq!(
            (row[6].as_str(), row[8].as_str(), row[10].as_str()),
            ("300", "0", "")
        );
        // The same scene, made here and run alone, explores exactly as much.
        let mut scene = base.clone();
        scene["artifacts"][1]["replicate"]["grid"]["count"] = json!(count);
        scene["map"]["building"]["seed"] = json!(seed);
        scene["watch"] = json!([]);
        let alone = ws.write(&format!("alone-{k}.json"), &scene.to_string());
        let stats = ws.path().join(format!("alone-{k}-stats.json"));
        let status = Command::new(ssxd())
            .arg("run")
            .arg(&alone)
            .arg("--scene-dir")
            .arg(scenes())
            .args([
                "--mode",
                "fast",
                "--duration",
                "3",
                "--workers",
                "1",
                "--quiet",
            ])
            .arg("--stats-json")
            .arg(&stats)
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success());
        let s: Value = serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
        let explored = s["metrics"]["explore.explored"].as_f64().unwrap();
        assert!(explored > 0.0);
        assert_eq!(row[5], explored.to_string(), "run {k}");
    }

    // The summary: one configuration a row of the table here (one run each, no seeds), each
    // figure's mean that run's value, with no spread from one run.
    let o = summarise(&out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("6 runs in 6 configurations; table in "),
        "{stdout}"
    );
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    let lines: Vec<&str> = summary.lines().collect();
    assert_eq!(
        lines[0],
        "artifacts[1].replicate.grid.count,map.building.seed,watch,figure,n,mean,sd,ci95_low,ci95_high"
    );
    assert_eq!(lines.len(), 1 + 6 * 3);
    assert_eq!(
        lines[1],
        format!("2,1,[],explore.explored,1,{},,,", table[1][5])
    );
    // A box plot a figure, 900 × 560 pixels.
    for figure in ["explore.explored", "steps", "achieved_rt_factor"] {
        let png = std::fs::read(out.join(format!("{figure}.png"))).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "{figure}");
        let (w, h) = (
            u32::from_be_bytes(png[16..20].try_into().unwrap()),
            u32::from_be_bytes(png[20..24].try_into().unwrap()),
        );
        assert_eq!((w, h), (900, 560), "{figure}");
    }
}

#[test]
fn a_sweep_stopped_half_way_and_started_again_runs_only_the_runs_it_had_not_finished() {
    let ws = Workspace::new();
    let file = exploration_sweep(&ws, 60.0);
    let out = ws.path().join("out");
    let first = Command::new(ssxd())
        .arg("sweep")
        .arg(&file)
        .arg("--out")
        .arg(&out)
        .args(["--jobs", "1"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let results = || {
        (0..6)
            .filter(|k| out.join(format!("runs/{k:04}/result.json")).exists())
            .count()
    };
    let deadline = Instant::now() + Duration::from_secs(120);
    while results() < 2 {
        assert!(
            Instant::now() < deadline,
            "two runs did not finish in 120 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // Ctrl-C, as a terminal sends it.
    let sent = Command::new("kill")
        .args(["-INT", &first.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let o = first.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("run the same command again to finish it"),
        "{stderr}"
    );
    let done = results();
    assert!(
        (2..6).contains(&done),
        "{done} runs finished before the stop"
    );
    // The interrupted run left no result, and the table has the finished ones only.
    assert_eq!(rows(&out).len(), 1 + done);

    let o = sweep(&file, &out, &["--jobs", "2"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "sweep: {done} of 6 runs already have results; running the other {}",
            6 - done
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("sweep: {} runs, 0 failed", 6 - done)),
        "{stderr}"
    );
    let table = rows(&out);
    assert_eq!(table.len(), 7);
    let ids: Vec<&str> = table[1..].iter().map(|r| r[0].as_str()).collect();
    assert_eq!(ids, ["0000", "0001", "0002", "0003", "0004", "0005"]);
    // Once more: nothing left to run.
    let o = sweep(&file, &out, &[]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("sweep: 0 runs, 0 failed"));
}

#[test]
fn bad_sweep_files_are_refused_before_any_run_with_located_messages() {
    let base = scenes().join("exploration.json");
    let cases = [
        (
            json!({ "scene": base, "parameters": [{ "path": "map.room.seed", "values": [1] }], "duration": 1 }),
            vec!["run 0000 (map.room.seed = 1): the scene has no 'map.room'"],
        ),
        (
            json!({ "scene": base, "parameters": [{ "path": "artifacts[1].replicate.grid.count", "values": [2, "four"] }], "duration": 1 }),
            vec![
                "run 0001 (artifacts[1].replicate.grid.count = \"four\"): ",
                "runs/0001/scene.json:",
                "(at artifacts[1].replicate.grid.count)",
            ],
        ),
        (
            json!({ "scene": base, "parameters": [{ "path": "map.building.seed", "values": [] }], "duration": 1 }),
            vec!["(at parameters[0].values): an empty list: give at least one value"],
        ),
        (
            json!({ "scene": base, "parameters": [
                { "path": "map.building.seed", "values": (0..1000).collect::<Vec<_>>() },
                { "path": "seed", "values": (0..1000).collect::<Vec<_>>() }], "duration": 1 }),
            vec![
                "1000000 runs (1000000 combinations × 1 seeds): more than 1000; pass --yes if you mean it",
            ],
        ),
        (
            json!({ "scene": base, "duration": 1, "mode": "slow" }),
            vec!["(at mode): unknown variant `slow`, expected `fast` or `realtime`"],
        ),
    ];
    for (sweep_file, wanted) in cases {
        let ws = Workspace::new();
        let file = ws.write("sweep.json", &sweep_file.to_string());
        let out = ws.path().join("out");
        let started = Instant::now();
        let o = sweep(&file, &out, &[]);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{stderr}");
        for w in &wanted {
            assert!(stderr.contains(w), "'{w}' not in: {stderr}");
        }
        assert!(started.elapsed() < Duration::from_secs(10));
        // No run started: no run wrote a log.
        let logs = (0..2)
            .filter(|k| out.join(format!("runs/{k:04}/log.txt")).exists())
            .count();
        assert_eq!(logs, 0, "{stderr}");
    }
}

#[test]
fn a_slurm_array_of_two_tasks_runs_its_chunks_and_the_summary_collects_them_into_one_table() {
    let ws = Workspace::new();
    let file = exploration_sweep(&ws, 2.0);
    let out = ws.path().join("out");
    let o = sweep(&file, &out, &["--slurm", "--chunk", "4", "--jobs", "2"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("2 array tasks of 4 runs, 2 CPUs each; submit it with sbatch"),
        "{stderr}"
    );
    let script = std::fs::read_to_string(out.join("sweep.sbatch")).unwrap();
    assert!(script.starts_with("#!/bin/bash\n"));
    assert!(script.contains("\n#SBATCH --array=0-1\n#SBATCH --cpus-per-task=2\n"));
    // Nothing ran: the runs were only checked.
    assert!(!out.join("runs/0000/log.txt").exists());
    // The two tasks as Slurm starts them, at once (two nodes sharing the directory): the script
    // itself under bash, with the array variables set.
    let started: Vec<_> = (0..2)
        .map(|k| {
            Command::new("bash")
                .arg(out.join("sweep.sbatch"))
                .env("SLURM_ARRAY_TASK_ID", k.to_string())
                .env("SLURM_CPUS_PER_TASK", "1")
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("start the array task")
        })
        .collect();
    let tasks: Vec<_> = started
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect();
    for (k, t) in tasks.iter().enumerate() {
        let stderr = String::from_utf8_lossy(&t.stderr);
        assert!(t.status.success(), "task {k}: {stderr}");
        let runs = [4, 2][k];
        assert!(
            stderr.contains(&format!("sweep: {runs} runs checked"))
                && stderr.contains(&format!("sweep: {runs} runs, 0 failed")),
            "task {k}: {stderr}"
        );
    }
    let o = summarise(&out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let table = rows(&out);
    let ids: Vec<&str> = table[1..].iter().map(|r| r[0].as_str()).collect();
    assert_eq!(ids, ["0000", "0001", "0002", "0003", "0004", "0005"]);
    // A task past the last is refused.
    let o = sweep(&file, &out, &["--task", "2", "--chunk", "4"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("--task 2: the sweep's 6 runs make 2 tasks of 4 (0 to 1)")
    );
}
