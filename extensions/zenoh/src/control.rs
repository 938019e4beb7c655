//! The control language of `<prefix>/control`: parsed and size-checked on Zenoh's threads (the
//! stepping thread never sees a refused query), and the answers' JSON.

use std::io::Write;

use ssx_sdk::Ctx;
use zenoh::query::Query;

use crate::codec::{BinOut, JsonOut};

/// Longest control command read, in bytes (payload or selector parameters). A longer one is
/// refused before it is copied or parsed, and is never echoed.
pub const MAX_COMMAND: usize = 4096;

/// Most things one `step` may observe.
pub const MAX_OBSERVED: usize = 64;

/// Most steps one `step` command may ask for.
pub const MAX_STEPS: u64 = 1_000_000;

/// What the control queryable accepts. Nothing else: it loads no library the scene does not
/// already use, and writes nothing.
#[derive(Debug, PartialEq, Eq)]
pub enum Command {
    /// Pause the run (and cut short a `step` in progress).
    Pause,
    /// Resume real-time (or fast) stepping (and cut short a `step` in progress).
    Resume,
    /// Run N steps while paused; answer with what `observe` names, after the last one.
    Step {
        /// Steps to run.
        n: u64,
        /// `artifact` (its first body's state) or `artifact/sensor` (that sensor's reading).
        observe: Vec<String>,
        /// Answer in the binary layout ([`step_answer_binary`]) instead of JSON.
        binary: bool,
    },
    /// The live statistics.
    Stats,
    /// The artifacts.
    List,
    /// Swap the drivers and sensors from a library for a new build of its file (one the run
    /// already uses: this loads nothing else); answered once it is switched in or refused.
    Reload {
        /// As the scene names it, its absolute path, or its file name.
        library: String,
    },
    /// Start the run over from step 0, with the scene's seed or a new one; answered once done.
    Reset {
        /// The new seed; None keeps the scene's.
        seed: Option<u64>,
    },
}

/// The command list every refusal ends with.
pub const KNOWN: &str = "known: pause, resume, step N [observe...] (N from 1 to 1000000, while paused), stats, list, reload LIBRARY, reset [SEED]";

/// A command from a query's payload, as text (`step 10`) or JSON (`{"cmd":"step","n":10}`), or
/// from its selector parameters (`?cmd=step;n=10`). Runs on Zenoh's thread; a payload over
/// [`MAX_COMMAND`] bytes is refused without being copied.
pub fn parse_query(q: &Query) -> Result<Command, String> {
    let text = match q.payload() {
        Some(p) => {
            if p.len() > MAX_COMMAND {
                return Err(too_long(p.len()));
            }
            String::from_utf8(p.to_bytes().into_owned())
                .map_err(|_| format!("the command is not UTF-8 text; {KNOWN}"))?
        }
        None => {
            let params = q.parameters();
            if params.as_str().len() > MAX_COMMAND {
                return Err(too_long(params.as_str().len()));
            }
            match (params.get("cmd"), params.get("n").or(params.get("library"))) {
                (Some(c), Some(n)) => format!("{c} {n}"),
                (Some(c), None) => c.to_string(),
                _ => String::new(),
            }
        }
    };
    parse(&text)
}

/// A command from a message's payload (`P/control/in`), as [`parse_query`] reads a payload.
pub fn parse_bytes(payload: &zenoh::bytes::ZBytes) -> Result<Command, String> {
    if payload.len() > MAX_COMMAND {
        return Err(too_long(payload.len()));
    }
    let text = String::from_utf8(payload.to_bytes().into_owned())
        .map_err(|_| format!("the command is not UTF-8 text; {KNOWN}"))?;
    parse(&text)
}

fn too_long(len: usize) -> String {
    format!("command too long ({len} bytes, at most {MAX_COMMAND}); {KNOWN}")
}

