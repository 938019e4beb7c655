//! The file formats: what a scene file and an artifact description file may contain.
//! Unknown fields are refused everywhere; numbers are checked as they are read, so the
//! message carries the line and column.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Deserializer};

/// A finite number.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Finite(pub f64);

impl<'de> Deserialize<'de> for Finite {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = f64::deserialize(d)?;
        if v.is_finite() {
            Ok(Finite(v))
        } else {
            Err(serde::de::Error::custom(format!(
                "expected a finite number, got {v}"
            )))
        }
    }
}

/// A finite number > 0.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Positive(pub f64);

impl<'de> Deserialize<'de> for Positive {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = f64::deserialize(d)?;
        if v.is_finite() && v > 0.0 {
            Ok(Positive(v))
        } else {
            Err(serde::de::Error::custom(format!(
                "expected a positive number, got {v}"
            )))
        }
    }
}

/// A finite number >= 0.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NonNegative(pub f64);

impl<'de> Deserialize<'de> for NonNegative {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = f64::deserialize(d)?;
        if v.is_finite() && v >= 0.0 {
            Ok(NonNegative(v))
        } else {
            Err(serde::de::Error::custom(format!(
                "expected a number >= 0, got {v}"
            )))
        }
    }
}

/// A whole number from 1 to [`crate::limits::MAX_BODIES`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Count(pub usize);

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = u64::deserialize(d)?;
        let max = crate::limits::MAX_BODIES as u64;
        if (1..=max).contains(&v) {
            Ok(Count(v as usize))
        } else {
            Err(serde::de::Error::custom(format!(
                "expected a count from 1 to {max}, got {v}"
            )))
        }
    }
}

/// Numbers in a range: each type says what it measures and which values ssx accepts (the
/// limits are in docs/scenes.md). Beyond them the engine (single precision) or the clock
/// cannot represent the result.
macro_rules! ranged {
    ($(#[$doc:meta])* $name:ident, $lo:expr, $hi:expr, $what:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq)]
        pub struct $name(pub f64);

        impl $name {
            /// Smallest accepted value.
            pub const MIN: f64 = $lo;
            /// Largest accepted value.
            pub const MAX: f64 = $hi;
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let v = f64::deserialize(d)?;
                if ($lo..=$hi).contains(&v) {
                    Ok($name(v))
                } else {
                    Err(serde::de::Error::custom(format!(
                        concat!("expected ", $what, " from {} to {}, got {}"),
                        ssx_sdk::number($lo),
                        ssx_sdk::number($hi),
                        ssx_sdk::number(v)
                    )))
                }
            }
        }
    };
}

ranged!(
    /// Seconds per step.
    Timestep, 1e-6, 1.0, "a timestep (s)"
);
ranged!(
    /// A coordinate (m): positions, anchors, bounds.
    Coordinate, -1e5, 1e5, "a coordinate (m)"
);
ranged!(
    /// A size (m): box sides, radii, lengths, spacings.
    Size, 1e-4, 1e4, "a size (m)"
);
ranged!(
    /// A mass (kg).
    Mass, 1e-6, 1e9, "a mass (kg)"
);
ranged!(
    /// A density (kg/m³).
    Density, 1e-3, 1e6, "a density (kg/m³)"
);
ranged!(
    /// A principal moment of inertia (kg·m²).
    Inertia, 1e-12, 1e12, "a moment of inertia (kg·m²)"
);
ranged!(
    /// A gravity component (m/s²).
    Gravity, -1e3, 1e3, "a gravity component (m/s²)"
);
ranged!(
    /// A damping rate (1/s).
    Damping, 0.0, 1e4, "a damping (1/s)"
);
ranged!(
    /// A friction coefficient.
    Friction, 0.0, 100.0, "a friction coefficient"
);
ranged!(
    /// A restitution coefficient.
    Restitution, 0.0, 1.0, "a restitution coefficient"
);
ranged!(
    /// A joint motor's stiffness or damping.
    Gain, 0.0, 1e9, "a motor gain"
);
ranged!(
    /// An angle (rad).
    Angle, -1e3, 1e3, "an angle (rad)"
);
ranged!(
    /// A map's resolution (m per pixel).
    Resolution, 1e-3, 100.0, "a map resolution (m per pixel)"
);
ranged!(
    /// An occupancy threshold.
    Threshold, 0.0, 1.0, "an occupancy threshold"
);
ranged!(
    /// The watchdog's limit (s).
    WatchdogSeconds, 0.01, 3600.0, "a watchdog limit (s)"
);

