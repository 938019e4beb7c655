//! Payloads: checking inbound messages against a subscription's spec (on Zenoh's threads), and
//! writing outbound ones into reused buffers (on the stepping thread, without allocating once
//! the buffers have grown to size).

use std::io::Write;

use serde::Deserialize;
use ssx_sdk::bus::MAX_VALUES;

use crate::config::Encoding;

/// The subscription id of a `read` request (`ssx_sdk::bus`: a little-endian u32).
pub fn read_request(request: &[u8]) -> Result<u32, String> {
    request
        .try_into()
        .map(u32::from_le_bytes)
        .map_err(|_| "read: the request is a 4-byte id".into())
}

/// One field of a subscription spec (see `ssx_sdk::bus::Field`).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FieldSpec {
    /// JSON name.
    pub name: String,
    /// Number of values.
    #[serde(default = "d_len")]
    pub len: usize,
    /// Largest magnitude.
    #[serde(default = "d_max")]
    pub max: f64,
    /// Must be present (else zeros).
    #[serde(default = "d_true")]
    pub required: bool,
}

fn d_len() -> usize {
    1
}
fn d_max() -> f64 {
    1e6
}
fn d_true() -> bool {
    true
}

/// What a subscriber asks for (the `subscribe` service's request).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SubSpec {
    /// Key, relative to the prefix (absolute with a leading `/`).
    pub key: String,
    /// Fields in order.
    pub fields: Vec<FieldSpec>,
    /// 0: latest-value mailbox; n: a queue of n.
    #[serde(default)]
    pub queue: u32,
    /// Payload format.
    #[serde(default)]
    pub encoding: Encoding,
}

impl SubSpec {
    /// Parses and checks a spec.
    pub fn parse(request: &[u8]) -> Result<SubSpec, String> {
        let s: SubSpec =
            serde_json::from_slice(request).map_err(|e| format!("subscribe: invalid spec: {e}"))?;
        let total: usize = s.fields.iter().map(|f| f.len).sum();
        if s.fields.is_empty() || total > MAX_VALUES || s.fields.iter().any(|f| f.len == 0) {
            return Err(format!(
                "subscribe '{}': 1 to {MAX_VALUES} values in all, each field at least 1",
                s.key
            ));
        }
        if s.fields.iter().any(|f| !(f.max.is_finite() && f.max > 0.0)) {
            return Err(format!(
                "subscribe '{}': every field's max must be a positive number",
                s.key
            ));
        }
        if s.queue > 65536 {
            return Err(format!(
                "subscribe '{}': queue must be at most 65536",
                s.key
            ));
        }
        Ok(s)
    }

    /// Total values per message.
    pub fn width(&self) -> usize {
        self.fields.iter().map(|f| f.len).sum()
    }

    /// Decodes and checks one message into `out` (the first `width()` values).
    pub fn decode(&self, payload: &[u8], out: &mut [f64; MAX_VALUES]) -> Result<(), String> {
        match self.encoding {
            Encoding::Binary => self.decode_binary(payload, out),
            Encoding::Json => self.decode_json(payload, out),
        }
    }

    fn decode_binary(&self, payload: &[u8], out: &mut [f64; MAX_VALUES]) -> Result<(), String> {
        let n = self.width();
        if payload.len() != 8 * n {
            return Err(format!(
                "{} bytes, expected {} ({n} little-endian f64)",
                payload.len(),
                8 * n
            ));
        }
        for (v, b) in out.iter_mut().zip(payload.chunks_exact(8)) {
            *v = f64::from_le_bytes(b.try_into().expect("8 bytes"));
        }
        let mut at = 0;
        for f in &self.fields {
            check_values(f, &out[at..at + f.len])?;
            at += f.len;
        }
        Ok(())
    }

    fn decode_json(&self, payload: &[u8], out: &mut [f64; MAX_VALUES]) -> Result<(), String> {
        let value: serde_json::Value =
            serde_json::from_slice(payload).map_err(|e| format!("not JSON: {e}"))?;
        let serde_json::Value::Object(map) = value else {
            return Err("not a JSON object".into());
        };
        if let Some(k) = map
            .keys()
            .find(|k| !self.fields.iter().any(|f| &f.name == *k))
        {
            let known: Vec<&str> = self.fields.iter().map(|f| f.name.as_str()).collect();
            return Err(format!(
                "unknown field '{k}' (expected: {})",
                known.join(", ")
            ));
        }
        let mut at = 0;
        for f in &self.fields {
            let dst = &mut out[at..at + f.len];
            at += f.len;
            let Some(v) = map.get(&f.name) else {
                if f.required {
                    return Err(format!("missing field '{}'", f.name));
                }
                dst.fill(0.0);
                continue;
            };
            match (v, f.len) {
                (serde_json::Value::Number(n), 1) => dst[0] = number(n, &f.name)?,
                (serde_json::Value::Array(a), len) if a.len() == len => {
                    for (d, x) in dst.iter_mut().zip(a) {
                        *d = match x {
                            serde_json::Value::Number(n) => number(n, &f.name)?,
                            _ => return Err(format!("field '{}' holds a non-number", f.name)),
                        };
                    }
                }
                (_, 1) => return Err(format!("field '{}' must be a number", f.name)),
                (_, len) => {
                    return Err(format!(
                        "field '{}' must be an array of {len} numbers",
                        f.name
                    ));
                }
            }
            check_values(f, dst)?;
        }
        Ok(())
    }
}

