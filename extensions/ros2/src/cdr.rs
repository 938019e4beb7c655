//! CDR payloads as rmw_zenoh sends them: a 4-byte encapsulation header (`00 01 00 00`: plain
//! CDR, little-endian, no options) and then the message, aligned from the end of the header.

use byteorder::{BigEndian, LittleEndian};

use crate::msgs::Message;

/// The encapsulation header of little-endian plain CDR (XCDR1).
pub const CDR_LE: [u8; 4] = [0x00, 0x01, 0x00, 0x00];
/// The encapsulation header of big-endian plain CDR.
pub const CDR_BE: [u8; 4] = [0x00, 0x00, 0x00, 0x00];

/// Why a payload was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// Longer than the limit for its type.
    TooLarge {
        /// Its length.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// Shorter than the encapsulation header.
    NoHeader,
    /// An encapsulation other than plain CDR (e.g. XCDR2, or a parameter list).
    Encapsulation([u8; 2]),
    /// The message does not parse.
    Cdr(String),
    /// Bytes left over beyond CDR's final padding.
    Trailing(usize),
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DecodeError::TooLarge { len, max } => {
                write!(f, "{len} bytes, more than the {max} this type can take")
            }
            DecodeError::NoHeader => {
                f.write_str("shorter than the 4-byte CDR encapsulation header")
            }
            DecodeError::Encapsulation(e) => write!(
                f,
                "encapsulation {:02x} {:02x} is not plain CDR (00 00 or 00 01)",
                e[0], e[1]
            ),
            DecodeError::Cdr(e) => write!(f, "not a valid CDR message: {e}"),
            DecodeError::Trailing(n) => write!(f, "{n} bytes after the end of the message"),
        }
    }
}

impl std::error::Error for DecodeError {}

/// Writes `msg` into `out` (cleared first): the header, then the message. Reuses `out`'s memory.
pub fn encode<M: Message>(msg: &M, out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(&CDR_LE);
    // Writing into a Vec cannot fail, and every type here serialises.
    cdr_encoding::to_writer::<M, LittleEndian, _>(&mut *out, msg)
        .expect("a ROS message serialises into a Vec");
}

