//! MJCF (MuJoCo's format): bodies nested in `<worldbody>`, each with at most one hinge or slide
//! joint (or a free joint at the top), `<inertial>`s or masses from primitive geoms, geoms
//! (box, sphere, capsule, cylinder, mesh) with `<default>` classes, `<asset>` meshes and
//! materials, and the compiler's `angle`, `meshdir` and `autolimits`. A top body without a
//! free joint is held in the world, as MuJoCo holds it. Geoms that do not collide
//! (`contype` and `conaffinity` 0) are visuals; geoms in group 3 and above are not drawn.

use std::collections::HashMap;

use nalgebra::Matrix3;
use roxmltree::Node;
use ssx_core::SsxError;
use ssx_core::math::{Pose, Rotation, Vec3};

use super::xml::{Xml, child, children};
use super::{Geom, GeomShape, Inertial, Joint, JointType, Link, MeshFile, Model, Reading};

/// Attributes an element takes from its `<default>` class, by tag.
type Defaults = HashMap<String, HashMap<String, HashMap<String, String>>>;

struct Mjcf<'x> {
    xml: Xml<'x>,
    degrees: bool,
    autolimits: bool,
    meshdir: std::path::PathBuf,
    defaults: Defaults,
    meshes: HashMap<String, (String, Vec3)>,
    materials: HashMap<String, [f32; 4]>,
}

pub(crate) fn read(ctx: &mut Reading<'_>, text: &str) -> Result<Model, SsxError> {
    let xml = Xml { file: ctx.file };
    let doc = super::xml::parse(ctx.file, text)?;
    let top = doc.root_element();
    if top.tag_name().name() != "mujoco" {
        return Err(xml.err(
            top,
            "",
            format!(
                "an MJCF file's top element is <mujoco>, found <{}> (URDF files end in .urdf)",
                top.tag_name().name()
            ),
        ));
    }
    if let Some(inc) = child(top, "include") {
        return Err(xml.err(
            inc,
            "include",
            "<include> is not read: name the file that holds the robot's <worldbody>",
        ));
    }
    let compiler = child(top, "compiler");
    let get = |k: &str| compiler.and_then(|c| c.attribute(k));
    let degrees = match get("angle") {
        None | Some("degree") => true,
        Some("radian") => false,
        Some(other) => {
            return Err(xml.err(
                compiler.expect("read"),
                "compiler",
                format!("angle '{other}': 'degree' or 'radian'"),
            ));
        }
    };
    if let Some(seq) = get("eulerseq")
        && seq != "xyz"
    {
        return Err(xml.err(
            compiler.expect("read"),
            "compiler",
            format!("eulerseq '{seq}' is not read: only MuJoCo's default 'xyz'"),
        ));
    }
    let dir = get("meshdir").or(get("assetdir")).unwrap_or("");
    let mut m = Mjcf {
        meshdir: super::xml::beside(ctx.file, dir),
        xml,
        degrees,
        autolimits: get("autolimits") != Some("false"),
        defaults: Defaults::new(),
        meshes: HashMap::new(),
        materials: HashMap::new(),
    };
    for d in children(top, "default") {
        m.read_defaults(d, None)?;
    }
    for a in children(top, "asset") {
        for mesh in children(a, "mesh") {
            let at = "asset > mesh";
            let file = m.xml.attr(mesh, at, "file")?;
            let name = mesh
                .attribute("name")
                .map(str::to_string)
                .unwrap_or_else(|| {
                    std::path::Path::new(file)
                        .file_stem()
                        .map_or(String::new(), |s| s.to_string_lossy().into_owned())
                });
            let scale = m.xml.vec3(mesh, at, "scale")?.unwrap_or(Vec3::repeat(1.0));
            m.meshes.insert(name, (file.to_string(), scale));
        }
        for mat in children(a, "material") {
            if let (Some(name), Some(rgba)) = (
                mat.attribute("name"),
                m.xml.numbers(mat, "asset > material", "rgba", 4)?,
            ) {
                m.materials.insert(
                    name.to_string(),
                    [
                        rgba[0] as f32,
                        rgba[1] as f32,
                        rgba[2] as f32,
                        rgba[3] as f32,
                    ],
                );
            }
        }
    }
    let world = child(top, "worldbody")
        .ok_or_else(|| m.xml.err(top, "mujoco", "the file has no <worldbody>"))?;
    if let Some(g) = children(world, "geom").next() {
        return Err(m.xml.err(g, "worldbody > geom", "geoms directly in <worldbody> (a floor) belong to a MuJoCo scene, not to the robot: name the robot's own file (not scene.xml)"));
    }
    let tops: Vec<Node> = children(world, "body").collect();
    let first = match tops.as_slice() {
        [b] => *b,
        [] => return Err(m.xml.err(world, "worldbody", "<worldbody> has no <body>")),
        [_, b, ..] => {
            return Err(m.xml.err(
                *b,
                "worldbody > body",
                "more than one top <body>: ssx reads one robot a file",
            ));
        }
    };
    let mut model = Model {
        links: Vec::new(),
        joints: Vec::new(),
        fixed: true,
        urdf: None,
    };
    m.body(ctx, first, None, None, &mut model)?;
    // ROS 2 tools read a URDF: the model written as one (`urdf_write.rs`).
    let name = top.attribute("model").map_or_else(
        || {
            ctx.file
                .file_stem()
                .map_or_else(|| "robot".into(), |s| s.to_string_lossy().into_owned())
        },
        str::to_string,
    );
    model.urdf = Some(super::urdf_write::write(&model, &name));
    Ok(model)
}

