//! The library builds of a replay: the run's, from the recording where it holds them, and the
//! check that every other library the replay opened is the build the run used.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ssx_core::{Environment, SsxError};
use ssx_view::Playback;
use ssx_view::inputs::RecordedSwap;

/// The builds a recording holds, written out as files for the loader when first needed, in
/// the replay's own folder (which also holds the scene file: kept as long as the replay).
pub(super) struct Builds {
    playback: Arc<Playback>,
    dir: PathBuf,
    _folder: tempfile::TempDir,
}

impl Builds {
    pub(super) fn new(playback: Arc<Playback>, folder: tempfile::TempDir) -> Self {
        Builds {
            playback,
            dir: folder.path().join("builds"),
            _folder: folder,
        }
    }

    /// The file holding the build `sha256` of `library` (written on first use); an error when
    /// the recording does not hold it.
    pub(super) fn file(&self, sha256: &str, library: &Path) -> Result<PathBuf, String> {
        let name = library.file_name().unwrap_or_default().to_string_lossy();
        let file = self.dir.join(format!("{sha256}-{name}"));
        if file.exists() {
            return Ok(file);
        }
        let Some(bytes) = self.playback.builds.get(sha256) else {
            return Err(format!(
                "the run swapped in a build of '{}' (sha256 {sha256}) that the recording does not hold",
                library.display()
            ));
        };
        (std::fs::create_dir_all(&self.dir).and_then(|()| std::fs::write(&file, bytes)))
            .map_err(|e| format!("cannot write a recorded build to {}: {e}", file.display()))?;
        Ok(file)
    }

    /// Makes the recorded `swap` again, before the coming step.
    pub(super) fn swap_in(
        &self,
        env: &mut Environment,
        swap: &RecordedSwap,
        episode: u64,
    ) -> Result<(), SsxError> {
        let library = Path::new(&swap.library);
        let at = format!(
            "the swap of '{}' before step {} of episode {episode}",
            swap.library,
            env.steps() + 1
        );
        let file = (self.file(&swap.sha256, library))
            .map_err(|why| SsxError::Config(format!("{at}: {why}")))?;
        // The library as the run found it, else by its file name (the scene's files moved).
        let done = env
            .swap_in(library, &file)
            .or_else(|_| env.swap_in(Path::new(library.file_name().unwrap_or_default()), &file));
        done.map_err(|e| SsxError::Config(format!("{at}: {e}")))
    }
}

/// Whether each driver and sensor library the replay's world opened is the build the run
/// started with (matched by file name); the first that is not is named.
pub(super) fn same_builds(p: &Playback, env: &Environment) -> Result<(), String> {
    for lib in env.swappable_libraries() {
        let name = lib.path().file_name();
        let run = (p.libraries.iter()).find(|(path, _)| Path::new(path).file_name() == name);
        let Some((run_path, run_sha)) = run else {
            continue;
        };
        let sha = lib.sha256()?;
        if sha != run_sha {
            return Err(format!(
                "the library '{}' is not the build the run used ('{run_path}'): its sha256 is {sha}, the run's was {run_sha}, and the recording does not hold that build; put the run's build there (or give --scene-dir where it is)",
                lib.path().display()
            ));
        }
    }
    Ok(())
}
