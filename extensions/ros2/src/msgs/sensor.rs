//! sensor_msgs: laser scans, images, camera info and IMU readings.

use super::*;

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