impl Mjcf<'_> {
    /// `<default class>` and its nested classes, each taking its parent's attributes.
    fn read_defaults(&mut self, d: Node<'_, '_>, parent: Option<&str>) -> Result<(), SsxError> {
        let class = d.attribute("class").unwrap_or("main").to_string();
        let mut own = parent
            .and_then(|p| self.defaults.get(p))
            .cloned()
            .unwrap_or_default();
        for e in d
            .children()
            .filter(|c| c.is_element() && c.tag_name().name() != "default")
        {
            let entry = own.entry(e.tag_name().name().to_string()).or_default();
            for a in e.attributes() {
                entry.insert(a.name().to_string(), a.value().to_string());
            }
        }
        self.defaults.insert(class.clone(), own);
        for inner in children(d, "default") {
            self.read_defaults(inner, Some(&class))?;
        }
        Ok(())
    }

    /// An attribute of `e`, or its class's default.
    fn get<'a>(&'a self, e: Node<'a, '_>, class: &str, name: &str) -> Option<&'a str> {
        e.attribute(name).or_else(|| {
            let class = e.attribute("class").unwrap_or(class);
            self.defaults
                .get(class)
                .and_then(|t| t.get(e.tag_name().name()))
                .and_then(|a| a.get(name))
                .map(String::as_str)
        })
    }

    fn numbers(
        &self,
        e: Node<'_, '_>,
        class: &str,
        at: &str,
        name: &str,
    ) -> Result<Option<Vec<f64>>, SsxError> {
        let Some(text) = self.get(e, class, name) else {
            return Ok(None);
        };
        text.split_whitespace()
            .map(|w| w.parse::<f64>().ok().filter(|v| v.is_finite()))
            .collect::<Option<Vec<f64>>>()
            .map(Some)
            .ok_or_else(|| {
                self.xml.err(
                    e,
                    at,
                    format!(
                        "'{name}' must be finite numbers, got \"{}\"",
                        ssx_core::text::clip(text, 64)
                    ),
                )
            })
    }

    fn fixed_numbers<const N: usize>(
        &self,
        e: Node<'_, '_>,
        class: &str,
        at: &str,
        name: &str,
    ) -> Result<Option<[f64; N]>, SsxError> {
        match self.numbers(e, class, at, name)? {
            None => Ok(None),
            Some(v) if v.len() == N => Ok(Some(std::array::from_fn(|i| v[i]))),
            Some(v) => Err(self.xml.err(
                e,
                at,
                format!("'{name}' must be {N} numbers, got {}", v.len()),
            )),
        }
    }

    /// An element's pose in its parent's frame: `pos` and one of `quat`, `euler`, `axisangle`.
    fn pose(&self, e: Node<'_, '_>, class: &str, at: &str) -> Result<Pose, SsxError> {
        let p = self
            .fixed_numbers::<3>(e, class, at, "pos")?
            .unwrap_or([0.0; 3]);
        let angle = |a: f64| if self.degrees { a.to_radians() } else { a };
        let rotation = if let Some(q) = self.fixed_numbers::<4>(e, class, at, "quat")? {
            let q = nalgebra::Quaternion::new(q[0], q[1], q[2], q[3]);
            if q.norm() < 1e-12 {
                return Err(self.xml.err(e, at, "'quat' must not be zero"));
            }
            Rotation::from_quaternion(q)
        } else if let Some(eu) = self.fixed_numbers::<3>(e, class, at, "euler")? {
            // MuJoCo's default sequence, xyz: intrinsic rotations about x, then y, then z.
            Rotation::from_axis_angle(&Vec3::x_axis(), angle(eu[0]))
                * Rotation::from_axis_angle(&Vec3::y_axis(), angle(eu[1]))
                * Rotation::from_axis_angle(&Vec3::z_axis(), angle(eu[2]))
        } else if let Some(aa) = self.fixed_numbers::<4>(e, class, at, "axisangle")? {
            let axis = Vec3::new(aa[0], aa[1], aa[2]);
            if axis.norm() < 1e-12 {
                return Err(self.xml.err(e, at, "'axisangle' needs a non-zero axis"));
            }
            Rotation::from_axis_angle(&nalgebra::Unit::new_normalize(axis), angle(aa[3]))
        } else {
            for k in ["xyaxes", "zaxis"] {
                if self.get(e, class, k).is_some() {
                    return Err(self.xml.err(e, at, format!("'{k}' is not read: give the orientation as 'quat', 'euler' or 'axisangle'")));
                }
            }
            Rotation::identity()
        };
        Ok(Pose::from_parts(
            Vec3::new(p[0], p[1], p[2]).into(),
            rotation,
        ))
    }

    fn body(
        &self,
        ctx: &mut Reading<'_>,
        b: Node<'_, '_>,
        parent: Option<usize>,
        inherited: Option<&str>,
        model: &mut Model,
    ) -> Result<(), SsxError> {
        let index = model.links.len();
        let name = b
            .attribute("name")
            .map(str::to_string)
            .unwrap_or_else(|| format!("body{index}"));
        let at = format!("body '{name}'");
        if model.links.iter().any(|l| l.name == name) {
            return Err(self
                .xml
                .err(b, &at, format!("duplicate body name '{name}'")));
        }
        let class = b.attribute("childclass").or(inherited).unwrap_or("main");
        let origin = self.pose(b, "main", &at)?;
        let mut visuals = Vec::new();
        let mut collisions = Vec::new();
        let mut geom_mass: Vec<(f64, Pose, Matrix3<f64>)> = Vec::new();
        for (k, g) in children(b, "geom").enumerate() {
            let gat = format!("{at} > geom[{k}]");
            let (geom, collide, drawn, mass) = self.geom(ctx, g, class, &gat)?;
            if let Some(m) = mass {
                geom_mass.push((m.0, geom.pose, m.1));
            }
            if collide {
                collisions.push(Geom {
                    pose: geom.pose,
                    shape: clone_shape(&geom.shape),
                    color: None,
                    friction: geom.friction,
                });
            }
            if drawn {
                visuals.push(geom);
            }
        }
        let inertial = match child(b, "inertial") {
            Some(i) => Some(self.inertial(i, &format!("{at} > inertial"))?),
            None => merged(&geom_mass),
        };
        model.links.push(Link {
            name: name.clone(),
            inertial,
            visuals,
            collisions,
            at: self.xml.origin(b, &at),
        });
        let mut joints: Vec<Node> = children(b, "joint").collect();
        joints.extend(children(b, "freejoint"));
        if joints.len() > 1 {
            return Err(self.xml.err(
                joints[1],
                &at,
                format!(
                    "body '{name}' has {} joints: ssx takes one joint a body (split the body)",
                    joints.len()
                ),
            ));
        }
        match (parent, joints.first()) {
            (None, Some(j)) => {
                let free = j.tag_name().name() == "freejoint"
                    || self.get(*j, class, "type") == Some("free");
                if !free {
                    return Err(self.xml.err(*j, &at, "the top body's joint must be a free joint (or none, to hold it in the world)"));
                }
                model.fixed = false;
            }
            (None, None) => {}
            (Some(p), j) => {
                let joint = match j {
                    None => Joint {
                        name: format!("{name}_fixed"),
                        kind: JointType::Fixed,
                        parent: p,
                        child: index,
                        origin,
                        anchor: Vec3::zeros(),
                        axis: Vec3::x(),
                        limits: None,
                        effort: None,
                        damping: 0.0,
                        at: self.xml.origin(b, &at),
                    },
                    Some(j) => self.joint(*j, class, &at, p, index, origin)?,
                };
                model.joints.push(joint);
            }
        }
        for inner in children(b, "body") {
            self.body(ctx, inner, Some(index), Some(class), model)?;
        }
        Ok(())
    }

    fn joint(
        &self,
        j: Node<'_, '_>,
        class: &str,
        body_at: &str,
        parent: usize,
        child_link: usize,
        origin: Pose,
    ) -> Result<Joint, SsxError> {
        let name = j
            .attribute("name")
            .map(str::to_string)
            .unwrap_or_else(|| format!("joint{child_link}"));
        let at = format!("{body_at} > joint '{name}'");
        let kind = match (
            j.tag_name().name(),
            self.get(j, class, "type").unwrap_or("hinge"),
        ) {
            ("freejoint", _) | (_, "free") => {
                return Err(self
                    .xml
                    .err(j, &at, "only the top body may have a free joint"));
            }
            (_, "hinge") => JointType::Revolute,
            (_, "slide") => JointType::Prismatic,
            (_, "ball") => {
                return Err(self.xml.err(j, &at, "a ball joint is not modelled: ssx joints are hinges (revolute) and slides (prismatic)"));
            }
            (_, other) => {
                return Err(self.xml.err(
                    j,
                    &at,
                    format!(
                        "unknown joint type '{other}' (MJCF's are free, ball, slide and hinge)"
                    ),
                ));
            }
        };
        let axis = self
            .fixed_numbers::<3>(j, class, &at, "axis")?
            .unwrap_or([0.0, 0.0, 1.0]);
        let axis = Vec3::new(axis[0], axis[1], axis[2]);
        if axis.norm() < 1e-9 {
            return Err(self.xml.err(j, &at, "the axis must not be zero"));
        }
        let anchor = self
            .fixed_numbers::<3>(j, class, &at, "pos")?
            .unwrap_or([0.0; 3]);
        let range = self.fixed_numbers::<2>(j, class, &at, "range")?;
        let limited = match self.get(j, class, "limited") {
            Some("true") => true,
            Some("false") => false,
            _ => self.autolimits && range.is_some(),
        };
        let limits = match (limited, range) {
            (true, Some([lo, hi])) => {
                let (lo, hi) = if kind == JointType::Revolute && self.degrees {
                    (lo.to_radians(), hi.to_radians())
                } else {
                    (lo, hi)
                };
                if lo > hi {
                    return Err(self.xml.err(j, &at, format!("range: {lo} is above {hi}")));
                }
                Some([lo, hi])
            }
            (true, None) => return Err(self.xml.err(j, &at, "limited=\"true\" needs a 'range'")),
            _ => None,
        };
        let damping = self
            .fixed_numbers::<1>(j, class, &at, "damping")?
            .map_or(0.0, |d| d[0]);
        if damping < 0.0 {
            return Err(self
                .xml
                .err(j, &at, format!("damping cannot be negative, got {damping}")));
        }
        let effort = self
            .fixed_numbers::<2>(j, class, &at, "actuatorfrcrange")?
            .map(|[lo, hi]| lo.abs().max(hi.abs()))
            .filter(|&e| e > 0.0);
        Ok(Joint {
            name,
            kind: if kind == JointType::Revolute && limits.is_none() {
                JointType::Continuous
            } else {
                kind
            },
            parent,
            child: child_link,
            origin,
            anchor: Vec3::new(anchor[0], anchor[1], anchor[2]),
            axis: axis.normalize(),
            limits,
            effort,
            damping,
            at: self.xml.origin(j, &at),
        })
    }

    fn inertial(&self, i: Node<'_, '_>, at: &str) -> Result<Inertial, SsxError> {
        let mass = self
            .fixed_numbers::<1>(i, "main", at, "mass")?
            .ok_or_else(|| self.xml.err(i, at, "<inertial> needs 'mass'"))?[0];
        if mass < 0.0 {
            return Err(self
                .xml
                .err(i, at, format!("a mass cannot be negative, got {mass} kg")));
        }
        let inertia = if let Some(d) = self.fixed_numbers::<3>(i, "main", at, "diaginertia")? {
            Matrix3::from_diagonal(&Vec3::new(d[0], d[1], d[2]))
        } else if let Some(f) = self.fixed_numbers::<6>(i, "main", at, "fullinertia")? {
            Matrix3::new(f[0], f[3], f[4], f[3], f[1], f[5], f[4], f[5], f[2])
        } else {
            return Err(self
                .xml
                .err(i, at, "<inertial> needs 'diaginertia' or 'fullinertia'"));
        };
        let principal = nalgebra::SymmetricEigen::new(inertia).eigenvalues;
        if principal.iter().any(|&p| p < -1e-12) {
            return Err(self.xml.err(
                i,
                at,
                "the inertia is not physical: a principal moment is negative",
            ));
        }
        Ok(Inertial {
            mass,
            pose: self.pose(i, "main", at)?,
            inertia,
        })
    }

    /// A geom, whether it collides and is drawn, and its mass and inertia (about its centre, in
    /// its frame) when it has a primitive shape and a density or mass.
    #[allow(clippy::type_complexity)]
    fn geom(
        &self,
        ctx: &mut Reading<'_>,
        g: Node<'_, '_>,
        class: &str,
        at: &str,
    ) -> Result<(Geom, bool, bool, Option<(f64, Matrix3<f64>)>), SsxError> {
        let kind = self.get(g, class, "type").unwrap_or("sphere");
        let size = self.numbers(g, class, at, "size")?.unwrap_or_default();
        let fromto = self.fixed_numbers::<6>(g, class, at, "fromto")?;
        let need = |n: usize| -> Result<(), SsxError> {
            if size.len() < n || size[..n].iter().any(|&s| s <= 0.0) {
                Err(self.xml.err(
                    g,
                    at,
                    format!(
                        "a {kind} geom needs {n} positive 'size' number{}",
                        if n == 1 { "" } else { "s" }
                    ),
                ))
            } else {
                Ok(())
            }
        };
        let mut pose = self.pose(g, class, at)?;
        // A capsule or cylinder from one point to another: its axis is z of the geom frame.
        let mut half_from = None;
        if let Some(f) = fromto
            && matches!(kind, "capsule" | "cylinder")
        {
            let (a, b) = (Vec3::new(f[0], f[1], f[2]), Vec3::new(f[3], f[4], f[5]));
            let d = b - a;
            if d.norm() < 1e-12 {
                return Err(self.xml.err(g, at, "'fromto' needs two different points"));
            }
            let turn = Rotation::rotation_between(&Vec3::z(), &d).unwrap_or_else(|| {
                Rotation::from_axis_angle(&Vec3::x_axis(), std::f64::consts::PI)
            });
            pose = Pose::from_parts(((a + b) / 2.0).into(), turn);
            half_from = Some(d.norm() / 2.0);
        }
        let shape = match kind {
            "sphere" => {
                need(1)?;
                GeomShape::Sphere(size[0])
            }
            "box" => {
                need(3)?;
                GeomShape::Box(Vec3::new(size[0], size[1], size[2]))
            }
            "capsule" | "cylinder" => {
                let half = match half_from {
                    Some(h) => {
                        need(1)?;
                        h
                    }
                    None => {
                        need(2)?;
                        size[1]
                    }
                };
                if kind == "capsule" {
                    GeomShape::Capsule {
                        radius: size[0],
                        half_length: half,
                    }
                } else {
                    GeomShape::Cylinder {
                        radius: size[0],
                        half_length: half,
                    }
                }
            }
            "mesh" => {
                let name = self
                    .get(g, class, "mesh")
                    .ok_or_else(|| self.xml.err(g, at, "a mesh geom needs 'mesh'"))?;
                let (file, scale) = self.meshes.get(name).ok_or_else(|| {
                    self.xml
                        .err(g, at, format!("no <mesh> asset named '{name}'"))
                })?;
                let path = self.meshdir.join(file);
                if !path.is_file() {
                    return Err(self.xml.err(
                        g,
                        at,
                        format!(
                            "mesh '{name}': file '{file}' not found (looked for {})",
                            path.display()
                        ),
                    ));
                }
                let mesh = ctx
                    .meshes
                    .load(&path, file, *scale, ctx.budget)
                    .map_err(|m| self.xml.err(g, at, m))?;
                GeomShape::Mesh(MeshFile {
                    mesh,
                    path,
                    scale: *scale,
                })
            }
            "plane" | "hfield" | "ellipsoid" | "sdf" => {
                return Err(self.xml.err(g, at, format!("a {kind} geom is not modelled (box, sphere, capsule, cylinder and mesh are)")));
            }
            other => return Err(self.xml.err(g, at, format!("unknown geom type '{other}'"))),
        };
        let int = |name: &str, default: i64| -> i64 {
            self.get(g, class, name)
                .and_then(|v| v.parse().ok())
                .unwrap_or(default)
        };
        let collide = !(int("contype", 1) == 0 && int("conaffinity", 1) == 0);
        let drawn = int("group", 0) < 3;
        let color = match self.fixed_numbers::<4>(g, class, at, "rgba")? {
            Some(c)
                if g.attribute("rgba").is_some() || self.get(g, class, "material").is_none() =>
            {
                Some([c[0] as f32, c[1] as f32, c[2] as f32, c[3] as f32])
            }
            _ => self
                .get(g, class, "material")
                .and_then(|m| self.materials.get(m).copied()),
        };
        let friction = self
            .numbers(g, class, at, "friction")?
            .and_then(|f| f.first().copied());
        let mass = match &shape {
            GeomShape::Mesh(_) => None,
            s => {
                let (volume, unit) = unit_inertia(s);
                let mass = match self.fixed_numbers::<1>(g, class, at, "mass")? {
                    Some([m]) => m,
                    None => {
                        self.fixed_numbers::<1>(g, class, at, "density")?
                            .map_or(1000.0, |d| d[0])
                            * volume
                    }
                };
                (collide && mass > 0.0).then(|| (mass, Matrix3::from_diagonal(&(unit * mass))))
            }
        };
        Ok((
            Geom {
                pose,
                shape,
                color,
                friction,
            },
            collide,
            drawn,
            mass,
        ))
    }
}

