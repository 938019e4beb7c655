//! Message and service types as REP-2016 describes them, and their RIHS01 type hashes.
//!
//! A type hash is the SHA-256 of a canonical JSON text: the type's description (its name and
//! fields, each with a type id, capacity, string capacity and nested type name) and the
//! descriptions of every type it references, sorted by name, written as Python's `json.dumps`
//! writes them (`", "` and `": "` separators). A service is hashed as a type with three fields:
//! its request, its response and its event message (`ServiceEventInfo` plus at most one request
//! and one response). Default values are not part of the hash.

use std::collections::BTreeMap;
use std::fmt::Write;

use sha2::{Digest, Sha256};

/// A field's element type.
#[derive(Clone, Copy, Debug)]
pub enum Base {
    /// `bool`.
    Bool,
    /// `int8`.
    Int8,
    /// `uint8` (and `char`, which the ROS IDL maps to `uint8`).
    UInt8,
    /// `int32`.
    Int32,
    /// `uint32`.
    UInt32,
    /// `int64`.
    Int64,
    /// `float32`.
    Float32,
    /// `float64`.
    Float64,
    /// An unbounded `string`.
    String,
    /// Another message type.
    Nested(&'static TypeDef),
}

/// How many elements a field holds.
#[derive(Clone, Copy, Debug)]
pub enum Shape {
    /// One.
    One,
    /// A fixed array of this many (`float64[36]`).
    Array(u32),
    /// A sequence of at most this many (`T[<=1]`).
    Bounded(u32),
    /// A sequence of any length (`T[]`).
    Sequence,
}

/// One field of a message type.
#[derive(Clone, Copy, Debug)]
pub struct FieldDef {
    /// Its name.
    pub name: &'static str,
    /// Its element type.
    pub base: Base,
    /// One, an array or a sequence.
    pub shape: Shape,
}

/// A message type: `pkg/msg/Name` and its fields, in definition order.
#[derive(Debug)]
pub struct TypeDef {
    /// `pkg/msg/Name`.
    pub name: &'static str,
    /// Its fields; an empty message is described with one `uint8` field, as ROS does.
    pub fields: &'static [FieldDef],
}

/// A service type: `pkg/srv/Name`, its request and its response.
#[derive(Debug)]
pub struct ServiceDef {
    /// `pkg/srv/Name`.
    pub name: &'static str,
    /// `pkg/srv/Name_Request`.
    pub request: &'static TypeDef,
    /// `pkg/srv/Name_Response`.
    pub response: &'static TypeDef,
}

/// The name a type has on the wire (the DDS type name rmw_zenoh puts in keys):
/// `std_msgs/msg/String` is `std_msgs::msg::dds_::String_`.
pub fn dds_name(ros_name: &str) -> String {
    let mut parts: Vec<&str> = ros_name.split('/').collect();
    let last = parts.pop().unwrap_or_default();
    let mut out = String::new();
    for p in parts {
        out.push_str(p);
        out.push_str("::");
    }
    out.push_str("dds_::");
    out.push_str(last);
    out.push('_');
    out
}

/// REP-2016 type ids.
const NESTED: u8 = 1;
const ARRAY: u8 = 48;
const BOUNDED: u8 = 96;
const SEQUENCE: u8 = 144;

/// A field as the hash sees it.
#[derive(Clone, Debug)]
struct FieldDesc {
    name: String,
    type_id: u8,
    capacity: u32,
    nested: String,
}

/// A type as the hash sees it.
#[derive(Clone, Debug)]
struct Desc {
    name: String,
    fields: Vec<FieldDesc>,
}

fn base_id(b: Base) -> u8 {
    match b {
        Base::Nested(_) => NESTED,
        Base::Int8 => 2,
        Base::UInt8 => 3,
        Base::Int32 => 6,
        Base::UInt32 => 7,
        Base::Int64 => 8,
        Base::Float32 => 10,
        Base::Float64 => 11,
        Base::Bool => 15,
        Base::String => 17,
    }
}

fn field_desc(f: &FieldDef) -> FieldDesc {
    let (offset, capacity) = match f.shape {
        Shape::One => (0, 0),
        Shape::Array(n) => (ARRAY, n),
        Shape::Bounded(n) => (BOUNDED, n),
        Shape::Sequence => (SEQUENCE, 0),
    };
    FieldDesc {
        name: f.name.to_string(),
        type_id: base_id(f.base) + offset,
        capacity,
        nested: match f.base {
            Base::Nested(t) => t.name.to_string(),
            _ => String::new(),
        },
    }
}

fn desc(t: &TypeDef) -> Desc {
    let fields = if t.fields.is_empty() {
        vec![FieldDesc {
            name: "structure_needs_at_least_one_member".into(),
            type_id: base_id(Base::UInt8),
            capacity: 0,
            nested: String::new(),
        }]
    } else {
        t.fields.iter().map(field_desc).collect()
    };
    Desc {
        name: t.name.to_string(),
        fields,
    }
}

/// Every type `t` references, directly or not, by name.
fn collect(t: &'static TypeDef, into: &mut BTreeMap<String, Desc>) {
    for f in t.fields {
        if let Base::Nested(n) = f.base
            && !into.contains_key(n.name)
        {
            into.insert(n.name.to_string(), desc(n));
            collect(n, into);
        }
    }
}

fn write_desc(out: &mut String, d: &Desc) {
    let _ = write!(out, "{{\"type_name\": \"{}\", \"fields\": [", d.name);
    for (i, f) in d.fields.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        let _ = write!(
            out,
            "{{\"name\": \"{}\", \"type\": {{\"type_id\": {}, \"capacity\": {}, \"string_capacity\": 0, \"nested_type_name\": \"{}\"}}}}",
            f.name, f.type_id, f.capacity, f.nested
        );
    }
    out.push_str("]}");
}