/// Names (artifacts, bodies, joints, sensors, extensions, plugins, the scene): 1 to
/// [`crate::limits::MAX_NAME`] bytes, no control characters (they would reach terminals and logs).
pub fn name<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let s = String::deserialize(d)?;
    check_name(&s).map_err(serde::de::Error::custom)?;
    Ok(s)
}

fn optional_name<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    name(d).map(Some)
}

/// The rule of [`name`].
pub fn check_name(s: &str) -> Result<(), String> {
    let max = crate::limits::MAX_NAME;
    if s.is_empty() {
        Err("expected a name, got an empty string".into())
    } else if s.len() > max {
        Err(format!(
            "expected a name of at most {max} bytes, got {} bytes ('{}')",
            s.len(),
            ssx_core::text::clip(s, 32)
        ))
    } else if let Some(c) = s.chars().find(|c| c.is_control()) {
        Err(format!(
            "a name may not contain control characters; '{}' has U+{:04X}",
            ssx_core::text::escape_controls(s),
            c as u32
        ))
    } else {
        Ok(())
    }
}

/// A pose: position (m) and roll, pitch, yaw (radians; R = Rz(yaw)·Ry(pitch)·Rx(roll)).
#[derive(Clone, Copy, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PoseFile {
    /// Position.
    #[serde(default = "zero3")]
    pub position: [Coordinate; 3],
    /// Roll, pitch, yaw.
    #[serde(default = "zero_angles")]
    pub rpy: [Angle; 3],
}

fn zero3() -> [Coordinate; 3] {
    [Coordinate(0.0); 3]
}

fn zero_angles() -> [Angle; 3] {
    [Angle(0.0); 3]
}

/// A plugin reference: its registered name and its JSON descriptor.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PluginFile {
    /// Plugin name (built in, or inside `library`).
    #[serde(deserialize_with = "name")]
    pub plugin: String,
    /// A plugin library to load it from, found relative to this file, then in
    /// `SSX_PLUGIN_PATH`, then next to ssxd.
    #[serde(default)]
    pub library: Option<PathBuf>,
    /// The descriptor handed to it (any JSON; the plugin checks it).
    #[serde(default = "empty_object")]
    pub descriptor: serde_json::Value,
}

fn empty_object() -> serde_json::Value {
    serde_json::Value::Object(Default::default())
}

/// A named sensor.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SensorFile {
    /// Name within the artifact.
    #[serde(deserialize_with = "name")]
    pub name: String,
    /// Plugin name (built in, or inside `library`).
    #[serde(deserialize_with = "name")]
    pub plugin: String,
    /// A plugin library to load it from (see [`PluginFile::library`]).
    #[serde(default)]
    pub library: Option<PathBuf>,
    /// The descriptor.
    #[serde(default = "empty_object")]
    pub descriptor: serde_json::Value,
}

/// A named extension.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExtensionFile {
    /// Name drivers use to find it.
    #[serde(deserialize_with = "name")]
    pub name: String,
    /// Plugin name (registered in-process, or inside `library`).
    #[serde(deserialize_with = "name")]
    pub plugin: String,
    /// A plugin library to load it from (see [`PluginFile::library`]).
    #[serde(default)]
    pub library: Option<PathBuf>,
    /// The descriptor.
    #[serde(default = "empty_object")]
    pub descriptor: serde_json::Value,
}

/// Replicating one artifact instance many times.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum Replicate {
    /// `count` cells in rows of `columns`, `spacing` apart in x and y, a copy in each but
    /// `leave_out` of them drawn from the seed (VMAS's passage: a wall of boxes with a gap).
    Grid {
        /// How many cells.
        count: Count,
        /// Per row (default: the square root of count, rounded up).
        #[serde(default)]
        columns: Option<Count>,
        /// Distance between neighbours in x and y (m).
        spacing: [Size; 2],
        /// Cells left empty, drawn from the scene seed and the instance name (0: none).
        #[serde(default)]
        leave_out: usize,
    },
    /// `count` copies evenly on a circle of `radius`, each turned to face outward.
    Circle {
        /// How many.
        count: Count,
        /// Radius (m).
        radius: Size,
    },
    /// `count` copies at uniformly random positions in the box `min`..`max`, seeded; with
    /// `clearance`, no two within that distance of each other in the plane.
    Random {
        /// How many.
        count: Count,
        /// Lower corner (m).
        min: [Coordinate; 3],
        /// Upper corner (m).
        max: [Coordinate; 3],
        /// Random yaw too.
        #[serde(default)]
        random_yaw: bool,
        /// The least distance between two copies' positions in the plane (m): a draw nearer an
        /// earlier copy is drawn again.
        #[serde(default)]
        clearance: Option<Size>,
        /// Earlier instances of the scene whose copies the clearance keeps these from too
        /// (VMAS's goals, drawn apart from its agents).
        #[serde(default)]
        apart_from: Vec<String>,
        /// Seed (default: derived from the scene seed and the instance name).
        #[serde(default)]
        seed: Option<u64>,
    },
}