/// A command from its text.
pub fn parse(text: &str) -> Result<Command, String> {
    let text = text.trim();
    if text.len() > MAX_COMMAND {
        return Err(too_long(text.len()));
    }
    let clip = |s: &str| ssx_sdk::text::clip(s, 64);
    let mut binary = false;
    let (cmd, n, observe) = if text.starts_with('{') {
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct J {
            cmd: String,
            #[serde(default)]
            n: Option<u64>,
            #[serde(default)]
            observe: Option<Vec<String>>,
            #[serde(default)]
            library: Option<String>,
            #[serde(default)]
            seed: Option<u64>,
            #[serde(default)]
            encoding: Option<String>,
        }
        let j: J = serde_json::from_str(text).map_err(|e| {
            format!(
                "invalid command JSON ({}); {KNOWN}",
                ssx_sdk::text::clip(&e.to_string(), 160)
            )
        })?;
        let arg = j.n.or(j.seed).map(|n| n.to_string()).or(j.library);
        binary = match j.encoding.as_deref() {
            None | Some("json") => false,
            Some("binary") if j.cmd == "step" => true,
            Some(e) => {
                return Err(format!(
                    "encoding '{}': a step answers in \"json\" or \"binary\"; {KNOWN}",
                    clip(e)
                ));
            }
        };
        (j.cmd, arg, j.observe)
    } else {
        let mut words = text.split_whitespace();
        let cmd = words.next().unwrap_or("").to_string();
        let n = words.next().map(str::to_string);
        let rest: Vec<String> = words.map(str::to_string).collect();
        (cmd, n, (!rest.is_empty()).then_some(rest))
    };
    let no_arg = |c: Command| match (&n, &observe) {
        (None, None) => Ok(c),
        _ => Err(format!("'{}' takes no argument; {KNOWN}", clip(&cmd))),
    };
    match cmd.as_str() {
        "pause" => no_arg(Command::Pause),
        "resume" => no_arg(Command::Resume),
        "stats" => no_arg(Command::Stats),
        "list" => no_arg(Command::List),
        "step" => {
            let n = match n.as_deref().map(str::parse::<u64>) {
                Some(Ok(n)) if (1..=MAX_STEPS).contains(&n) => n,
                _ => return Err(format!("step needs a count from 1 to {MAX_STEPS}; {KNOWN}")),
            };
            let observe = observe.unwrap_or_default();
            if observe.len() > MAX_OBSERVED {
                return Err(format!(
                    "step may observe at most {MAX_OBSERVED} things, got {}",
                    observe.len()
                ));
            }
            Ok(Command::Step { n, observe, binary })
        }
        "reset" => match (n.as_deref().map(str::parse::<u64>), observe) {
            (None, None) => Ok(Command::Reset { seed: None }),
            (Some(Ok(seed)), None) => Ok(Command::Reset { seed: Some(seed) }),
            _ => Err(format!(
                "reset takes at most a seed (a whole number from 0 to {}); {KNOWN}",
                u64::MAX
            )),
        },
        "reload" => match (n, observe) {
            (Some(library), None) => Ok(Command::Reload { library }),
            _ => Err(format!("reload needs one library name; {KNOWN}")),
        },
        "" => Err(format!("empty command; {KNOWN}")),
        other => Err(format!("unknown command '{}'; {KNOWN}", clip(other))),
    }
}

/// What a `step` observes, resolved against the world.
#[derive(Debug)]
pub enum Observed {
    /// The first body's state of an artifact.
    State { name: String, artifact: u32 },
    /// A sensor's newest reading.
    Reading {
        name: String,
        artifact: u32,
        sensor: u32,
    },
}

/// Resolves `step`'s `observe` names; the first unknown one is an error naming it.
pub fn resolve(ctx: &Ctx<'_>, names: &[String]) -> Result<Vec<Observed>, String> {
    let clip = |s: &str| ssx_sdk::text::clip(s, 64);
    let artifact = |a: &str, whole: &str| {
        ctx.artifact_by_name(a).map_err(|_| {
            format!(
                "step: cannot observe '{}': no artifact '{}'",
                clip(whole),
                clip(a)
            )
        })
    };
    names
        .iter()
        .map(|name| match name.split_once('/') {
            None => Ok(Observed::State {
                name: name.clone(),
                artifact: artifact(name, name)?,
            }),
            Some((a, s)) => {
                let artifact = artifact(a, name)?;
                let sensor = ctx.sensor_index(artifact, s).map_err(|_| {
                    format!(
                        "step: cannot observe '{}': artifact '{}' has no sensor '{}'",
                        clip(name),
                        clip(a),
                        clip(s)
                    )
                })?;
                Ok(Observed::Reading {
                    name: name.clone(),
                    artifact,
                    sensor,
                })
            }
        })
        .collect()
}

