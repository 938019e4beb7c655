//! The `/inputs` channel of a recording: what the extensions answered the drivers and sensors
//! at each step (`ssx_core::tape`), and the library swaps made at its start, one JSON message a
//! step that had any, never dropped. A replay gives the plugins these answers again instead of
//! calling the extensions, and swaps in the same builds at the same steps (docs/replay.md has
//! the schema for other readers). Bytes are written as lowercase hex. Each build a swap
//! involved is attached to the recording once, under [`build_name`].

use serde::{Deserialize, Serialize};
use ssx_core::tape::{Answer, CallPhase, Outcome};
use ssx_core::text::{hex, unhex};

/// The channel's topic, also the value of the run record's `inputs` key.
pub const TOPIC: &str = "/inputs";

/// The metadata record naming each driver and sensor library the run opened, by path, with the
/// SHA-256 of its build (lowercase hex).
pub const LIBRARIES: &str = "ssx.libraries";

/// The channel's JSON schema.
pub(crate) const SCHEMA: &str = r#"{"type":"object","description":"what the extensions answered the drivers and sensors in one step, in artifact order (each artifact's calls in the order its plugins made them)","properties":{"episode":{"type":"integer","description":"resets before this step"},"step":{"type":"integer","description":"the step (1: the episode's first)"},"answers":{"type":"array","items":{"type":"object","properties":{"artifact":{"type":"integer","description":"the calling plugin's artifact, in scene order"},"phase":{"type":"string","enum":["sensors","drivers"]},"extension":{"type":"string"},"service":{"type":"string"},"request":{"type":"string","description":"the request's bytes, hex"},"response":{"type":"string","description":"the bytes written into the caller's buffer, hex"},"len":{"type":"integer","description":"the answer's length as the extension gave it"},"outcome":{"type":"string","enum":["ok","too_long","failed"]}}}},"swaps":{"type":"array","description":"library swaps made at the start of this step, before its physics (absent when none)","items":{"type":"object","properties":{"library":{"type":"string","description":"the library's path as the run found it"},"sha256":{"type":"string","description":"the new build's SHA-256, hex; its bytes are the attachment named library/SHA256/FILE_NAME"}}}}}}"#;

#[derive(Serialize, Deserialize)]
struct Message {
    episode: u64,
    step: u64,
    answers: Vec<Item>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    swaps: Vec<RecordedSwap>,
}

/// A library swap as recorded: the library, and the build swapped in (its bytes are attached
/// to the recording under [`build_name`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedSwap {
    /// The library's path, as the run found it.
    pub library: String,
    /// The new build's SHA-256, lowercase hex.
    pub sha256: String,
}

/// The name a build is attached under: `library/SHA256/FILE_NAME`.
pub fn build_name(sha256: &str, library: &std::path::Path) -> String {
    let file = library.file_name().unwrap_or_default().to_string_lossy();
    format!("{BUILDS}{sha256}/{file}")
}

/// The start of every attached build's name.
pub const BUILDS: &str = "library/";

/// A build's SHA-256 from its attachment's name, if it is one ([`build_name`]).
pub fn build_sha256(name: &str) -> Option<&str> {
    let rest = name.strip_prefix(BUILDS)?;
    let (sha, _file) = rest.split_once('/')?;
    (sha.len() == 64 && sha.bytes().all(|b| b.is_ascii_hexdigit())).then_some(sha)
}

#[derive(Serialize, Deserialize)]
struct Item {
    artifact: u32,
    phase: String,
    extension: String,
    service: String,
    request: String,
    response: String,
    len: u64,
    outcome: String,
}

/// A step's inputs as recorded.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepInputs {
    /// The episode (resets before the step).
    pub episode: u64,
    /// The step (1: the episode's first).
    pub step: u64,
    /// What the extensions answered, in artifact order.
    pub answers: Vec<Answer>,
    /// The library swaps made at the step's start.
    pub swaps: Vec<RecordedSwap>,
}

/// A step's inputs as the stepping thread hands them to the writer: their log time (ns), the
/// episode and step, the answers, and the swaps with their builds (hashed and attached on the
/// writer's thread).
pub(crate) struct Pending {
    pub(crate) at: u64,
    pub(crate) episode: u64,
    pub(crate) step: u64,
    pub(crate) answers: Vec<Answer>,
    pub(crate) swaps: Vec<ssx_core::SwappedBuild>,
}