/// Descriptor overrides for one instance, merged key by key over the artifact file's.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OverridesFile {
    /// Keys to replace in the driver's descriptor.
    #[serde(default)]
    pub driver: Option<serde_json::Map<String, serde_json::Value>>,
    /// Keys to replace in named sensors' descriptors.
    #[serde(default)]
    pub sensors: BTreeMap<String, serde_json::Map<String, serde_json::Value>>,
}

/// One entry of a scene's `artifacts`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InstanceFile {
    /// Instance name (replicas get `name_0`, `name_1`, ...).
    #[serde(deserialize_with = "name")]
    pub name: String,
    /// The artifact description file, relative to this scene file.
    pub artifact: PathBuf,
    /// Where it stands (for replicas: the origin of the pattern).
    #[serde(default)]
    pub pose: PoseFile,
    /// An earlier instance of one copy whose placed pose `pose` is taken in (a line's agents
    /// placed along the line wherever its seed drew it).
    #[serde(default, deserialize_with = "optional_name")]
    pub relative_to: Option<String>,
    /// Many copies.
    #[serde(default)]
    pub replicate: Option<Replicate>,
    /// Descriptor overrides.
    #[serde(default)]
    pub overrides: OverridesFile,
}

/// A scene file (or a file included by one: then `timestep` may be left out and only its
/// `artifacts`, `extensions` and `include` count).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SceneFile {
    /// Scene name (default: the file stem).
    #[serde(default, deserialize_with = "optional_name")]
    pub name: Option<String>,
    /// Seconds per step.
    #[serde(default)]
    pub timestep: Option<Timestep>,
    /// m/s², default (0, 0, -9.81).
    #[serde(default)]
    pub gravity: Option<[Gravity; 3]>,
    /// Physics engine (default `rapier`).
    #[serde(default)]
    pub engine: Option<String>,
    /// Seed for everything random (default 0).
    #[serde(default)]
    pub seed: Option<u64>,
    /// Other scene files whose artifacts and extensions join this one.
    #[serde(default)]
    pub include: Vec<PathBuf>,
    /// Simulation extensions.
    #[serde(default)]
    pub extensions: Vec<ExtensionFile>,
    /// Artifact instances.
    #[serde(default)]
    pub artifacts: Vec<InstanceFile>,
    /// Artifacts whose position the status line shows.
    #[serde(default)]
    pub watch: Vec<String>,
    /// Where and how fast `ssxd run --view` serves the live view.
    #[serde(default)]
    pub view: Option<ViewFile>,
    /// Static walls drawn in an image (`ssxd` turns occupied pixels into boxes).
    #[serde(default)]
    pub map: Option<MapFile>,
    /// Seconds after which a plugin or physics call that has not returned is reported
    /// (default max(1 s, 100 timesteps); `ssxd run --watchdog` overrides it).
    #[serde(default)]
    pub watchdog: Option<WatchdogSeconds>,
}

/// A bitmap map: either an image with its resolution, or a ROS map_server YAML file that names
/// one. Occupied pixels become static walls `height` high.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MapFile {
    /// A PNG or PGM (or any PNM) image; dark is occupied (see `negate`).
    #[serde(default)]
    pub image: Option<PathBuf>,
    /// A map_server YAML file (`image`, `resolution`, `origin`, `occupied_thresh`, `negate`).
    #[serde(default)]
    pub yaml: Option<PathBuf>,
    /// Metres per pixel (with `image`).
    #[serde(default)]
    pub resolution: Option<Resolution>,
    /// The world position of the image's lower-left corner (default [0, 0]).
    #[serde(default)]
    pub origin: Option<[Coordinate; 2]>,
    /// Wall height (m, default 0.5).
    #[serde(default)]
    pub height: Option<Size>,
    /// A pixel is occupied when its occupancy (255 − value) / 255 exceeds this (default 0.65).
    #[serde(default)]
    pub occupied_thresh: Option<Threshold>,
    /// Light is occupied instead of dark.
    #[serde(default)]
    pub negate: bool,
    /// A cave generated from a seed (MAES's cellular automaton) instead of an image.
    #[serde(default)]
    pub cave: Option<CaveFile>,
    /// A building generated from a seed (rooms split recursively, joined by doors).
    #[serde(default)]
    pub building: Option<BuildingFile>,
}

