//! Plugin copies left behind by processes that are gone.
//!
//! Drivers and sensors are opened from private copies in `$TMPDIR/ssx-plugins-<pid>-XXXXXX`
//! (see [`super::PluginLoader::copy_dir`]), removed when the loader is dropped. A process that is
//! killed (SIGKILL, a crash, the second signal's immediate exit) never drops it, and a HIL rig
//! that crashes a few times a day fills its disk with them. The first process of this user that
//! loads plugins afterwards removes them: a folder is removed only when its name carries a
//! process id with no live process and the folder belongs to the user running this one.
//!
//! Limits: liveness is read from `/proc` (nothing is removed where it is not mounted); a
//! folder of a process in another PID namespace that shares this `$TMPDIR` looks dead from here
//! and would be removed, so containers that share a temporary directory should give each its own
//! `TMPDIR`. A folder whose process id was reused by a live process is kept until that process
//! ends.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The name every copy folder starts with.
pub const PREFIX: &str = "ssx-plugins-";

/// What a sweep removed.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Swept {
    /// Folders removed.
    pub folders: usize,
    /// Bytes of the files in them.
    pub bytes: u64,
    /// Folders that could not be removed, with why.
    pub failed: Vec<(PathBuf, String)>,
}

/// The process id in a copy folder's name (`ssx-plugins-<pid>-XXXXXX`).
fn pid_of(name: &str) -> Option<u32> {
    let rest = name.strip_prefix(PREFIX)?;
    let (pid, suffix) = rest.split_once('-')?;
    if suffix.is_empty() || pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    pid.parse().ok()
}

/// Whether a process with this id is alive (as `/proc` says).
fn alive(pid: u32) -> bool {
    Path::new("/proc").join(pid.to_string()).exists()
}

/// The bytes of the files under `dir` (not following links).
fn size_of(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => size_of(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

/// Removes the copy folders in `tmp` whose process is gone and whose owner is `uid`; never
/// the folder of a live process (this one's included), never another user's.
pub fn sweep(tmp: &Path, uid: u32) -> Swept {
    let mut swept = Swept::default();
    if !Path::new("/proc/self").exists() {
        return swept; // no way to tell the living from the dead
    }
    let Ok(entries) = std::fs::read_dir(tmp) else {
        return swept;
    };
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(pid_of) else {
            continue;
        };
        // The folder itself, not what a link points at.
        let Ok(meta) = std::fs::symlink_metadata(entry.path()) else {
            continue;
        };
        if !meta.is_dir() || meta.uid() != uid || pid == std::process::id() || alive(pid) {
            continue;
        }
        let bytes = size_of(&entry.path());
        match std::fs::remove_dir_all(entry.path()) {
            Ok(()) => {
                swept.folders += 1;
                swept.bytes += bytes;
            }
            Err(e) => swept.failed.push((entry.path(), e.to_string())),
        }
    }
    swept
}

/// [`sweep`] of the folder `own` was made in, as its owner; said once in the log.
pub fn sweep_beside(own: &Path) {
    let (Some(tmp), Ok(meta)) = (own.parent(), std::fs::metadata(own)) else {
        return;
    };
    let swept = sweep(tmp, meta.uid());
    if swept.folders > 0 {
        tracing::info!(
            "removed {} plugin copy folder(s) left by processes that are gone ({:.1} MB freed, in {})",
            swept.folders,
            swept.bytes as f64 / 1e6,
            tmp.display()
        );
    }
    for (path, why) in &swept.failed {
        tracing::warn!(
            "cannot remove the plugin copies left in {}: {why}",
            path.display()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_read_strictly() {
        assert_eq!(pid_of("ssx-plugins-4551-524MXo"), Some(4551));
        assert_eq!(pid_of("ssx-plugins-4551-"), None);
        assert_eq!(pid_of("ssx-plugins--abc"), None);
        assert_eq!(pid_of("ssx-plugins-45x1-abc"), None);
        assert_eq!(pid_of("ssx-plugin-4551-abc"), None);
        assert_eq!(pid_of("other"), None);
    }

    /// A process id that is certainly gone: a child that has been waited for (its id is not
    /// reused within the test on a machine whose `pid_max` is far above the processes running).
    fn dead_pid() -> u32 {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    }

    #[test]
    fn only_dead_processes_folders_of_this_user_go() {
        let tmp = tempfile::tempdir().unwrap();
        let uid = std::fs::metadata(tmp.path()).unwrap().uid();
        let dead = tmp.path().join(format!("{PREFIX}{}-aaaaaa", dead_pid()));
        let live = tmp
            .path()
            .join(format!("{PREFIX}{}-bbbbbb", std::process::id()));
        let other = tmp.path().join("ssx-other-1-cccccc");
        for d in [&dead, &live, &other] {
            std::fs::create_dir(d).unwrap();
            std::fs::write(d.join("libx.so"), vec![0u8; 1000]).unwrap();
        }
        // Another user's folder is never touched: asked as if this process were another uid.
        assert_eq!(sweep(tmp.path(), uid.wrapping_add(1)), Swept::default());
        assert!(dead.exists());
        let swept = sweep(tmp.path(), uid);
        assert_eq!((swept.folders, swept.bytes), (1, 1000));
        assert!(swept.failed.is_empty());
        assert!(!dead.exists());
        assert!(live.exists() && other.exists());
    }
}