/// The message for a step's inputs.
pub(crate) fn encode(
    episode: u64,
    step: u64,
    answers: &[Answer],
    swaps: Vec<RecordedSwap>,
) -> Vec<u8> {
    let message = Message {
        episode,
        step,
        swaps,
        answers: (answers.iter())
            .map(|a| Item {
                artifact: a.artifact,
                phase: a.phase.name().into(),
                extension: a.extension.clone(),
                service: a.service.clone(),
                request: hex(&a.request),
                response: hex(&a.response),
                len: a.len,
                outcome: a.outcome.name().into(),
            })
            .collect(),
    };
    serde_json::to_vec(&message).expect("plain data serialises")
}

/// A message read back, or what is wrong with it.
pub(crate) fn decode(data: &[u8]) -> Result<StepInputs, String> {
    let m: Message =
        serde_json::from_slice(data).map_err(|e| format!("an /inputs message: {e}"))?;
    let bad = |what: &str, value: &str| {
        format!("an /inputs message of step {}: {what} '{value}'", m.step)
    };
    let mut answers = Vec::with_capacity(m.answers.len());
    for i in &m.answers {
        answers.push(Answer {
            phase: CallPhase::parse(&i.phase).ok_or_else(|| bad("no phase", &i.phase))?,
            artifact: i.artifact,
            extension: i.extension.clone(),
            service: i.service.clone(),
            request: unhex(&i.request).ok_or_else(|| bad("a request not in hex:", &i.request))?,
            response: unhex(&i.response)
                .ok_or_else(|| bad("a response not in hex:", &i.response))?,
            len: i.len,
            outcome: Outcome::parse(&i.outcome).ok_or_else(|| bad("no outcome", &i.outcome))?,
        });
    }
    for w in &m.swaps {
        if w.sha256.len() != 64 || unhex(&w.sha256).is_none() {
            return Err(bad("a swap's sha256 is not 64 hex digits:", &w.sha256));
        }
    }
    Ok(StepInputs {
        episode: m.episode,
        step: m.step,
        answers,
        swaps: m.swaps,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_steps_answers_read_back_as_they_were_written() {
        let answers = vec![
            Answer {
                phase: CallPhase::Drivers,
                artifact: 4,
                extension: "zenoh".into(),
                service: "read".into(),
                request: vec![1, 0, 0, 0],
                response: vec![0, 255, 16, 7],
                len: 48,
                outcome: Outcome::TooLong,
            },
            Answer {
                phase: CallPhase::Sensors,
                artifact: 9,
                extension: "explore".into(),
                service: "scan".into(),
                request: vec![],
                response: vec![],
                len: 0,
                outcome: Outcome::Failed,
            },
        ];
        let swaps = vec![RecordedSwap {
            library: "/lab/libpusher.so".into(),
            sha256: "ab".repeat(32),
        }];
        let data = encode(2, 31, &answers, swaps.clone());
        let text = std::str::from_utf8(&data).unwrap();
        assert!(
            text.contains(
                r#""request":"01000000","response":"00ff1007","len":48,"outcome":"too_long""#
            ),
            "{text}"
        );
        let read = decode(&data).unwrap();
        assert_eq!((read.episode, read.step), (2, 31));
        assert_eq!((read.answers, read.swaps), (answers.clone(), swaps));
        // No swaps, no key.
        let plain = encode(0, 1, &answers, Vec::new());
        assert!(!std::str::from_utf8(&plain).unwrap().contains("swaps"));
        assert_eq!(
            decode(br#"{"episode":0,"step":3,"answers":[],"swaps":[{"library":"/l.so","sha256":"12"}]}"#)
                .unwrap_err(),
            "an /inputs message of step 3: a swap's sha256 is not 64 hex digits: '12'"
        );
        assert_eq!(
            build_name(&"ab".repeat(32), std::path::Path::new("/lab/libpusher.so")),
            format!("library/{}/libpusher.so", "ab".repeat(32))
        );
        assert_eq!(
            build_sha256(&build_name(
                &"ab".repeat(32),
                std::path::Path::new("/l/x.so")
            )),
            Some(&*"ab".repeat(32))
        );
        assert_eq!(build_sha256("scene.json"), None);
        assert_eq!(
            decode(br#"{"episode":0,"step":3,"answers":[{"artifact":1,"phase":"drivers","extension":"zenoh","service":"read","request":"0g","response":"","len":0,"outcome":"ok"}]}"#)
                .unwrap_err(),
            "an /inputs message of step 3: a request not in hex: '0g'"
        );
    }
}