impl SubSpec {
    /// Fills `out` from fields given by name (a message of another encoding mapped onto this
    /// spec): every spec field must be there with one value per element, and within its limits.
    /// Takes the values of one message in field order, as many as [`SubSpec::width`] (an
    /// embedding program's commands: the Python package's batched form), checked like a JSON
    /// message.
    pub fn from_values(&self, values: &[f64], out: &mut [f64; MAX_VALUES]) -> Result<(), String> {
        if values.len() != self.width() {
            let names: Vec<String> = self
                .fields
                .iter()
                .map(|f| match f.len {
                    1 => f.name.clone(),
                    n => format!("{} [{n}]", f.name),
                })
                .collect();
            return Err(format!(
                "{} values given; the subscriber takes {} ({})",
                values.len(),
                self.width(),
                names.join(", ")
            ));
        }
        let mut at = 0;
        for f in &self.fields {
            let dst = &mut out[at..at + f.len];
            dst.copy_from_slice(&values[at..at + f.len]);
            at += f.len;
            check_values(f, dst)?;
        }
        Ok(())
    }

    /// Takes the values of one message by field name (the ROS 2 `cmd_vel` bridge), checked
    /// like a JSON message.
    pub fn from_named(
        &self,
        fields: &[(&str, f64)],
        out: &mut [f64; MAX_VALUES],
    ) -> Result<(), String> {
        let mut at = 0;
        for f in &self.fields {
            let dst = &mut out[at..at + f.len];
            at += f.len;
            match fields.iter().find(|(name, _)| *name == f.name) {
                Some(&(_, v)) if f.len == 1 => dst[0] = v,
                Some(_) => {
                    return Err(format!(
                        "field '{}' needs {} values; this message gives one",
                        f.name, f.len
                    ));
                }
                None if f.required => {
                    return Err(format!(
                        "the subscriber needs field '{}', which this message does not carry",
                        f.name
                    ));
                }
                None => dst.fill(0.0),
            }
            check_values(f, dst)?;
        }
        Ok(())
    }
}

fn number(n: &serde_json::Number, field: &str) -> Result<f64, String> {
    n.as_f64()
        .ok_or_else(|| format!("field '{field}' holds a number out of range"))
}

fn check_values(f: &FieldSpec, values: &[f64]) -> Result<(), String> {
    for v in values {
        if !v.is_finite() {
            return Err(format!("field '{}' is not finite", f.name));
        }
        if v.abs() > f.max {
            return Err(format!(
                "field '{}' = {v} is beyond its limit {}",
                f.name, f.max
            ));
        }
    }
    Ok(())
}

/// Writes JSON into a reused buffer: numbers with Rust's shortest round-trip formatting (no
/// allocation), non-finite numbers as `null`.
pub struct JsonOut<'a>(pub &'a mut Vec<u8>);

impl JsonOut<'_> {
    /// `{`
    pub fn open(&mut self) {
        self.0.push(b'{');
    }
    /// `}`
    pub fn close(&mut self) {
        if self.0.last() == Some(&b',') {
            self.0.pop();
        }
        self.0.push(b'}');
    }
    /// `"k":` (escaped), for a value written next (an object: [`JsonOut::open`], then
    /// [`JsonOut::close`] and [`JsonOut::comma`]).
    pub fn key(&mut self, k: &str) {
        self.quoted(k);
        self.0.push(b':');
    }
    /// `,` after a nested value.
    pub fn comma(&mut self) {
        self.0.push(b',');
    }
    /// `"k":null,`
    pub fn null(&mut self, k: &str) {
        self.key(k);
        self.0.extend_from_slice(b"null,");
    }
    fn quoted(&mut self, v: &str) {
        self.0.push(b'"');
        for c in v.chars() {
            match c {
                '"' => self.0.extend_from_slice(b"\\\""),
                '\\' => self.0.extend_from_slice(b"\\\\"),
                c if (c as u32) < 0x20 => {
                    let _ = write!(self.0, "\\u{:04x}", c as u32);
                }
                c => {
                    let mut b = [0u8; 4];
                    self.0.extend_from_slice(c.encode_utf8(&mut b).as_bytes());
                }
            }
        }
        self.0.push(b'"');
    }
    fn num(&mut self, v: f64) {
        if v.is_finite() {
            let _ = write!(self.0, "{v:?}");
        } else {
            self.0.extend_from_slice(b"null");
        }
    }
    /// `"k":v,`
    pub fn f64(&mut self, k: &str, v: f64) {
        self.key(k);
        self.num(v);
        self.0.push(b',');
    }
    /// `"k":v,`
    pub fn u64(&mut self, k: &str, v: u64) {
        self.key(k);
        let _ = write!(self.0, "{v}");
        self.0.push(b',');
    }
    /// `"k":true|false,`
    pub fn bool(&mut self, k: &str, v: bool) {
        self.key(k);
        self.0
            .extend_from_slice(if v { b"true," } else { b"false," });
    }
    /// `"k":"v",` (escaped)
    pub fn str(&mut self, k: &str, v: &str) {
        self.key(k);
        self.quoted(v);
        self.0.push(b',');
    }
    /// `"k":[v,...],`
    pub fn array(&mut self, k: &str, v: &[f64]) {
        self.key(k);
        self.0.push(b'[');
        for (i, x) in v.iter().enumerate() {
            if i > 0 {
                self.0.push(b',');
            }
            self.num(*x);
        }
        self.0.extend_from_slice(b"],");
    }
}