/// `"map": {"cave": {...}}`: see `generate::Cave`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CaveFile {
    /// The seed: the same seed makes the same cave on every machine (default: the scene's seed,
    /// so that a reset with a new seed makes a new cave).
    #[serde(default)]
    pub seed: Option<u64>,
    /// Width and depth (m).
    pub size: [Size; 2],
    /// Share of rock before smoothing (default 0.45).
    #[serde(default)]
    pub fill: Option<Threshold>,
    /// Rounds of the cellular automaton (default 5, at most 100).
    #[serde(default)]
    pub smoothing: Option<u32>,
    /// Where robots start (world x, y; default the map's centre): kept free, and every free
    /// cell is reachable from it.
    #[serde(default)]
    pub spawn: Option<[Coordinate; 2]>,
    /// Radius kept free around `spawn` (m, default 1.5).
    #[serde(default)]
    pub spawn_radius: Option<Size>,
}

/// `"map": {"building": {...}}`: see `generate::Building`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BuildingFile {
    /// The seed (default: the scene's seed, as for a cave).
    #[serde(default)]
    pub seed: Option<u64>,
    /// Width and depth (m).
    pub size: [Size; 2],
    /// Least room side (m, default 5).
    #[serde(default)]
    pub room_size: Option<Size>,
    /// Door width (m, default 1).
    #[serde(default)]
    pub door_width: Option<Size>,
    /// As for a cave.
    #[serde(default)]
    pub spawn: Option<[Coordinate; 2]>,
    /// As for a cave.
    #[serde(default)]
    pub spawn_radius: Option<Size>,
}

/// The live view's settings (`"view"` in a scene; used when `ssxd run --view` is given).
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ViewFile {
    /// Foxglove WebSocket port (default 8765; 0: any free port).
    #[serde(default)]
    pub port: Option<u16>,
    /// The built-in page's HTTP port (default: `port` + 1; 0: any free port).
    #[serde(default)]
    pub page_port: Option<u16>,
    /// Frames a wall second (default 30, at most 1000).
    #[serde(default)]
    pub rate: Option<Positive>,
    /// Listen on every interface instead of loopback only.
    #[serde(default)]
    pub expose: bool,
    /// Range-sensor rays drawn at most, over the whole scene (default 20,000): past this, one
    /// sensor in k is drawn.
    #[serde(default)]
    pub max_rays: Option<u32>,
}

/// A collision shape. Sizes are full extents; lengths run along z.
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum ShapeFile {
    /// A box.
    Box {
        /// Full size along x, y, z (m).
        size: [Size; 3],
    },
    /// A sphere.
    Sphere {
        /// Radius (m).
        radius: Size,
    },
    /// A capsule along z.
    Capsule {
        /// Radius (m).
        radius: Size,
        /// Length of the cylindrical part (m).
        length: Size,
    },
    /// A cylinder along z.
    Cylinder {
        /// Radius (m).
        radius: Size,
        /// Length (m).
        length: Size,
    },
    /// The infinite plane z = 0 of the body frame (static bodies only).
    Plane {},
}

/// A collider of a body.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ColliderFile {
    /// Shape.
    pub shape: ShapeFile,
    /// Pose relative to the body.
    #[serde(default)]
    pub pose: PoseFile,
    /// Friction coefficient (default 0.5).
    #[serde(default)]
    pub friction: Option<Friction>,
    /// Restitution (default 0).
    #[serde(default)]
    pub restitution: Option<Restitution>,
}

/// How a body moves.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum KindFile {
    /// Moved by forces.
    #[default]
    Dynamic,
    /// Never moves.
    Static,
    /// Moved by commanded velocities.
    Kinematic,
}

