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

// geometry_msgs ----------------------------------------------------------------------------

/// `geometry_msgs/msg/Vector3`.
pub static VECTOR3: TypeDef = TypeDef {
    name: "geometry_msgs/msg/Vector3",
    fields: &[
        field("x", Base::Float64),
        field("y", Base::Float64),
        field("z", Base::Float64),
    ],
};

/// `geometry_msgs/msg/Vector3`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Vector3 {
    /// x.
    pub x: f64,
    /// y.
    pub y: f64,
    /// z.
    pub z: f64,
}
message!(Vector3, VECTOR3);

/// `geometry_msgs/msg/Point`.
pub static POINT: TypeDef = TypeDef {
    name: "geometry_msgs/msg/Point",
    fields: &[
        field("x", Base::Float64),
        field("y", Base::Float64),
        field("z", Base::Float64),
    ],
};

/// `geometry_msgs/msg/Point`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// x.
    pub x: f64,
    /// y.
    pub y: f64,
    /// z.
    pub z: f64,
}
message!(Point, POINT);

/// `geometry_msgs/msg/Quaternion`.
pub static QUATERNION: TypeDef = TypeDef {
    name: "geometry_msgs/msg/Quaternion",
    fields: &[
        field("x", Base::Float64),
        field("y", Base::Float64),
        field("z", Base::Float64),
        field("w", Base::Float64),
    ],
};

/// `geometry_msgs/msg/Quaternion` (x, y, z, w: ROS order, not ssx's w-first).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Quaternion {
    /// x.
    pub x: f64,
    /// y.
    pub y: f64,
    /// z.
    pub z: f64,
    /// w.
    pub w: f64,
}
message!(Quaternion, QUATERNION);

impl Default for Quaternion {
    fn default() -> Self {
        Quaternion {
            x: 0.0,
            y: 0.0,
            z: 0.0,
            w: 1.0,
        }
    }
}

impl Quaternion {
    /// From ssx's `[w, x, y, z]`.
    pub fn from_wxyz(q: [f64; 4]) -> Quaternion {
        Quaternion {
            x: q[1],
            y: q[2],
            z: q[3],
            w: q[0],
        }
    }
    /// A rotation by `yaw` about z.
    pub fn from_yaw(yaw: f64) -> Quaternion {
        let (s, c) = (yaw / 2.0).sin_cos();
        Quaternion {
            x: 0.0,
            y: 0.0,
            z: s,
            w: c,
        }
    }
}

/// `geometry_msgs/msg/Pose`.
pub static POSE: TypeDef = TypeDef {
    name: "geometry_msgs/msg/Pose",
    fields: &[
        field("position", Base::Nested(&POINT)),
        field("orientation", Base::Nested(&QUATERNION)),
    ],
};

/// `geometry_msgs/msg/Pose`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Pose {
    /// Position.
    pub position: Point,
    /// Orientation.
    pub orientation: Quaternion,
}
message!(Pose, POSE);

/// `geometry_msgs/msg/PoseStamped`.
pub static POSE_STAMPED: TypeDef = TypeDef {
    name: "geometry_msgs/msg/PoseStamped",
    fields: &[
        field("header", Base::Nested(&HEADER)),
        field("pose", Base::Nested(&POSE)),
    ],
};

/// `geometry_msgs/msg/PoseStamped`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PoseStamped {
    /// Header.
    pub header: Header,
    /// Pose.
    pub pose: Pose,
}
message!(PoseStamped, POSE_STAMPED);

/// `geometry_msgs/msg/PoseWithCovariance`.
pub static POSE_WITH_COVARIANCE: TypeDef = TypeDef {
    name: "geometry_msgs/msg/PoseWithCovariance",
    fields: &[
        field("pose", Base::Nested(&POSE)),
        array("covariance", Base::Float64, 36),
    ],
};

/// `geometry_msgs/msg/PoseWithCovariance`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PoseWithCovariance {
    /// Pose.
    pub pose: Pose,
    /// Row-major 6×6 covariance of (x, y, z, rotation about x, y, z).
    pub covariance: F64Array<36>,
}
message!(PoseWithCovariance, POSE_WITH_COVARIANCE);

