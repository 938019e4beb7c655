//! Settings for hardware-in-the-loop runs: SCHED_FIFO priority and CPU affinity for the threads
//! that step, and locked memory. Each says what it did; without permission it warns and the
//! run goes on, unless `--strict-rt` makes any failure an error.

use ssx_core::{Environment, SsxError};

/// What `ssxd run` asked for.
pub struct RtOptions {
    pub priority: Option<i32>,
    pub affinity: Option<Vec<usize>>,
    pub lock_memory: bool,
    pub strict: bool,
}

/// A parsed `--cpu-affinity` list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuList(pub Vec<usize>);

/// CPUs a list may name: the kernel's cpu_set_t.
const MAX_CPU: usize = libc::CPU_SETSIZE as usize;

/// `0,2-3` → [0, 2, 3].
pub fn parse_cpu_list(text: &str) -> Result<CpuList, String> {
    let shown = ssx_core::text::clip(text, 64);
    let too_high = |c: usize| {
        if c >= MAX_CPU {
            Err(format!(
                "invalid CPU list '{shown}': CPUs are numbered 0 to {}",
                MAX_CPU - 1
            ))
        } else {
            Ok(())
        }
    };
    let mut cpus = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        let bad = || format!("invalid CPU list '{shown}': expected numbers and ranges like 0,2-3");
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (
                    a.trim().parse().map_err(|_| bad())?,
                    b.trim().parse().map_err(|_| bad())?,
                );
                if a > b {
                    return Err(bad());
                }
                // Checked before expanding, so a huge range is refused, not allocated.
                too_high(a.max(b))?;
                cpus.extend(a..=b);
            }
            None => {
                let c = part.parse().map_err(|_| bad())?;
                too_high(c)?;
                cpus.push(c);
            }
        }
        if cpus.len() > MAX_CPU {
            return Err(format!(
                "invalid CPU list '{}': more than {MAX_CPU} entries",
                ssx_core::text::clip(text, 64)
            ));
        }
    }
    Ok(CpuList(cpus))
}

fn os_error() -> String {
    let e = std::io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EPERM) => format!(
            "{e} (needs root, CAP_SYS_NICE or an rtprio limit in /etc/security/limits.conf)"
        ),
        _ => e.to_string(),
    }
}

fn set_fifo(priority: i32) -> Result<(), String> {
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: plain syscall on the calling thread (pid 0) with a valid parameter struct.
    if unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) } == 0 {
        Ok(())
    } else {
        Err(os_error())
    }
}

fn set_affinity(cpu: usize) -> Result<(), String> {
    // SAFETY: a zeroed cpu_set_t is the empty set; CPU_SET stays within CPU_SETSIZE (checked
    // when parsing); sched_setaffinity reads the set for the calling thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0 {
            Ok(())
        } else {
            Err(os_error())
        }
    }
}

/// Applies the options to the environment's stepping threads and the process.
pub fn apply(env: &Environment, o: &RtOptions) -> Result<(), SsxError> {
    let mut failures = Vec::new();
    let threads = env.workers();
    if let Some(p) = o.priority {
        let results = env.on_stepping_threads(&|_| set_fifo(p).err());
        match results.iter().flatten().next() {
            None => tracing::info!(
                "real time: SCHED_FIFO priority {p} on the stepping thread and its {} worker(s)",
                threads - 1
            ),
            Some(e) => failures.push(format!("--rt-priority {p}: cannot set SCHED_FIFO: {e}")),
        }
    }
    if let Some(cpus) = &o.affinity {
        let results = env.on_stepping_threads(&|k| set_affinity(cpus[k % cpus.len()]).err());
        let placed: Vec<String> = (0..threads)
            .map(|k| cpus[k % cpus.len()].to_string())
            .collect();
        match results
            .iter()
            .enumerate()
            .find_map(|(k, e)| e.as_ref().map(|e| (k, e)))
        {
            None => tracing::info!(
                "real time: stepping thread on CPU {}, workers on CPUs [{}]",
                placed[0],
                placed[1..].join(", ")
            ),
            Some((k, e)) => failures.push(format!(
                "--cpu-affinity: cannot pin thread {k} to CPU {}: {e}",
                cpus[k % cpus.len()]
            )),
        }
    }
    if o.lock_memory {
        // SAFETY: plain syscall.
        if unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) } == 0 {
            tracing::info!("real time: memory locked (mlockall)");
        } else {
            failures.push(format!("--lock-memory: mlockall failed: {}", os_error()));
        }
    }
    if failures.is_empty() {
        return Ok(());
    }
    if o.strict {
        return Err(SsxError::Config(format!(
            "{} (--strict-rt)",
            failures.join("; ")
        )));
    }
    for f in &failures {
        tracing::warn!("{f}; running without it");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0,2-3"), Ok(CpuList(vec![0, 2, 3])));
        assert_eq!(parse_cpu_list("1"), Ok(CpuList(vec![1])));
        assert_eq!(
            parse_cpu_list("3-1"),
            Err("invalid CPU list '3-1': expected numbers and ranges like 0,2-3".into())
        );
        assert!(parse_cpu_list("a").is_err());
        assert!(parse_cpu_list("99999").is_err());
    }
}
