//! The ROS 2 (Jazzy) message types ssx speaks, as serde structs in field order (CDR writes
//! fields in order, aligned to their size) with their REP-2016 descriptions. Field names are
//! the ROS ones, so a message reads the same as JSON and as YAML on the ROS side.

use serde::de::{Deserializer, SeqAccess, Visitor};
use serde::ser::{SerializeTuple, Serializer};
use serde::{Deserialize, Serialize};

use crate::types::{Base, FieldDef, ServiceDef, Shape, TypeDef};

/// A message type: serde for CDR, and its description for the type hash.
pub trait Message: Serialize + for<'de> Deserialize<'de> {
    /// Its description.
    const TYPE: &'static TypeDef;
}

const fn field(name: &'static str, base: Base) -> FieldDef {
    FieldDef {
        name,
        base,
        shape: Shape::One,
    }
}

const fn array(name: &'static str, base: Base, n: u32) -> FieldDef {
    FieldDef {
        name,
        base,
        shape: Shape::Array(n),
    }
}

const fn sequence(name: &'static str, base: Base) -> FieldDef {
    FieldDef {
        name,
        base,
        shape: Shape::Sequence,
    }
}

macro_rules! message {
    ($ty:ident, $def:ident) => {
        impl Message for $ty {
            const TYPE: &'static TypeDef = &$def;
        }
    };
}

/// A fixed array of `N` float64 (`float64[9]`, `float64[36]`): written without a length, as CDR
/// writes arrays. (serde's own arrays stop at 32 elements.)
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct F64Array<const N: usize>(pub [f64; N]);

impl<const N: usize> Default for F64Array<N> {
    fn default() -> Self {
        F64Array([0.0; N])
    }
}

impl<const N: usize> Serialize for F64Array<N> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut t = s.serialize_tuple(N)?;
        for v in &self.0 {
            t.serialize_element(v)?;
        }
        t.end()
    }
}

impl<'de, const N: usize> Deserialize<'de> for F64Array<N> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<const N: usize>;
        impl<'de, const N: usize> Visitor<'de> for V<N> {
            type Value = F64Array<N>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "an array of {N} float64")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut out = [0.0; N];
                for (i, slot) in out.iter_mut().enumerate() {
                    *slot = seq
                        .next_element()?
                        .ok_or_else(|| serde::de::Error::invalid_length(i, &self))?;
                }
                Ok(F64Array(out))
            }
        }
        d.deserialize_tuple(N, V::<N>)
    }
}

mod geometry;
mod nav;
mod robot;
mod sensor;

pub use geometry::*;
pub use nav::*;
pub use robot::*;
pub use sensor::*;

// builtin_interfaces ------------------------------------------------------------------------

/// `builtin_interfaces/msg/Time` (defined with the service event, which holds one).
pub use crate::types::TIME;

/// `builtin_interfaces/msg/Time`: seconds and nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Time {
    /// Whole seconds.
    pub sec: i32,
    /// Nanoseconds, below 10⁹.
    pub nanosec: u32,
}
message!(Time, TIME);

impl Time {
    /// A time in seconds (simulated time from 0), rounded to the nanosecond.
    pub fn from_secs(t: f64) -> Time {
        let ns = (t.max(0.0) * 1e9).round() as u64;
        Time {
            sec: (ns / 1_000_000_000).min(i32::MAX as u64) as i32,
            nanosec: (ns % 1_000_000_000) as u32,
        }
    }
}

// std_msgs -------------------------------------------------------------------------------------

/// `std_msgs/msg/Header`.
pub static HEADER: TypeDef = TypeDef {
    name: "std_msgs/msg/Header",
    fields: &[
        field("stamp", Base::Nested(&TIME)),
        field("frame_id", Base::String),
    ],
};

/// `std_msgs/msg/Header`: when and in which frame.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// Stamp.
    pub stamp: Time,
    /// Frame.
    pub frame_id: String,
}
message!(Header, HEADER);

/// `std_msgs/msg/UInt32`.
pub static UINT32: TypeDef = TypeDef {
    name: "std_msgs/msg/UInt32",
    fields: &[field("data", Base::UInt32)],
};

/// `std_msgs/msg/UInt32`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct UInt32 {
    /// The value.
    pub data: u32,
}
message!(UInt32, UINT32);

/// `std_msgs/msg/Bool`.
pub static BOOL: TypeDef = TypeDef {
    name: "std_msgs/msg/Bool",
    fields: &[field("data", Base::Bool)],
};

/// `std_msgs/msg/Bool`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Bool {
    /// The value.
    pub data: bool,
}
message!(Bool, BOOL);

/// `std_msgs/msg/Float64`.
pub static FLOAT64: TypeDef = TypeDef {
    name: "std_msgs/msg/Float64",
    fields: &[field("data", Base::Float64)],
};

/// `std_msgs/msg/Float64`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Float64 {
    /// The value.
    pub data: f64,
}
message!(Float64, FLOAT64);

// rosgraph_msgs ----------------------------------------------------------------------------

/// `rosgraph_msgs/msg/Clock`.
pub static CLOCK: TypeDef = TypeDef {
    name: "rosgraph_msgs/msg/Clock",
    fields: &[field("clock", Base::Nested(&TIME))],
};

/// `rosgraph_msgs/msg/Clock`: the simulated time, for nodes with `use_sim_time`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Clock {
    /// Now.
    pub clock: Time,
}
message!(Clock, CLOCK);

// std_srvs ---------------------------------------------------------------------------------

/// `std_srvs/srv/Trigger_Request` (empty).
pub static TRIGGER_REQUEST: TypeDef = TypeDef {
    name: "std_srvs/srv/Trigger_Request",
    fields: &[],
};

/// `std_srvs/srv/Trigger_Request`: empty, written as one `uint8` as ROS writes empty messages.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TriggerRequest {
    /// Always 0.
    pub structure_needs_at_least_one_member: u8,
}
message!(TriggerRequest, TRIGGER_REQUEST);

/// `std_srvs/srv/Trigger_Response`.
pub static TRIGGER_RESPONSE: TypeDef = TypeDef {
    name: "std_srvs/srv/Trigger_Response",
    fields: &[field("success", Base::Bool), field("message", Base::String)],
};

/// `std_srvs/srv/Trigger_Response`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TriggerResponse {
    /// Whether it was done.
    pub success: bool,
    /// What happened.
    pub message: String,
}
message!(TriggerResponse, TRIGGER_RESPONSE);

/// `std_srvs/srv/Trigger`.
pub static TRIGGER: ServiceDef = ServiceDef {
    name: "std_srvs/srv/Trigger",
    request: &TRIGGER_REQUEST,
    response: &TRIGGER_RESPONSE,
};
