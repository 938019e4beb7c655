//! `ssxd replay`: a recorded run simulated again (`ssx_worlds::replay`), with what it found
//! printed: the steps and resets replayed, and with `--verify` the snapshots compared or the
//! first one that differs.

use std::process::ExitCode;
use std::time::Instant;

use ssx_core::{Mode, SsxError};
use ssx_worlds::replay::{ReplayOptions, replay as replay_run};

use crate::cli::{MAX_WORKERS, ModeArg, ReplayArgs};
use crate::{EXIT_RUN_FAILED, stop_on_signals};

/// Replays `o.recording`; the exit status is 1 when `--verify` found a difference.
pub(crate) fn replay(o: &ReplayArgs) -> Result<ExitCode, SsxError> {
    let stop = stop_on_signals()?;
    if let Some(n) = o.workers
        && !(1..=MAX_WORKERS).contains(&n)
    {
        return Err(SsxError::Config(format!(
            "--workers must be from 1 to {MAX_WORKERS}, got {n}"
        )));
    }
    let record = o.record.as_ref().map(|path| ssx_view::RecordOptions {
        path: path.clone(),
        every: 1,
        lossless: true,
        run: ssx_view::RunRecord::default(),
    });
    let started = Instant::now();
    let r = replay_run(
        &o.recording,
        &ReplayOptions {
            workers: o.workers,
            until: o.until,
            verify: o.verify,
            scene_dir: o.scene_dir.clone(),
            record,
            mode: match o.mode {
                ModeArg::Fast => Mode::Fast,
                ModeArg::Realtime => Mode::Realtime { factor: 1.0 },
            },
            view: o.live.view.then(|| {
                crate::view_options(
                    format!("ssx replay: {}", o.recording.display()),
                    Default::default(),
                    o.live.view_port,
                    o.live.view_rate,
                )
            }),
        },
        &stop,
    )?;
    let wall = started.elapsed().as_secs_f64();
    println!(
        "replayed '{}': {} steps, {} reset(s), {}in {wall:.2} s{}{}",
        o.recording.display(),
        r.steps,
        r.resets,
        match r.swaps {
            0 => String::new(),
            n => format!("{n} library swap(s), "),
        },
        if r.inputs {
            ", the plugins given the recorded inputs"
        } else {
            ", no inputs in the recording (extensions called as they are)"
        },
        if r.stopped {
            ", stopped by a signal"
        } else {
            ""
        }
    );
    if !r.complete {
        println!(
            "the recording was cut short (a killed run): replayed up to its last complete snapshot"
        );
    }
    if let Some(rec) = &r.recording {
        print!("{}", rec.render_text());
        if let Some(e) = &rec.record_error {
            return Err(SsxError::Config(format!("the recording failed: {e}")));
        }
    }
    if let Some((episode, what)) = &r.asked_otherwise {
        eprintln!(
            "error: the replay's plugins asked otherwise than the run's in episode {episode}, so the recorded inputs no longer apply (stopped there): {}",
            ssx_core::text::escape_controls(what)
        );
        return Ok(ExitCode::from(EXIT_RUN_FAILED));
    }
    if !o.verify {
        return Ok(ExitCode::SUCCESS);
    }
    match r.divergence {
        None => {
            println!("verified: {} snapshots equal to the bit", r.checked);
            Ok(ExitCode::SUCCESS)
        }
        Some(d) => {
            eprintln!(
                "error: the replay differs from the recording at step {} of episode {} (snapshot {}): '{}' was recorded at {:?}, replayed at {:?} (x, y, z, then the rotation's x, y, z, w)",
                d.step,
                d.episode,
                r.checked,
                ssx_core::text::escape_controls(&d.frame),
                d.recorded,
                d.replayed
            );
            Ok(ExitCode::from(EXIT_RUN_FAILED))
        }
    }
}