/// The canonical JSON of a description and its references (names are plain ASCII
/// identifiers and slashes, so nothing needs escaping).
fn canonical(main: &Desc, referenced: &BTreeMap<String, Desc>) -> String {
    let mut out = String::from("{\"type_description\": ");
    write_desc(&mut out, main);
    out.push_str(", \"referenced_type_descriptions\": [");
    for (i, d) in referenced
        .values()
        .filter(|d| d.name != main.name)
        .enumerate()
    {
        if i > 0 {
            out.push_str(", ");
        }
        write_desc(&mut out, d);
    }
    out.push_str("]}");
    out
}

fn rihs01(json: &str) -> String {
    let digest = Sha256::digest(json.as_bytes());
    let mut out = String::from("RIHS01_");
    for b in digest {
        let _ = write!(out, "{b:02x}");
    }
    out
}

/// The RIHS01 hash of a message type (`RIHS01_` and 64 hex digits).
pub fn type_hash(t: &'static TypeDef) -> String {
    let mut referenced = BTreeMap::new();
    collect(t, &mut referenced);
    rihs01(&canonical(&desc(t), &referenced))
}

/// `builtin_interfaces/msg/Time`: here, as the service event's stamp; `msgs` re-exports it.
pub static TIME: TypeDef = TypeDef {
    name: "builtin_interfaces/msg/Time",
    fields: &[
        FieldDef {
            name: "sec",
            base: Base::Int32,
            shape: Shape::One,
        },
        FieldDef {
            name: "nanosec",
            base: Base::UInt32,
            shape: Shape::One,
        },
    ],
};

/// `service_msgs/msg/ServiceEventInfo` (its `char[16] client_gid` is `uint8[16]` in the IDL).
pub static SERVICE_EVENT_INFO: TypeDef = TypeDef {
    name: "service_msgs/msg/ServiceEventInfo",
    fields: &[
        FieldDef {
            name: "event_type",
            base: Base::UInt8,
            shape: Shape::One,
        },
        FieldDef {
            name: "stamp",
            base: Base::Nested(&TIME),
            shape: Shape::One,
        },
        FieldDef {
            name: "client_gid",
            base: Base::UInt8,
            shape: Shape::Array(16),
        },
        FieldDef {
            name: "sequence_number",
            base: Base::Int64,
            shape: Shape::One,
        },
    ],
};

/// The RIHS01 hash of a service type: a type with `request_message`, `response_message` and
/// `event_message` fields, the event being `ServiceEventInfo info`, `Request[<=1] request` and
/// `Response[<=1] response`.
pub fn service_hash(s: &'static ServiceDef) -> String {
    let event_name = format!("{}_Event", s.name);
    let nested = |name: &str, field: &str, type_id: u8, capacity: u32| FieldDesc {
        name: field.to_string(),
        type_id,
        capacity,
        nested: name.to_string(),
    };
    let event = Desc {
        name: event_name.clone(),
        fields: vec![
            nested(SERVICE_EVENT_INFO.name, "info", NESTED, 0),
            nested(s.request.name, "request", NESTED + BOUNDED, 1),
            nested(s.response.name, "response", NESTED + BOUNDED, 1),
        ],
    };
    let main = Desc {
        name: s.name.to_string(),
        fields: vec![
            nested(s.request.name, "request_message", NESTED, 0),
            nested(s.response.name, "response_message", NESTED, 0),
            nested(&event_name, "event_message", NESTED, 0),
        ],
    };
    let mut referenced = BTreeMap::new();
    for t in [s.request, s.response, &SERVICE_EVENT_INFO] {
        referenced.insert(t.name.to_string(), desc(t));
        collect(t, &mut referenced);
    }
    referenced.insert(event_name, event);
    rihs01(&canonical(&main, &referenced))
}

#[cfg(test)]
mod tests {
    use super::*;

    static STRING: TypeDef = TypeDef {
        name: "std_msgs/msg/String",
        fields: &[FieldDef {
            name: "data",
            base: Base::String,
            shape: Shape::One,
        }],
    };

    static ADD_REQUEST: TypeDef = TypeDef {
        name: "example_interfaces/srv/AddTwoInts_Request",
        fields: &[
            FieldDef {
                name: "a",
                base: Base::Int64,
                shape: Shape::One,
            },
            FieldDef {
                name: "b",
                base: Base::Int64,
                shape: Shape::One,
            },
        ],
    };
    static ADD_RESPONSE: TypeDef = TypeDef {
        name: "example_interfaces/srv/AddTwoInts_Response",
        fields: &[FieldDef {
            name: "sum",
            base: Base::Int64,
            shape: Shape::One,
        }],
    };
    static ADD: ServiceDef = ServiceDef {
        name: "example_interfaces/srv/AddTwoInts",
        request: &ADD_REQUEST,
        response: &ADD_RESPONSE,
    };

    /// The two hashes rmw_zenoh's design document prints (docs/design.md, "Topic and Service
    /// name mapping to Zenoh key expressions"), with their DDS names.
    #[test]
    fn the_hashes_rmw_zenoh_documents() {
        assert_eq!(
            type_hash(&STRING),
            "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18"
        );
        assert_eq!(dds_name(STRING.name), "std_msgs::msg::dds_::String_");
        assert_eq!(
            service_hash(&ADD),
            "RIHS01_e118de6bf5eeb66a2491b5bda11202e7b68f198d6f67922cf30364858239c81a"
        );
        assert_eq!(
            dds_name(ADD.name),
            "example_interfaces::srv::dds_::AddTwoInts_"
        );
    }
}
