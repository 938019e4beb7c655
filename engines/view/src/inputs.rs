//! The `/inputs` channel of a recording: what the extensions answered the drivers and sensors
//! at each step (`ssx_core::tape`), one JSON message a step that had any, never dropped. A
//! replay gives the plugins these answers again instead of calling the extensions
//! (docs/replay.md has the schema for other readers). Bytes are written as lowercase hex.

use serde::{Deserialize, Serialize};
use ssx_core::tape::{Answer, CallPhase, Outcome};

/// The channel's topic, also the value of the run record's `inputs` key.
pub const TOPIC: &str = "/inputs";

/// The channel's JSON schema.
pub(crate) const SCHEMA: &str = r#"{"type":"object","description":"what the extensions answered the drivers and sensors in one step, in artifact order (each artifact's calls in the order its plugins made them)","properties":{"episode":{"type":"integer","description":"resets before this step"},"step":{"type":"integer","description":"the step (1: the episode's first)"},"answers":{"type":"array","items":{"type":"object","properties":{"artifact":{"type":"integer","description":"the calling plugin's artifact, in scene order"},"phase":{"type":"string","enum":["sensors","drivers"]},"extension":{"type":"string"},"service":{"type":"string"},"request":{"type":"string","description":"the request's bytes, hex"},"response":{"type":"string","description":"the bytes written into the caller's buffer, hex"},"len":{"type":"integer","description":"the answer's length as the extension gave it"},"outcome":{"type":"string","enum":["ok","too_long","failed"]}}}}}}"#;

#[derive(Serialize, Deserialize)]
struct Message {
    episode: u64,
    step: u64,
    answers: Vec<Item>,
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

/// A step's answers as recorded: (episode, step, answers).
pub type StepInputs = (u64, u64, Vec<Answer>);

/// A step's answers with their log time (ns), as the stepping thread hands them to the writer.
pub(crate) type Timed = (u64, StepInputs);

/// The message for a step's answers.
pub(crate) fn encode(episode: u64, step: u64, answers: &[Answer]) -> Vec<u8> {
    let message = Message {
        episode,
        step,
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
    Ok((m.episode, m.step, answers))
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    s
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
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
        let data = encode(2, 31, &answers);
        let text = std::str::from_utf8(&data).unwrap();
        assert!(
            text.contains(
                r#""request":"01000000","response":"00ff1007","len":48,"outcome":"too_long""#
            ),
            "{text}"
        );
        assert_eq!(decode(&data).unwrap(), (2, 31, answers));
        assert_eq!(
            decode(br#"{"episode":0,"step":3,"answers":[{"artifact":1,"phase":"drivers","extension":"zenoh","service":"read","request":"0g","response":"","len":0,"outcome":"ok"}]}"#)
                .unwrap_err(),
            "an /inputs message of step 3: a request not in hex: '0g'"
        );
    }
}