/// `{"ok":true,"state":..,"step":..,"time":..}`, then `extra` fields, then `}`.
pub fn run_state(paused: bool, step: u64, time: f64, extra: impl FnOnce(&mut Vec<u8>)) -> String {
    let mut b = Vec::with_capacity(128);
    let mut j = JsonOut(&mut b);
    j.open();
    j.bool("ok", true);
    j.str("state", if paused { "paused" } else { "running" });
    j.u64("step", step);
    j.f64("time", time);
    j.close();
    b.pop();
    extra(&mut b);
    b.push(b'}');
    String::from_utf8(b).expect("JSON is UTF-8")
}

/// The answer to a `reset`: the run state after it (step 0), `"reset": true` and the seed.
pub fn reset_answer(paused: bool, step: u64, time: f64, seed: u64) -> String {
    run_state(paused, step, time, |b| {
        b.extend_from_slice(format!(",\"reset\":true,\"seed\":{seed}").as_bytes());
    })
}

/// The answer to a finished `step`: the run state and, under `"observe"`, each observed
/// state (`{"position","orientation","linear_velocity","angular_velocity"}`) or reading
/// (`{"taken","values"}`), as the step's publications carry them.
/// `remaining` > 0: a `pause` or `resume` cut it short with that many steps not run
/// (`"interrupted": true, "remaining": n`).
pub fn step_answer(
    ctx: &Ctx<'_>,
    step: u64,
    time: f64,
    observed: &[Observed],
    remaining: u64,
) -> String {
    run_state(true, step, time, |b| {
        if remaining > 0 {
            let _ = write!(b, ",\"interrupted\":true,\"remaining\":{remaining}");
        }
        if observed.is_empty() {
            return;
        }
        b.extend_from_slice(b",\"observe\":");
        let mut j = JsonOut(b);
        j.open();
        for o in observed {
            match o {
                Observed::State { name, artifact } => match ctx.body_state(*artifact, 0) {
                    Ok(s) => {
                        j.key(name);
                        j.open();
                        j.array("position", &s.position);
                        j.array("orientation", &s.orientation);
                        j.array("linear_velocity", &s.linear_velocity);
                        j.array("angular_velocity", &s.angular_velocity);
                        j.close();
                        j.comma();
                    }
                    Err(_) => j.null(name),
                },
                Observed::Reading {
                    name,
                    artifact,
                    sensor,
                } => match ctx.reading(*artifact, *sensor) {
                    Ok((values, taken)) => {
                        j.key(name);
                        j.open();
                        j.u64("taken", taken);
                        j.array("values", values);
                        j.close();
                        j.comma();
                    }
                    Err(_) => j.null(name),
                },
            }
        }
        j.close();
    })
}

/// `{"ok":false,"error":e}`.
/// A finished `step`'s answer in the binary layout (docs/zenoh.md "Lockstep"), little-endian:
/// u64 step, f64 time, u32 observed count, u32 steps not run (a `pause` cut it short), then
/// per observed name in order: a state as 13 f64 (position, orientation w x y z, linear and
/// angular velocity; NaN when it cannot be read), or a reading as u64 step taken, u32 count,
/// u32 0 and count f64 (the sensor stream's binary layout without its step and time).
pub fn step_answer_binary(
    ctx: &Ctx<'_>,
    step: u64,
    time: f64,
    observed: &[Observed],
    remaining: u64,
) -> Vec<u8> {
    let mut b = Vec::with_capacity(24 + observed.len() * 104);
    let mut o = BinOut(&mut b);
    o.u64(step);
    o.f64s(&[time]);
    o.u32(observed.len() as u32);
    o.u32(remaining.min(u64::from(u32::MAX)) as u32);
    for x in observed {
        match x {
            Observed::State { artifact, .. } => match ctx.body_state(*artifact, 0) {
                Ok(s) => {
                    o.f64s(&s.position);
                    o.f64s(&s.orientation);
                    o.f64s(&s.linear_velocity);
                    o.f64s(&s.angular_velocity);
                }
                Err(_) => o.f64s(&[f64::NAN; 13]),
            },
            Observed::Reading {
                artifact, sensor, ..
            } => {
                let (values, taken) = ctx.reading(*artifact, *sensor).unwrap_or((&[], 0));
                o.u64(taken);
                o.u32(values.len() as u32);
                o.u32(0);
                o.f64s(values);
            }
        }
    }
    b
}

pub fn error(e: &str) -> String {
    let mut b = Vec::new();
    let mut j = JsonOut(&mut b);
    j.open();
    j.bool("ok", false);
    j.str("error", e);
    j.close();
    String::from_utf8(b).expect("JSON is UTF-8")
}

