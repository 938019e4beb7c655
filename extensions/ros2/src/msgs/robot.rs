//! What a robot model speaks on ROS 2: `sensor_msgs/msg/JointState` (ros2_control's
//! joint_state_broadcaster), `std_msgs/msg/String` (robot_state_publisher's
//! `robot_description`) and `std_msgs/msg/Float64MultiArray` (forward_command_controller's
//! `commands`).

use serde::{Deserialize, Serialize};

use super::{HEADER, Header, Message, field, sequence};
use crate::types::{Base, TypeDef};

/// `sensor_msgs/msg/JointState`.
pub static JOINT_STATE: TypeDef = TypeDef {
    name: "sensor_msgs/msg/JointState",
    fields: &[
        field("header", Base::Nested(&HEADER)),
        sequence("name", Base::String),
        sequence("position", Base::Float64),
        sequence("velocity", Base::Float64),
        sequence("effort", Base::Float64),
    ],
};

/// `sensor_msgs/msg/JointState`: the joints named, where they stand and how fast they move
/// (`effort` left empty when not measured, as the message allows).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct JointState {
    /// Header (the stamp; no frame).
    pub header: Header,
    /// Joint names.
    pub name: Vec<String>,
    /// Positions (rad or m).
    pub position: Vec<f64>,
    /// Rates (rad/s or m/s).
    pub velocity: Vec<f64>,
    /// Efforts (N·m or N).
    pub effort: Vec<f64>,
}
message!(JointState, JOINT_STATE);

/// `std_msgs/msg/String`.
pub static STRING: TypeDef = TypeDef {
    name: "std_msgs/msg/String",
    fields: &[field("data", Base::String)],
};

/// `std_msgs/msg/String`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StringMsg {
    /// The text.
    pub data: String,
}
message!(StringMsg, STRING);

/// `std_msgs/msg/MultiArrayDimension`.
pub static MULTI_ARRAY_DIMENSION: TypeDef = TypeDef {
    name: "std_msgs/msg/MultiArrayDimension",
    fields: &[
        field("label", Base::String),
        field("size", Base::UInt32),
        field("stride", Base::UInt32),
    ],
};

/// `std_msgs/msg/MultiArrayDimension`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MultiArrayDimension {
    /// What it indexes.
    pub label: String,
    /// Its size.
    pub size: u32,
    /// Its stride.
    pub stride: u32,
}
message!(MultiArrayDimension, MULTI_ARRAY_DIMENSION);

/// `std_msgs/msg/MultiArrayLayout`.
pub static MULTI_ARRAY_LAYOUT: TypeDef = TypeDef {
    name: "std_msgs/msg/MultiArrayLayout",
    fields: &[
        sequence("dim", Base::Nested(&MULTI_ARRAY_DIMENSION)),
        field("data_offset", Base::UInt32),
    ],
};

/// `std_msgs/msg/MultiArrayLayout`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MultiArrayLayout {
    /// Dimensions.
    pub dim: Vec<MultiArrayDimension>,
    /// Padding before the data.
    pub data_offset: u32,
}
message!(MultiArrayLayout, MULTI_ARRAY_LAYOUT);

/// `std_msgs/msg/Float64MultiArray`.
pub static FLOAT64_MULTI_ARRAY: TypeDef = TypeDef {
    name: "std_msgs/msg/Float64MultiArray",
    fields: &[
        field("layout", Base::Nested(&MULTI_ARRAY_LAYOUT)),
        sequence("data", Base::Float64),
    ],
};

/// `std_msgs/msg/Float64MultiArray`: what forward_command_controller takes on `commands`,
/// one value a joint.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Float64MultiArray {
    /// Layout (ignored: the values are read in order).
    pub layout: MultiArrayLayout,
    /// The values.
    pub data: Vec<f64>,
}
message!(Float64MultiArray, FLOAT64_MULTI_ARRAY);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::type_hash;

    /// The hashes ROS 2 Jazzy prints for these types (`ros2 topic info -v`).
    #[test]
    fn the_hashes_are_ros_2_s() {
        assert_eq!(
            type_hash(&JOINT_STATE),
            "RIHS01_a13ee3a330e346c9d87b5aa18d24e11690752bd33a0350f11c5882bc9179260e"
        );
        assert_eq!(
            type_hash(&STRING),
            "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18"
        );
        assert_eq!(
            type_hash(&FLOAT64_MULTI_ARRAY),
            "RIHS01_1025ddc6b9552d191f89ef1a8d2f60f3d373e28b283d8891ddcc974e8c55397f"
        );
    }
}
