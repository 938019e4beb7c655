//! docs/plugins.md's walkthrough, run as written: its commands and files are read from the page
//! itself, so the page and this test cannot drift apart. A Rust plugin crate is made with
//! `cargo new` outside the workspace (depending on sdk/ by path), built with cargo, copied next to
//! a scene in a temporary directory, and `ssxd plugins`, `check` and `run` are invoked from that
//! directory with relative paths: bare, `./` and through `SSX_PLUGIN_PATH`. The same for the C
//! driver, built with the page's `cc` line.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use ssx_tests::repo_root;

/// One fenced block of the page: the file its label names (the line before it starts with a
/// backquoted name and ends with a colon), its language and its text.
struct Block {
    file: Option<String>,
    lang: String,
    text: String,
}

/// The fenced blocks of the section whose heading starts with `heading`, in order.
fn section_blocks(page: &str, heading: &str) -> Vec<Block> {
    let start = page
        .find(heading)
        .unwrap_or_else(|| panic!("docs/plugins.md has no section '{heading}'"));
    let body = &page[start + heading.len()..];
    let body = &body[..body.find("\n## ").unwrap_or(body.len())];
    let mut blocks = Vec::new();
    let mut label = "";
    let mut lines = body.lines();
    while let Some(line) = lines.next() {
        if let Some(lang) = line.strip_prefix("```") {
            let mut text = String::new();
            for l in lines.by_ref() {
                if l.starts_with("```") {
                    break;
                }
                text.push_str(l);
                text.push('\n');
            }
            let named = label.trim();
            let file = (named.starts_with('`') && named.ends_with(':'))
                .then(|| named.split('`').nth(1).map(str::to_string))
                .flatten();
            blocks.push(Block {
                file,
                lang: lang.trim().to_string(),
                text,
            });
            label = "";
        } else if !line.trim().is_empty() {
            label = line;
        }
    }
    blocks
}

/// The page's `/path/to/ssx` made real: `target/release` becomes the directory of the ssxd these
/// tests built, the rest the repository.
fn real_paths(text: &str) -> String {
    let ssxd = ssx_tests::ssxd();
    text.replace(
        "/path/to/ssx/target/release",
        &ssxd.parent().unwrap().display().to_string(),
    )
    .replace("/path/to/ssx", &repo_root().display().to_string())
}

/// The section as one bash script: files are written where the commands before them left the
/// shell, commands run as written.
fn script(blocks: &[Block]) -> String {
    let mut out = String::from("set -euo pipefail\n");
    for b in blocks {
        match (&b.file, b.lang.as_str()) {
            (Some(file), _) => {
                let dir = Path::new(file)
                    .parent()
                    .filter(|d| !d.as_os_str().is_empty());
                if let Some(d) = dir {
                    out.push_str(&format!("mkdir -p '{}'\n", d.display()));
                }
                out.push_str(&format!(
                    "cat > '{file}' <<'SSX_WALKTHROUGH_EOF'\n{}SSX_WALKTHROUGH_EOF\n",
                    b.text
                ));
            }
            (None, "sh") => out.push_str(&b.text),
            _ => {} // sample output
        }
    }
    real_paths(&out)
}