/// Reads a message, refusing payloads longer than `max` bytes before looking at them. Either
/// byte order is accepted; up to 7 bytes of padding may follow the message (CDR writers pad to
/// their alignment), more are refused.
///
/// An empty message (a type without fields, such as `std_srvs/srv/Trigger_Request`) is read in
/// both of the encodings in use: rosidl's C and C++ type support write one placeholder `uint8`
/// after the header, other implementations (hiroz, ZettaScale's native Rust ROS 2) the header
/// alone. Every other type must be complete.
pub fn decode<M: Message>(payload: &[u8], max: usize) -> Result<M, DecodeError> {
    if payload.len() > max {
        return Err(DecodeError::TooLarge {
            len: payload.len(),
            max,
        });
    }
    if payload.len() < 4 {
        return Err(DecodeError::NoHeader);
    }
    let body = match &payload[4..] {
        [] if M::TYPE.fields.is_empty() => &[0u8][..], // the header alone: the placeholder implied
        body => body,
    };
    let (msg, used) = match [payload[0], payload[1]] {
        [0x00, 0x01] => cdr_encoding::from_bytes::<M, LittleEndian>(body),
        [0x00, 0x00] => cdr_encoding::from_bytes::<M, BigEndian>(body),
        other => return Err(DecodeError::Encapsulation(other)),
    }
    .map_err(|e| DecodeError::Cdr(e.to_string()))?;
    let left = body.len().saturating_sub(used);
    if left > 7 {
        return Err(DecodeError::Trailing(left));
    }
    Ok(msg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msgs::{Twist, Vector3};

    #[test]
    fn twist_round_trips_and_bad_payloads_are_named() {
        let t = Twist {
            linear: Vector3 {
                x: 0.5,
                y: 0.0,
                z: 0.0,
            },
            angular: Vector3 {
                x: 0.0,
                y: 0.0,
                z: -0.25,
            },
        };
        let mut b = Vec::new();
        encode(&t, &mut b);
        assert_eq!(b.len(), 4 + 48);
        assert_eq!(&b[..4], &CDR_LE);
        assert_eq!(&b[4..12], &0.5f64.to_le_bytes());
        assert_eq!(decode::<Twist>(&b, 64).unwrap(), t);
        assert_eq!(
            decode::<Twist>(&b, 16).unwrap_err().to_string(),
            "52 bytes, more than the 16 this type can take"
        );
        assert_eq!(decode::<Twist>(&b[..3], 64), Err(DecodeError::NoHeader));
        assert!(matches!(
            decode::<Twist>(&b[..30], 64),
            Err(DecodeError::Cdr(_))
        ));
        let mut xcdr2 = b.clone();
        xcdr2[1] = 0x07;
        assert_eq!(
            decode::<Twist>(&xcdr2, 64).unwrap_err().to_string(),
            "encapsulation 00 07 is not plain CDR (00 00 or 00 01)"
        );
        let mut long = b.clone();
        long.extend_from_slice(&[0; 8]);
        assert_eq!(decode::<Twist>(&long, 64), Err(DecodeError::Trailing(8)));
        // Big-endian payloads from other writers read the same.
        let mut be = CDR_BE.to_vec();
        for v in [0.5f64, 0.0, 0.0, 0.0, 0.0, -0.25] {
            be.extend_from_slice(&v.to_be_bytes());
        }
        assert_eq!(decode::<Twist>(&be, 64).unwrap(), t);
    }

    #[test]
    fn an_empty_message_reads_with_or_without_its_placeholder_byte() {
        use crate::msgs::TriggerRequest;
        let mut rosidl = Vec::new();
        encode(&TriggerRequest::default(), &mut rosidl);
        assert_eq!(rosidl, [0, 1, 0, 0, 0]);
        let header_alone = CDR_LE;
        for payload in [
            &rosidl[..],
            &header_alone[..],
            &CDR_BE[..],
            &[0, 1, 0, 0, 0, 0, 0, 0],
        ] {
            assert_eq!(
                decode::<TriggerRequest>(payload, 64),
                Ok(TriggerRequest::default()),
                "{payload:?}"
            );
        }
        // Strict on everything else: a message with fields needs them.
        assert!(matches!(
            decode::<Twist>(&CDR_LE, 64),
            Err(DecodeError::Cdr(_))
        ));
        assert_eq!(
            decode::<TriggerRequest>(&CDR_LE[..3], 64),
            Err(DecodeError::NoHeader)
        );
        assert_eq!(
            decode::<TriggerRequest>(&[0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], 64),
            Err(DecodeError::Trailing(8))
        );
    }

    #[test]
    fn an_images_bytes_are_written_as_cdr_writes_a_uint8_sequence() {
        use crate::msgs::{Header, Image, Time};
        // The same fields with serde's own byte-by-byte sequence, as the reference.
        #[derive(serde::Serialize, serde::Deserialize)]
        struct Plain {
            header: Header,
            height: u32,
            width: u32,
            encoding: String,
            is_bigendian: u8,
            step: u32,
            data: Vec<u8>,
        }
        impl crate::msgs::Message for Plain {
            const TYPE: &'static crate::types::TypeDef = &crate::msgs::IMAGE;
        }
        let header = Header {
            stamp: Time::from_secs(1.5),
            frame_id: "rover/camera/optical".into(),
        };
        let data = vec![7u8, 8, 9, 10, 11, 12];
        let image = Image {
            header: header.clone(),
            height: 1,
            width: 2,
            encoding: "rgb8".into(),
            is_bigendian: 0,
            step: 6,
            data: data.clone(),
        };
        let plain = Plain {
            header,
            height: 1,
            width: 2,
            encoding: "rgb8".into(),
            is_bigendian: 0,
            step: 6,
            data,
        };
        let (mut a, mut b) = (Vec::new(), Vec::new());
        encode(&image, &mut a);
        encode(&plain, &mut b);
        assert_eq!(a, b);
        assert_eq!(&a[a.len() - 10..], &[6, 0, 0, 0, 7, 8, 9, 10, 11, 12]);
        assert_eq!(decode::<Image>(&a, 1024).unwrap(), image);
    }
}
