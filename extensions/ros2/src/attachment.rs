//! The attachment rmw_zenoh puts on every sample, query and reply (its docs/design.md,
//! "Publishers"): 8 bytes of sequence number and 8 of source timestamp (ns since the UNIX
//! epoch), both little-endian `int64`, then the GID as a Zenoh-serialised sequence: its length
//! as one LEB128 byte (16) and the 16 bytes. 33 bytes in all.

/// Bytes in an attachment.
pub const LEN: usize = 33;

/// A sample's, query's or reply's attachment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Attachment {
    /// The publisher's (or client's) sequence number, from 1.
    pub sequence_number: i64,
    /// When it was sent (ns since the UNIX epoch).
    pub source_timestamp: i64,
    /// The publisher's or client's GID.
    pub source_gid: [u8; 16],
}

impl Attachment {
    /// The 33 bytes.
    pub fn encode(&self) -> [u8; LEN] {
        let mut b = [0u8; LEN];
        b[..8].copy_from_slice(&self.sequence_number.to_le_bytes());
        b[8..16].copy_from_slice(&self.source_timestamp.to_le_bytes());
        b[16] = 16;
        b[17..].copy_from_slice(&self.source_gid);
        b
    }

    /// Reads one; `None` unless it is exactly the 33-byte layout.
    pub fn decode(b: &[u8]) -> Option<Attachment> {
        if b.len() != LEN || b[16] != 16 {
            return None;
        }
        Some(Attachment {
            sequence_number: i64::from_le_bytes(b[..8].try_into().ok()?),
            source_timestamp: i64::from_le_bytes(b[8..16].try_into().ok()?),
            source_gid: b[17..].try_into().ok()?,
        })
    }
}

/// Now, in ns since the UNIX epoch (the attachment's source timestamp).
pub fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thirty_three_bytes_as_the_design_document_says() {
        let a = Attachment {
            sequence_number: 7,
            source_timestamp: -2,
            source_gid: [0xab; 16],
        };
        let b = a.encode();
        assert_eq!(&b[..8], &[7, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(&b[8..16], &[0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
        assert_eq!(b[16], 16);
        assert_eq!(Attachment::decode(&b), Some(a));
        assert_eq!(Attachment::decode(&b[..32]), None);
        let mut wrong = b;
        wrong[16] = 24;
        assert_eq!(Attachment::decode(&wrong), None);
    }
}