/// `geometry_msgs/msg/Twist`.
pub static TWIST: TypeDef = TypeDef {
    name: "geometry_msgs/msg/Twist",
    fields: &[
        field("linear", Base::Nested(&VECTOR3)),
        field("angular", Base::Nested(&VECTOR3)),
    ],
};

/// `geometry_msgs/msg/Twist`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Twist {
    /// Linear velocity (m/s).
    pub linear: Vector3,
    /// Angular velocity (rad/s).
    pub angular: Vector3,
}
message!(Twist, TWIST);

/// `geometry_msgs/msg/TwistWithCovariance`.
pub static TWIST_WITH_COVARIANCE: TypeDef = TypeDef {
    name: "geometry_msgs/msg/TwistWithCovariance",
    fields: &[
        field("twist", Base::Nested(&TWIST)),
        array("covariance", Base::Float64, 36),
    ],
};

/// `geometry_msgs/msg/TwistWithCovariance`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TwistWithCovariance {
    /// Twist.
    pub twist: Twist,
    /// Row-major 6×6 covariance.
    pub covariance: F64Array<36>,
}
message!(TwistWithCovariance, TWIST_WITH_COVARIANCE);

/// `geometry_msgs/msg/Transform`.
pub static TRANSFORM: TypeDef = TypeDef {
    name: "geometry_msgs/msg/Transform",
    fields: &[
        field("translation", Base::Nested(&VECTOR3)),
        field("rotation", Base::Nested(&QUATERNION)),
    ],
};

/// `geometry_msgs/msg/Transform`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Transform {
    /// Translation.
    pub translation: Vector3,
    /// Rotation.
    pub rotation: Quaternion,
}
message!(Transform, TRANSFORM);

/// `geometry_msgs/msg/TransformStamped`.
pub static TRANSFORM_STAMPED: TypeDef = TypeDef {
    name: "geometry_msgs/msg/TransformStamped",
    fields: &[
        field("header", Base::Nested(&HEADER)),
        field("child_frame_id", Base::String),
        field("transform", Base::Nested(&TRANSFORM)),
    ],
};

/// `geometry_msgs/msg/TransformStamped`: `child_frame_id` posed in `header.frame_id`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TransformStamped {
    /// Header (the parent frame).
    pub header: Header,
    /// The child frame.
    pub child_frame_id: String,
    /// Child in parent.
    pub transform: Transform,
}
message!(TransformStamped, TRANSFORM_STAMPED);

// tf2_msgs ---------------------------------------------------------------------------------

/// `tf2_msgs/msg/TFMessage`.
pub static TF_MESSAGE: TypeDef = TypeDef {
    name: "tf2_msgs/msg/TFMessage",
    fields: &[sequence("transforms", Base::Nested(&TRANSFORM_STAMPED))],
};

/// `tf2_msgs/msg/TFMessage`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TfMessage {
    /// Transforms.
    pub transforms: Vec<TransformStamped>,
}
message!(TfMessage, TF_MESSAGE);

// nav_msgs ---------------------------------------------------------------------------------

/// `nav_msgs/msg/Odometry`.
pub static ODOMETRY: TypeDef = TypeDef {
    name: "nav_msgs/msg/Odometry",
    fields: &[
        field("header", Base::Nested(&HEADER)),
        field("child_frame_id", Base::String),
        field("pose", Base::Nested(&POSE_WITH_COVARIANCE)),
        field("twist", Base::Nested(&TWIST_WITH_COVARIANCE)),
    ],
};

/// `nav_msgs/msg/Odometry`: pose in `header.frame_id`, twist in `child_frame_id`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Odometry {
    /// Header.
    pub header: Header,
    /// The body frame the twist is given in.
    pub child_frame_id: String,
    /// Pose.
    pub pose: PoseWithCovariance,
    /// Twist.
    pub twist: TwistWithCovariance,
}
message!(Odometry, ODOMETRY);

/// `nav_msgs/msg/MapMetaData`.
pub static MAP_META_DATA: TypeDef = TypeDef {
    name: "nav_msgs/msg/MapMetaData",
    fields: &[
        field("map_load_time", Base::Nested(&TIME)),
        field("resolution", Base::Float32),
        field("width", Base::UInt32),
        field("height", Base::UInt32),
        field("origin", Base::Nested(&POSE)),
    ],
};