/// `{"ok":true,"artifacts":[{"name","bodies"}]}`.
pub fn list(ctx: &Ctx<'_>) -> Result<String, String> {
    let mut b = Vec::new();
    b.extend_from_slice(b"{\"ok\":true,\"artifacts\":[");
    for a in 0..ctx.artifact_count()? {
        if a > 0 {
            b.push(b',');
        }
        let mut j = JsonOut(&mut b);
        j.open();
        j.str("name", &ctx.artifact_name(a)?);
        j.u64("bodies", u64::from(ctx.body_count(a)?));
        j.close();
    }
    b.extend_from_slice(b"]}");
    Ok(String::from_utf8(b).expect("JSON is UTF-8"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_control_language_is_small_and_closed() {
        assert_eq!(parse("pause"), Ok(Command::Pause));
        let step = |n, observe: &[&str]| Command::Step {
            n,
            observe: observe.iter().map(|s| s.to_string()).collect(),
            binary: false,
        };
        assert_eq!(parse(" step 10 "), Ok(step(10, &[])));
        assert_eq!(parse(r#"{"cmd":"step","n":3}"#), Ok(step(3, &[])));
        assert_eq!(
            parse("step 1 rover rover/range"),
            Ok(step(1, &["rover", "rover/range"]))
        );
        assert_eq!(
            parse(r#"{"cmd":"step","n":1,"observe":["rover"]}"#),
            Ok(step(1, &["rover"]))
        );
        assert_eq!(parse("list"), Ok(Command::List));
        assert_eq!(
            parse(r#"{"cmd":"step","n":2,"observe":["rover"],"encoding":"binary"}"#),
            Ok(Command::Step {
                n: 2,
                observe: vec!["rover".into()],
                binary: true
            })
        );
        assert_eq!(
            parse(r#"{"cmd":"step","n":2,"encoding":"xml"}"#),
            Err(format!(
                "encoding 'xml': a step answers in \"json\" or \"binary\"; {KNOWN}"
            ))
        );
        assert_eq!(parse("reset"), Ok(Command::Reset { seed: None }));
        assert_eq!(parse("reset 42"), Ok(Command::Reset { seed: Some(42) }));
        assert_eq!(
            parse(r#"{"cmd":"reset","seed":7}"#),
            Ok(Command::Reset { seed: Some(7) })
        );
        let no_seed = format!(
            "reset takes at most a seed (a whole number from 0 to 18446744073709551615); {KNOWN}"
        );
        assert_eq!(parse("reset -1"), Err(no_seed.clone()));
        assert_eq!(parse("reset 1 2"), Err(no_seed));
        assert_eq!(
            parse("load /tmp/evil.so"),
            Err(format!("unknown command 'load'; {KNOWN}"))
        );
        assert_eq!(
            parse("step 0"),
            Err(format!("step needs a count from 1 to 1000000; {KNOWN}"))
        );
        assert_eq!(
            parse("pause now"),
            Err(format!("'pause' takes no argument; {KNOWN}"))
        );
        assert_eq!(
            parse(r#"{"cmd":"pause","n":3}"#),
            Err(format!("'pause' takes no argument; {KNOWN}"))
        );
        assert!(
            parse(r#"{"cmd":"pause","file":"/etc/passwd"}"#)
                .unwrap_err()
                .starts_with("invalid command JSON (unknown field `file`")
        );
        let many = format!("step 1 {}", vec!["a"; 65].join(" "));
        assert_eq!(
            parse(&many),
            Err("step may observe at most 64 things, got 65".into())
        );
        // Long or hostile commands are never echoed whole or raw.
        let long = "x".repeat(1 << 20);
        assert_eq!(
            parse(&long),
            Err(format!(
                "command too long (1048576 bytes, at most 4096); {KNOWN}"
            ))
        );
        assert_eq!(
            parse(&format!("\u{1b}[2J{}", "y".repeat(100))),
            Err(format!(
                "unknown command '\\u{{1b}}[2J{}... (104 bytes)'; {KNOWN}",
                "y".repeat(60)
            ))
        );
    }

    #[test]
    fn answers_are_json_with_their_fields_in_order() {
        let s = run_state(true, 7, 0.007, |_| {});
        assert_eq!(s, r#"{"ok":true,"state":"paused","step":7,"time":0.007}"#);
        let v: serde_json::Value = serde_json::from_str(&error("a \"quoted\"\n thing")).unwrap();
        assert_eq!(v["error"], "a \"quoted\"\n thing");
    }
}