/// Little-endian binary writer.
pub struct BinOut<'a>(pub &'a mut Vec<u8>);

impl BinOut<'_> {
    /// A u64.
    pub fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    /// A u32.
    pub fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    /// f64s.
    pub fn f64s(&mut self, v: &[f64]) {
        for x in v {
            self.0.extend_from_slice(&x.to_le_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> SubSpec {
        SubSpec::parse(
            br#"{"key":"k","fields":[{"name":"position","len":3,"max":2},{"name":"grip","required":false}]}"#,
        )
        .unwrap()
    }

    fn decode(s: &SubSpec, p: &str) -> Result<Vec<f64>, String> {
        let mut out = [0.0; MAX_VALUES];
        s.decode(p.as_bytes(), &mut out)
            .map(|()| out[..s.width()].to_vec())
    }

    #[test]
    fn json_messages_are_checked_field_by_field() {
        let s = spec();
        assert_eq!(
            decode(&s, r#"{"position":[1,-2,0.5]}"#),
            Ok(vec![1.0, -2.0, 0.5, 0.0])
        );
        assert_eq!(
            decode(&s, r#"{"position":[1,2,3],"grip":1}"#),
            Err("field 'position' = 3 is beyond its limit 2".into())
        );
        assert_eq!(
            decode(&s, r#"{"position":[1,2]}"#),
            Err("field 'position' must be an array of 3 numbers".into())
        );
        assert_eq!(
            decode(&s, r#"{"grip":1}"#),
            Err("missing field 'position'".into())
        );
        assert_eq!(
            decode(&s, r#"{"position":[0,0,0],"speed":1}"#),
            Err("unknown field 'speed' (expected: position, grip)".into())
        );
        assert_eq!(
            decode(&s, r#"{"position":[0,"a",0]}"#),
            Err("field 'position' holds a non-number".into())
        );
        assert_eq!(decode(&s, "[1,2,3]"), Err("not a JSON object".into()));
        assert!(decode(&s, "{nope").unwrap_err().starts_with("not JSON: "));
        // JSON has no NaN or infinity: the parser refuses both spellings.
        assert!(decode(&s, r#"{"position":[NaN,0,0]}"#).is_err());
        assert_eq!(
            decode(&s, r#"{"position":[1e400,0,0]}"#),
            Err("not JSON: number out of range at line 1 column 18".into())
        );
    }

    #[test]
    fn binary_messages_are_checked_too() {
        let mut s = spec();
        s.encoding = Encoding::Binary;
        let mut out = [0.0; MAX_VALUES];
        let bytes: Vec<u8> = [0.5f64, 0.0, -1.0, 7.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        s.decode(&bytes, &mut out).unwrap();
        assert_eq!(&out[..4], &[0.5, 0.0, -1.0, 7.0]);
        assert_eq!(
            s.decode(&bytes[..8], &mut out),
            Err("8 bytes, expected 32 (4 little-endian f64)".into())
        );
        let nan: Vec<u8> = [f64::NAN, 0.0, 0.0, 0.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        assert_eq!(
            s.decode(&nan, &mut out),
            Err("field 'position' is not finite".into())
        );
    }

    #[test]
    fn json_out_writes_valid_json() {
        let mut buf = Vec::new();
        let mut j = JsonOut(&mut buf);
        j.open();
        j.u64("step", 3);
        j.f64("time", 0.003);
        j.array("p", &[1.0, f64::NAN, -2.5e-7]);
        j.str("name", "a\"b");
        j.bool("paused", false);
        j.close();
        let v: serde_json::Value = serde_json::from_slice(&buf).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"step": 3, "time": 0.003, "p": [1.0, null, -2.5e-7], "name": "a\"b", "paused": false})
        );
    }
}
