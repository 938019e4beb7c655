//! Robots as their owners describe them: URDF and MJCF files (and the xacro subset that
//! simple URDFs use) read into one [`Model`] of links, joints and geometry, with their mesh
//! files and `package://` paths resolved, then assembled into an artifact's bodies, joints and
//! visuals (`assemble.rs`) exactly as a JSON artifact file is.

use std::path::PathBuf;
use std::rc::Rc;

use nalgebra::Matrix3;
use ssx_core::math::{Pose, Vec3};
use ssx_core::{MeshFit, Origin, SsxError};

use crate::prepared::Prepared;
use crate::source::Source;

mod assemble;
mod mesh;
mod mjcf;
mod packages;
mod urdf;
mod urdf_write;
mod xacro;
mod xml;

pub(crate) use mesh::MeshCache;

/// What a scene or a JSON artifact asks of a model file.
#[derive(Clone, Debug, Default)]
pub(crate) struct ModelOptions {
    /// How the colliders of moving bodies use their meshes (static bodies' meshes are always
    /// triangle meshes); `None`: convex hulls.
    pub(crate) meshes: Option<MeshFit>,
    /// Whether the root link is held in the world; `None`: as the format says (a URDF
    /// `world` link, an MJCF body without a free joint).
    pub(crate) fixed: Option<bool>,
    /// Directories to find `package://` paths in, before the default search.
    pub(crate) packages: Vec<PathBuf>,
}

/// A robot model, whichever file it came from.
#[derive(Debug)]
pub(crate) struct Model {
    /// Its links, the root among them.
    pub(crate) links: Vec<Link>,
    /// Its joints: each makes a link the child of another.
    pub(crate) joints: Vec<Joint>,
    /// Whether the file holds its root in the world.
    pub(crate) fixed: bool,
    /// The URDF text a ROS 2 user's tools read as `robot_description`: the file's own (xacro
    /// expanded), or an MJCF model written as URDF (`urdf_write.rs`).
    pub(crate) urdf: Option<String>,
}

/// A link (URDF) or body (MJCF).
#[derive(Debug)]
pub(crate) struct Link {
    pub(crate) name: String,
    pub(crate) inertial: Option<Inertial>,
    pub(crate) visuals: Vec<Geom>,
    pub(crate) collisions: Vec<Geom>,
    /// Where it is written, for messages.
    pub(crate) at: Origin,
}

/// Mass and inertia of a link.
#[derive(Debug)]
pub(crate) struct Inertial {
    pub(crate) mass: f64,
    /// The frame the inertia is given in (its origin the centre of mass), in the link's frame.
    pub(crate) pose: Pose,
    /// The inertia tensor about the centre of mass (kg·m²).
    pub(crate) inertia: Matrix3<f64>,
}

/// A visual or collision shape of a link.
#[derive(Debug)]
pub(crate) struct Geom {
    /// Its pose in the link's frame.
    pub(crate) pose: Pose,
    pub(crate) shape: GeomShape,
    pub(crate) color: Option<[f32; 4]>,
    /// Coulomb friction, if the file gives it.
    pub(crate) friction: Option<f64>,
}

/// What a geometry is.
#[derive(Debug)]
pub(crate) enum GeomShape {
    /// Half extents.
    Box(Vec3),
    Sphere(f64),
    /// Along z.
    Cylinder {
        radius: f64,
        half_length: f64,
    },
    /// Along z.
    Capsule {
        radius: f64,
        half_length: f64,
    },
    /// A mesh file, loaded and scaled.
    Mesh(MeshFile),
}

/// A mesh as loaded, and the file and scale it came from (for a URDF written back).
#[derive(Clone, Debug)]
pub(crate) struct MeshFile {
    pub(crate) mesh: std::sync::Arc<ssx_core::Mesh>,
    pub(crate) path: PathBuf,
    pub(crate) scale: Vec3,
}

/// What a joint allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum JointType {
    Fixed,
    Revolute,
    /// A revolute joint without limits.
    Continuous,
    Prismatic,
}

/// A joint: `child` moves relative to `parent`.
#[derive(Debug)]
pub(crate) struct Joint {
    pub(crate) name: String,
    pub(crate) kind: JointType,
    pub(crate) parent: usize,
    pub(crate) child: usize,
    /// The child's frame in the parent's, at joint position 0.
    pub(crate) origin: Pose,
    /// A point on the axis, in the child's frame.
    pub(crate) anchor: Vec3,
    /// The axis (unit), in the child's frame.
    pub(crate) axis: Vec3,
    pub(crate) limits: Option<[f64; 2]>,
    /// Largest effort, if given.
    pub(crate) effort: Option<f64>,
    pub(crate) damping: f64,
    pub(crate) at: Origin,
}

/// Whether a path names a robot model rather than a JSON artifact file.
pub(crate) fn is_model(path: &std::path::Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("urdf" | "xacro" | "xml" | "mjcf")
    )
}

/// A robot model file, read and assembled into an artifact. `named` is where the scene or the
/// JSON artifact named it; `budget` is the bytes the remaining files may take, `meshes` the
/// meshes read so far.
pub(crate) fn prepare(
    path: &std::path::Path,
    named: (&Source, &str),
    options: &ModelOptions,
    budget: &std::cell::Cell<u64>,
    meshes: &mut MeshCache,
) -> Result<Prepared, SsxError> {
    let shown = path.display().to_string();
    let limit = crate::limits::MAX_FILE_BYTES.min(budget.get());
    let text =
        crate::source::read_regular(path, &shown, limit).map_err(|m| named.0.err(named.1, m))?;
    budget.set(budget.get() - text.len() as u64);
    let search = packages::Search::new(path, &options.packages);
    let mut ctx = Reading {
        file: path,
        search: &search,
        meshes,
        budget,
    };
    let model = match path.extension().and_then(|e| e.to_str()) {
        Some("urdf" | "xacro") => urdf::read(&mut ctx, &text)?,
        _ => mjcf::read(&mut ctx, &text)?,
    };
    // The JSON that named the model is what messages about the artifact point at.
    let src = Rc::new(Source::model(path, text));
    assemble::assemble(src, path, model, options)
}

/// What readers of a model file share: where it is, how to find packages, the meshes read so
/// far and the bytes left.
pub(crate) struct Reading<'a> {
    pub(crate) file: &'a std::path::Path,
    pub(crate) search: &'a packages::Search,
    pub(crate) meshes: &'a mut MeshCache,
    pub(crate) budget: &'a std::cell::Cell<u64>,
}
