//! geometry_msgs and tf2_msgs: vectors, points, quaternions, poses, twists and transforms.

use super::*;

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