/// A body of an artifact.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BodyFile {
    /// Name, unique in the artifact.
    #[serde(deserialize_with = "name")]
    pub name: String,
    /// The body its pose is relative to; welded to it unless a joint links them.
    #[serde(default)]
    pub parent: Option<String>,
    /// Pose relative to the parent (or to the artifact).
    #[serde(default)]
    pub pose: PoseFile,
    /// How it moves.
    #[serde(default)]
    pub kind: KindFile,
    /// Total mass (kg), spread over the colliders by volume.
    #[serde(default)]
    pub mass: Option<Mass>,
    /// Density of its colliders (kg/m³) instead of `mass` (default 1000).
    #[serde(default)]
    pub density: Option<Density>,
    /// Principal moments of inertia (kg·m²) about the body axes; needs `mass`.
    #[serde(default)]
    pub inertia: Option<[Inertia; 3]>,
    /// Linear damping (1/s).
    #[serde(default)]
    pub linear_damping: Option<Damping>,
    /// Angular damping (1/s).
    #[serde(default)]
    pub angular_damping: Option<Damping>,
    /// Moves in the horizontal plane only (height, roll and pitch held): a ground robot in
    /// 2.5D, as Stage simulates one.
    #[serde(default)]
    pub planar: bool,
    /// Colour of its visuals, RGBA 0..1.
    #[serde(default)]
    pub color: Option<[NonNegative; 4]>,
    /// Colliders (also drawn, in `color`).
    #[serde(default)]
    pub colliders: Vec<ColliderFile>,
    /// Shapes drawn, in `color`, that nothing touches (a goal's disc).
    #[serde(default)]
    pub visuals: Vec<VisualFile>,
}

/// A shape of a body that is drawn and touches nothing.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VisualFile {
    /// Shape.
    pub shape: ShapeFile,
    /// Pose relative to the body.
    #[serde(default)]
    pub pose: PoseFile,
}

/// What a joint allows.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum JointKindFile {
    /// Nothing.
    Fixed,
    /// Rotation about `axis`.
    Revolute,
}

/// A joint between two bodies of the artifact.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JointFile {
    /// Name, unique in the artifact.
    #[serde(deserialize_with = "name")]
    pub name: String,
    /// What it allows.
    pub kind: JointKindFile,
    /// Parent body.
    pub parent: String,
    /// Child body.
    pub child: String,
    /// The joint's anchor in the parent's frame (m).
    #[serde(default = "zero3")]
    pub anchor: [Coordinate; 3],
    /// Rotation axis in the parent's frame (revolute).
    #[serde(default)]
    pub axis: Option<[Finite; 3]>,
    /// Angle limits (radians, revolute).
    #[serde(default)]
    pub limits: Option<[Angle; 2]>,
    /// A position motor (revolute): the artifact's driver sets its target angle.
    #[serde(default)]
    pub motor: Option<MotorFile>,
}

/// A joint's position motor.
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MotorFile {
    /// Stiffness (N·m/rad).
    pub stiffness: Gain,
    /// Damping (N·m·s/rad).
    pub damping: Gain,
}

/// How the colliders of a model's moving bodies use their meshes.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum MeshFitFile {
    /// The triangles as they are.
    Trimesh,
    /// The convex hull of each mesh (the default).
    ConvexHull,
    /// Convex parts found by V-HACD.
    ConvexDecomposition,
}

/// Whether a model's root link is held in the world.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum BaseFile {
    /// Free to move (a mobile robot, a drone).
    Free,
    /// Held where it stands (an arm on a table).
    Fixed,
}

/// A robot model file (URDF or MJCF) an artifact is made of.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelFile {
    /// The `.urdf` (or `.xacro`) or MJCF `.xml` file, relative to this file.
    pub file: PathBuf,
    /// How moving bodies' mesh colliders are made (default `convex_hull`; static bodies keep
    /// their triangles).
    #[serde(default)]
    pub collision_meshes: Option<MeshFitFile>,
    /// Free or fixed root (default: as the file says).
    #[serde(default)]
    pub base: Option<BaseFile>,
    /// Directories holding the ROS packages its `package://` paths name, relative to this
    /// file; searched first.
    #[serde(default)]
    pub packages: Vec<PathBuf>,
}

/// An artifact description file (SSX's Artifact XML).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArtifactFile {
    /// What it is.
    #[serde(default)]
    pub description: Option<String>,
    /// A robot model its bodies and joints come from, instead of `bodies` and `joints`.
    #[serde(default)]
    pub model: Option<ModelFile>,
    /// Bodies; the first is the root drivers act on by default.
    #[serde(default)]
    pub bodies: Vec<BodyFile>,
    /// Joints.
    #[serde(default)]
    pub joints: Vec<JointFile>,
    /// At most one driver.
    #[serde(default)]
    pub driver: Option<PluginFile>,
    /// Sensors.
    #[serde(default)]
    pub sensors: Vec<SensorFile>,
}