/// `nav_msgs/msg/MapMetaData`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MapMetaData {
    /// When the map was loaded.
    pub map_load_time: Time,
    /// Metres per cell.
    pub resolution: f32,
    /// Cells per row.
    pub width: u32,
    /// Rows.
    pub height: u32,
    /// The pose of cell (0, 0)'s corner.
    pub origin: Pose,
}
message!(MapMetaData, MAP_META_DATA);

/// `nav_msgs/msg/OccupancyGrid`.
pub static OCCUPANCY_GRID: TypeDef = TypeDef {
    name: "nav_msgs/msg/OccupancyGrid",
    fields: &[
        field("header", Base::Nested(&HEADER)),
        field("info", Base::Nested(&MAP_META_DATA)),
        sequence("data", Base::Int8),
    ],
};

/// `nav_msgs/msg/OccupancyGrid`: rows from the origin, 0 free, 100 occupied, -1 unknown.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct OccupancyGrid {
    /// Header.
    pub header: Header,
    /// Size and placement.
    pub info: MapMetaData,
    /// Cells, row-major, row 0 at the origin.
    pub data: Vec<i8>,
}
message!(OccupancyGrid, OCCUPANCY_GRID);

// sensor_msgs ------------------------------------------------------------------------------

/// `sensor_msgs/msg/LaserScan`.
pub static LASER_SCAN: TypeDef = TypeDef {
    name: "sensor_msgs/msg/LaserScan",
    fields: &[
        field("header", Base::Nested(&HEADER)),
        field("angle_min", Base::Float32),
        field("angle_max", Base::Float32),
        field("angle_increment", Base::Float32),
        field("time_increment", Base::Float32),
        field("scan_time", Base::Float32),
        field("range_min", Base::Float32),
        field("range_max", Base::Float32),
        sequence("ranges", Base::Float32),
        sequence("intensities", Base::Float32),
    ],
};

/// `sensor_msgs/msg/LaserScan`: a planar scan, ray `i` at `angle_min + i · angle_increment`,
/// counter-clockwise about the frame's z axis.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LaserScan {
    /// Header (the scanner's frame).
    pub header: Header,
    /// First ray's angle (rad).
    pub angle_min: f32,
    /// Last ray's angle (rad).
    pub angle_max: f32,
    /// Between rays (rad).
    pub angle_increment: f32,
    /// Between measurements (s).
    pub time_increment: f32,
    /// Between scans (s).
    pub scan_time: f32,
    /// Shortest range (m).
    pub range_min: f32,
    /// Longest range (m).
    pub range_max: f32,
    /// Ranges (m); +inf where nothing was hit.
    pub ranges: Vec<f32>,
    /// Intensities (empty: not measured).
    pub intensities: Vec<f32>,
}
message!(LaserScan, LASER_SCAN);

/// `sensor_msgs/msg/Image`.
pub static IMAGE: TypeDef = TypeDef {
    name: "sensor_msgs/msg/Image",
    fields: &[
        field("header", Base::Nested(&HEADER)),
        field("height", Base::UInt32),
        field("width", Base::UInt32),
        field("encoding", Base::String),
        field("is_bigendian", Base::UInt8),
        field("step", Base::UInt32),
        sequence("data", Base::UInt8),
    ],
};

/// `sensor_msgs/msg/Image`: rows of `step` bytes from the top left, in `encoding` (`rgb8`,
/// `32FC1`, ...).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Image {
    /// Header (the camera's optical frame).
    pub header: Header,
    /// Rows.
    pub height: u32,
    /// Columns.
    pub width: u32,
    /// Pixel encoding.
    pub encoding: String,
    /// 1 when multi-byte pixels are big endian.
    pub is_bigendian: u8,
    /// Bytes a row.
    pub step: u32,
    /// The pixels.
    #[serde(with = "byte_sequence")]
    pub data: Vec<u8>,
}
message!(Image, IMAGE);