fn clone_shape(s: &GeomShape) -> GeomShape {
    match *s {
        GeomShape::Box(h) => GeomShape::Box(h),
        GeomShape::Sphere(r) => GeomShape::Sphere(r),
        GeomShape::Cylinder {
            radius,
            half_length,
        } => GeomShape::Cylinder {
            radius,
            half_length,
        },
        GeomShape::Capsule {
            radius,
            half_length,
        } => GeomShape::Capsule {
            radius,
            half_length,
        },
        GeomShape::Mesh(ref m) => GeomShape::Mesh(m.clone()),
    }
}

/// Volume and inertia per unit mass of a primitive about its centre.
fn unit_inertia(s: &GeomShape) -> (f64, Vec3) {
    use std::f64::consts::PI;
    match *s {
        GeomShape::Box(h) => {
            let (a, b, c) = (4.0 * h.x * h.x, 4.0 * h.y * h.y, 4.0 * h.z * h.z);
            (8.0 * h.x * h.y * h.z, Vec3::new(b + c, a + c, a + b) / 12.0)
        }
        GeomShape::Sphere(r) => (4.0 / 3.0 * PI * r.powi(3), Vec3::repeat(0.4 * r * r)),
        GeomShape::Cylinder {
            radius: r,
            half_length: l,
        } => {
            let side = (3.0 * r * r + 4.0 * l * l) / 12.0;
            (PI * r * r * 2.0 * l, Vec3::new(side, side, 0.5 * r * r))
        }
        GeomShape::Capsule {
            radius: r,
            half_length: l,
        } => {
            let (vc, vs) = (PI * r * r * 2.0 * l, 4.0 / 3.0 * PI * r.powi(3));
            let v = vc + vs;
            let (mc, ms) = (vc / v, vs / v);
            let h = 2.0 * l;
            let side = mc * (h * h / 12.0 + r * r / 4.0)
                + ms * (0.4 * r * r + h * h / 4.0 + 3.0 * h * r / 8.0);
            (
                v,
                Vec3::new(side, side, mc * 0.5 * r * r + ms * 0.4 * r * r),
            )
        }
        GeomShape::Mesh(_) => (0.0, Vec3::zeros()),
    }
}

/// The geoms' masses as one inertial (centre of mass, tensor about it in the body frame).
fn merged(parts: &[(f64, Pose, Matrix3<f64>)]) -> Option<Inertial> {
    let mass: f64 = parts.iter().map(|p| p.0).sum();
    if mass <= 0.0 {
        return None;
    }
    let center = parts
        .iter()
        .map(|(m, p, _)| p.translation.vector * *m)
        .sum::<Vec3>()
        / mass;
    let mut inertia = Matrix3::zeros();
    for (m, p, i) in parts {
        let r = p.rotation.to_rotation_matrix();
        let d = p.translation.vector - center;
        inertia += r.matrix() * i * r.matrix().transpose()
            + (Matrix3::identity() * d.norm_squared() - d * d.transpose()) * *m;
    }
    Some(Inertial {
        mass,
        pose: Pose::translation(center.x, center.y, center.z),
        inertia,
    })
}
