//! nav_msgs: odometry and occupancy grids.

use super::*;

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