/// A `uint8[]` written as CDR writes it (a u32 length, then the bytes), in one piece rather
/// than byte by byte: an image is hundreds of kilobytes. (CDR's serialiser writes `bytes`
/// raw, without a length.)
mod byte_sequence {
    use serde::ser::SerializeTuple;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    struct Raw<'a>(&'a [u8]);

    impl Serialize for Raw<'_> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_bytes(self.0)
        }
    }

    pub fn serialize<S: Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
        let len = u32::try_from(v.len()).map_err(serde::ser::Error::custom)?;
        let mut t = s.serialize_tuple(2)?;
        t.serialize_element(&len)?;
        t.serialize_element(&Raw(v))?;
        t.end()
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        Vec::<u8>::deserialize(d)
    }
}

/// `sensor_msgs/msg/RegionOfInterest`.
pub static REGION_OF_INTEREST: TypeDef = TypeDef {
    name: "sensor_msgs/msg/RegionOfInterest",
    fields: &[
        field("x_offset", Base::UInt32),
        field("y_offset", Base::UInt32),
        field("height", Base::UInt32),
        field("width", Base::UInt32),
        field("do_rectify", Base::Bool),
    ],
};

/// `sensor_msgs/msg/RegionOfInterest` (all zero: the whole image).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RegionOfInterest {
    /// Left column.
    pub x_offset: u32,
    /// Top row.
    pub y_offset: u32,
    /// Rows.
    pub height: u32,
    /// Columns.
    pub width: u32,
    /// Whether it is rectified.
    pub do_rectify: bool,
}
message!(RegionOfInterest, REGION_OF_INTEREST);

/// `sensor_msgs/msg/CameraInfo`.
pub static CAMERA_INFO: TypeDef = TypeDef {
    name: "sensor_msgs/msg/CameraInfo",
    fields: &[
        field("header", Base::Nested(&HEADER)),
        field("height", Base::UInt32),
        field("width", Base::UInt32),
        field("distortion_model", Base::String),
        sequence("d", Base::Float64),
        array("k", Base::Float64, 9),
        array("r", Base::Float64, 9),
        array("p", Base::Float64, 12),
        field("binning_x", Base::UInt32),
        field("binning_y", Base::UInt32),
        field("roi", Base::Nested(&REGION_OF_INTEREST)),
    ],
};

/// `sensor_msgs/msg/CameraInfo`: a pinhole camera's calibration.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CameraInfo {
    /// Header (the camera's optical frame).
    pub header: Header,
    /// Rows.
    pub height: u32,
    /// Columns.
    pub width: u32,
    /// `plumb_bob` and `d` all zero: no distortion.
    pub distortion_model: String,
    /// Distortion coefficients.
    pub d: Vec<f64>,
    /// The camera matrix, row-major.
    pub k: F64Array<9>,
    /// Rectification (identity for one camera).
    pub r: F64Array<9>,
    /// The projection matrix, row-major 3 × 4.
    pub p: F64Array<12>,
    /// Binning (0: none).
    pub binning_x: u32,
    /// See `binning_x`.
    pub binning_y: u32,
    /// The region of interest (zero: the whole image).
    pub roi: RegionOfInterest,
}
message!(CameraInfo, CAMERA_INFO);

/// `sensor_msgs/msg/Imu`.
pub static IMU: TypeDef = TypeDef {
    name: "sensor_msgs/msg/Imu",
    fields: &[
        field("header", Base::Nested(&HEADER)),
        field("orientation", Base::Nested(&QUATERNION)),
        array("orientation_covariance", Base::Float64, 9),
        field("angular_velocity", Base::Nested(&VECTOR3)),
        array("angular_velocity_covariance", Base::Float64, 9),
        field("linear_acceleration", Base::Nested(&VECTOR3)),
        array("linear_acceleration_covariance", Base::Float64, 9),
    ],
};

/// `sensor_msgs/msg/Imu`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Imu {
    /// Header (the IMU's frame).
    pub header: Header,
    /// Orientation (unused when `orientation_covariance[0]` is -1).
    pub orientation: Quaternion,
    /// Its covariance.
    pub orientation_covariance: F64Array<9>,
    /// Angular velocity (rad/s).
    pub angular_velocity: Vector3,
    /// Its covariance.
    pub angular_velocity_covariance: F64Array<9>,
    /// Linear acceleration (m/s², specific force: gravity included).
    pub linear_acceleration: Vector3,
    /// Its covariance.
    pub linear_acceleration_covariance: F64Array<9>,
}
message!(Imu, IMU);

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