fn bash(dir: &Path, script: &str, env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new("bash");
    cmd.arg("-c").arg(script).current_dir(dir);
    // The crate is built as a user builds it: its own target directory, no test settings.
    for var in [
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET_DIR",
        "SSX_PLUGIN_PATH",
    ] {
        cmd.env_remove(var);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run bash")
}

fn text(o: &Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}\n--- stderr\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `ssxd ARGS` in `dir` with `SSX_PLUGIN_PATH` as given (unset when `None`): it must succeed.
fn ssxd_ok(dir: &Path, args: &[&str], plugin_path: Option<&str>) -> String {
    let mut cmd = Command::new(ssx_tests::ssxd());
    cmd.args(args)
        .current_dir(dir)
        .env_remove("SSX_PLUGIN_PATH");
    if let Some(p) = plugin_path {
        cmd.env("SSX_PLUGIN_PATH", p);
    }
    let out = cmd.output().expect("run ssxd");
    assert!(
        out.status.success(),
        "ssxd {args:?} in {} (SSX_PLUGIN_PATH {plugin_path:?}) failed:\n{}",
        dir.display(),
        text(&out)
    );
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The heights of `artifact` in the status lines of a run's log.
fn heights(log: &str, artifact: &str) -> Vec<f64> {
    let key = format!("{artifact}=(");
    log.lines()
        .filter_map(|l| {
            let at = l.find(&key)? + key.len();
            let inside = &l[at..at + l[at..].find(')')?];
            inside.split(", ").nth(2)?.parse().ok()
        })
        .collect()
}

/// Runs `plugins`, `check` and a short `run` in `world` with the library named every way a user
/// names it: bare, `./`, and (moved to a directory of its own) through `SSX_PLUGIN_PATH`, both
/// relative and absolute.
fn every_way_of_naming(world: &Path, library: &str, scene: &str, plugin_line: &str) {
    for name in [library.to_string(), format!("./{library}")] {
        let out = ssxd_ok(world, &["plugins", &name], None);
        assert!(out.contains(plugin_line), "{out}");
    }
    for s in [scene.to_string(), format!("./{scene}")] {
        ssxd_ok(world, &["check", &s], None);
        ssxd_ok(world, &["run", &s, "--mode", "fast", "--steps", "20"], None);
    }
    // Moved out of the scene's directory: found only through SSX_PLUGIN_PATH.
    let shelf = world.parent().unwrap().join("shelf");
    std::fs::create_dir_all(&shelf).unwrap();
    std::fs::rename(world.join(library), shelf.join(library)).unwrap();
    for path in ["../shelf".to_string(), shelf.display().to_string()] {
        let out = ssxd_ok(world, &["plugins", library], Some(&path));
        assert!(out.contains(plugin_line), "{out}");
        ssxd_ok(world, &["check", scene], Some(&path));
        ssxd_ok(
            world,
            &["run", scene, "--mode", "fast", "--steps", "20"],
            Some(&path),
        );
    }
    std::fs::rename(shelf.join(library), world.join(library)).unwrap();
}

fn page() -> String {
    std::fs::read_to_string(repo_root().join("docs/plugins.md")).expect("docs/plugins.md")
}

#[test]
fn the_rust_walkthrough_works_as_written() {
    let home = tempfile::tempdir().unwrap();
    let blocks = section_blocks(&page(), "## Your first driver");
    let files: Vec<&str> = blocks.iter().filter_map(|b| b.file.as_deref()).collect();
    assert_eq!(
        files,
        ["Cargo.toml", "src/lib.rs", "my-drone.json", "my-scene.json"],
        "the walkthrough's files changed; this test follows them by name"
    );
    let out = bash(home.path(), &script(&blocks), &[]);
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stdout.contains("  driver  lift  pushes up with a multiple of the weight"),
        "{stdout}"
    );
    assert!(
        stdout.contains("ABI version  3 (this ssxd speaks 3)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("ok: scene 'my-scene' (my-scene.json)"),
        "{stdout}"
    );
    assert!(stdout.contains("steps 300 of 0.01 s"), "{stdout}");
    // 0.05 g up from rest at 0.05 m: 0.05 + 0.245 t² m (t in s) while the run lasts 3 s.
    let z = heights(&stderr, "drone");
    assert!(z.len() >= 2, "status lines: {stderr}");
    for (i, pair) in z.windows(2).enumerate() {
        assert!(pair[1] > pair[0], "the drone must climb: {z:?} (at {i})");
    }
    let last = *z.last().unwrap();
    assert!((0.25..=2.3).contains(&last), "{z:?}");

    let world = home.path().join("my-world");
    every_way_of_naming(
        &world,
        "libmy_driver.so",
        "my-scene.json",
        "  driver  lift  pushes up with a multiple of the weight",
    );
}

#[test]
fn the_c_walkthrough_works_as_written() {
    let home = tempfile::tempdir().unwrap();
    let world = home.path().join("c-world");
    std::fs::create_dir_all(&world).unwrap();
    let blocks = section_blocks(&page(), "## A driver in C");
    // ssxd is on the PATH, as the Rust walkthrough's first command put it.
    let path = format!(
        "{}:{}",
        ssx_tests::ssxd().parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = bash(&world, &script(&blocks), &[("PATH", &path)]);
    assert!(out.status.success(), "{}", text(&out));
    let line = "  driver  hover_c  holds a height by a vertical force (written in C)";
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(line),
        "{}",
        text(&out)
    );
    std::fs::write(
        world.join("c-drone.json"),
        r#"{ "bodies": [ { "name": "frame", "mass": 1.0, "colliders": [ { "shape": { "box": { "size": [0.4, 0.4, 0.1] } } } ] } ],
            "driver": { "library": "libhover_c.so", "plugin": "hover_c", "descriptor": { "height": 1.0 } } }"#,
    )
    .unwrap();
    std::fs::write(
        world.join("c-scene.json"),
        real_paths(
            r#"{ "timestep": 0.01, "artifacts": [
                { "name": "ground", "artifact": "/path/to/ssx/artifacts/library/ground.json" },
                { "name": "drone", "artifact": "c-drone.json", "pose": { "position": [0, 0, 0.05] } } ] }"#,
        ),
    )
    .unwrap();
    every_way_of_naming(&world, "libhover_c.so", "c-scene.json", line);
    // An artifact without bodies is refused by the C driver's create, through the appended
    // SsxInit field, so check refuses it.
    std::fs::write(
        world.join("empty.json"),
        r#"{ "bodies": [], "driver": { "library": "libhover_c.so", "plugin": "hover_c", "descriptor": { "height": 1.0 } } }"#,
    )
    .unwrap();
    std::fs::write(
        world.join("empty-scene.json"),
        r#"{ "timestep": 0.01, "artifacts": [ { "name": "ghost", "artifact": "empty.json" } ] }"#,
    )
    .unwrap();
    let out = Command::new(ssx_tests::ssxd())
        .args(["check", "empty-scene.json"])
        .current_dir(&world)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "artifact 'ghost': cannot create driver 'hover_c': the artifact has no body to hover"
        ),
        "{stderr}"
    );
}

#[test]
fn the_blocks_are_read_with_their_labels() {
    let page = "## Your first driver\n\n`a.toml` (replace):\n\n```toml\nx = 1\n```\n\nThen:\n\n```sh\nls\n```\n\n```\nout\n```\n## Next\n```sh\nnot this\n```\n";
    let b = section_blocks(page, "## Your first driver");
    assert_eq!(b.len(), 3);
    assert_eq!(b[0].file.as_deref(), Some("a.toml"));
    assert_eq!(b[0].text, "x = 1\n");
    assert_eq!((b[1].file.as_deref(), b[1].lang.as_str()), (None, "sh"));
    assert_eq!((b[2].file.as_deref(), b[2].lang.as_str()), (None, ""));
    let _ = PathBuf::new();
}
