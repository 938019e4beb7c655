//! URDF: links with their inertials, visuals and collisions, materials, and the joints between
//! links (revolute, continuous, prismatic, fixed). A root link called `world` holds the robot
//! in place. Documents with xacro markup go through `xacro.rs` first.

use std::collections::HashMap;

use nalgebra::Matrix3;
use roxmltree::Node;
use ssx_core::SsxError;
use ssx_core::math::{Pose, Vec3};

use super::xml::{Xml, child, children, xyz_rpy};
use super::{Geom, GeomShape, Inertial, Joint, JointType, Link, MeshFile, Model, Reading};

pub(crate) fn read(ctx: &mut Reading<'_>, text: &str) -> Result<Model, SsxError> {
    let xml = Xml { file: ctx.file };
    let expanded = super::xacro::expand(ctx.file, text)?;
    let text = expanded.as_deref().unwrap_or(text);
    let doc = super::xml::parse(ctx.file, text)?;
    let robot = doc.root_element();
    if robot.tag_name().name() != "robot" {
        return Err(xml.err(
            robot,
            "",
            format!(
                "a URDF file's top element is <robot>, found <{}>",
                robot.tag_name().name()
            ),
        ));
    }
    let mut materials: HashMap<String, [f32; 4]> = HashMap::new();
    for m in children(robot, "material") {
        if let (Some(name), Some(c)) = (m.attribute("name"), child(m, "color")) {
            materials.insert(
                name.to_string(),
                rgba(&xml, c, &format!("material '{name}'"))?,
            );
        }
    }
    let mut links = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for l in children(robot, "link") {
        let name = xml.attr(l, "link", "name")?.to_string();
        let at = format!("link '{name}'");
        if index.insert(name.clone(), links.len()).is_some() {
            return Err(xml.err(l, &at, format!("duplicate link name '{name}'")));
        }
        links.push(link(ctx, &xml, l, &at, name, &mut materials)?);
    }
    if links.is_empty() {
        return Err(xml.err(robot, "robot", "the robot has no <link>"));
    }
    let mut joints = Vec::new();
    let mut names: HashMap<String, ()> = HashMap::new();
    for j in children(robot, "joint") {
        let name = xml.attr(j, "joint", "name")?.to_string();
        let at = format!("joint '{name}'");
        if names.insert(name.clone(), ()).is_some() {
            return Err(xml.err(j, &at, format!("duplicate joint name '{name}'")));
        }
        joints.push(joint(&xml, j, &at, name, &index)?);
    }
    // A root link called `world` holds the robot: it goes, and its one child is the root.
    let mut fixed = false;
    if let Some(&w) = index.get("world") {
        let holding: Vec<&Joint> = joints.iter().filter(|j| j.parent == w).collect();
        let is_root = !joints.iter().any(|j| j.child == w);
        if is_root {
            match holding.as_slice() {
                [j] if j.kind == JointType::Fixed && j.origin == Pose::identity() => {}
                [j] if j.kind == JointType::Fixed => {
                    return Err(SsxError::Input {
                        origin: Box::new(j.at.clone()),
                        message: "the joint to 'world' must be at the origin: place the robot with the scene's 'pose'".into(),
                    });
                }
                [j] => {
                    return Err(SsxError::Input {
                        origin: Box::new(j.at.clone()),
                        message: format!(
                            "a {:?} joint to 'world': only a fixed joint may hold a robot in the world",
                            j.kind
                        )
                        .to_lowercase(),
                    });
                }
                _ => {
                    return Err(SsxError::Input {
                        origin: Box::new(links[w].at.clone()),
                        message: format!(
                            "'world' holds {} links: give it exactly one fixed joint",
                            holding.len()
                        ),
                    });
                }
            }
            fixed = true;
            joints.retain(|j| j.parent != w);
            links.remove(w);
            for j in &mut joints {
                for end in [&mut j.parent, &mut j.child] {
                    if *end > w {
                        *end -= 1;
                    }
                }
            }
        }
    }
    Ok(Model {
        links,
        joints,
        fixed,
        urdf: Some(text.to_string()),
    })
}

/// An `<origin xyz rpy>` child, or the identity.
fn origin(xml: &Xml<'_>, node: Node<'_, '_>, at: &str) -> Result<Pose, SsxError> {
    let Some(o) = child(node, "origin") else {
        return Ok(Pose::identity());
    };
    let at = format!("{at} > origin");
    let xyz = xml.vec3(o, &at, "xyz")?.unwrap_or_else(Vec3::zeros);
    let rpy = xml.vec3(o, &at, "rpy")?.unwrap_or_else(Vec3::zeros);
    Ok(xyz_rpy(xyz, rpy))
}

fn rgba(xml: &Xml<'_>, color: Node<'_, '_>, at: &str) -> Result<[f32; 4], SsxError> {
    let at = format!("{at} > color");
    let v = xml
        .numbers(color, &at, "rgba", 4)?
        .ok_or_else(|| xml.err(color, &at, "<color> needs 'rgba'"))?;
    if let Some(x) = v.iter().find(|x| !(0.0..=1.0).contains(*x)) {
        return Err(xml.err(
            color,
            &at,
            format!("colour components run from 0 to 1, got {x}"),
        ));
    }
    Ok([v[0] as f32, v[1] as f32, v[2] as f32, v[3] as f32])
}

fn link(
    ctx: &mut Reading<'_>,
    xml: &Xml<'_>,
    l: Node<'_, '_>,
    at: &str,
    name: String,
    materials: &mut HashMap<String, [f32; 4]>,
) -> Result<Link, SsxError> {
    let inertial = match child(l, "inertial") {
        None => None,
        Some(i) => Some(inertial(xml, i, &format!("{at} > inertial"))?),
    };
    let mut visuals = Vec::new();
    for (k, v) in children(l, "visual").enumerate() {
        let at = format!("{at} > visual[{k}]");
        let color = match child(v, "material") {
            None => None,
            Some(m) => match child(m, "color") {
                Some(c) => {
                    let c = rgba(xml, c, &format!("{at} > material"))?;
                    if let Some(n) = m.attribute("name") {
                        materials.insert(n.to_string(), c);
                    }
                    Some(c)
                }
                None => m.attribute("name").and_then(|n| materials.get(n).copied()),
            },
        };
        visuals.push(Geom {
            pose: origin(xml, v, &at)?,
            shape: geometry(ctx, xml, v, &at)?,
            color,
            friction: None,
        });
    }
    let mut collisions = Vec::new();
    for (k, c) in children(l, "collision").enumerate() {
        let at = format!("{at} > collision[{k}]");
        collisions.push(Geom {
            pose: origin(xml, c, &at)?,
            shape: geometry(ctx, xml, c, &at)?,
            color: None,
            friction: None,
        });
    }
    Ok(Link {
        name,
        inertial,
        visuals,
        collisions,
        at: xml.origin(l, at),
    })
}

fn inertial(xml: &Xml<'_>, i: Node<'_, '_>, at: &str) -> Result<Inertial, SsxError> {
    let m = child(i, "mass").ok_or_else(|| xml.err(i, at, "<inertial> needs <mass>"))?;
    let mass = xml
        .number(m, &format!("{at} > mass"), "value")?
        .ok_or_else(|| xml.err(m, &format!("{at} > mass"), "<mass> needs 'value'"))?;
    if mass < 0.0 {
        return Err(xml.err(
            m,
            &format!("{at} > mass"),
            format!("a mass cannot be negative, got {mass} kg"),
        ));
    }
    let mut inertia = Matrix3::zeros();
    if let Some(n) = child(i, "inertia") {
        let at = format!("{at} > inertia");
        let get = |k: &str| -> Result<f64, SsxError> { Ok(xml.number(n, &at, k)?.unwrap_or(0.0)) };
        let (ixx, iyy, izz) = (get("ixx")?, get("iyy")?, get("izz")?);
        let (ixy, ixz, iyz) = (get("ixy")?, get("ixz")?, get("iyz")?);
        inertia = Matrix3::new(ixx, ixy, ixz, ixy, iyy, iyz, ixz, iyz, izz);
        let principal = nalgebra::SymmetricEigen::new(inertia).eigenvalues;
        let tol = 1e-9 * principal.amax().max(1e-12);
        if principal.iter().any(|&p| p < -tol) {
            return Err(xml.err(
                n,
                &at,
                format!(
                    "the inertia is not physical: its principal moments are {:.4e}, {:.4e}, {:.4e} kg·m² (none may be negative)",
                    principal[0], principal[1], principal[2]
                ),
            ));
        }
    }
    Ok(Inertial {
        mass,
        pose: origin(xml, i, at)?,
        inertia,
    })
}

fn geometry(
    ctx: &mut Reading<'_>,
    xml: &Xml<'_>,
    parent: Node<'_, '_>,
    at: &str,
) -> Result<GeomShape, SsxError> {
    let g = child(parent, "geometry").ok_or_else(|| xml.err(parent, at, "needs a <geometry>"))?;
    let at = format!("{at} > geometry");
    let shape = g
        .children()
        .find(|c| c.is_element())
        .ok_or_else(|| xml.err(g, &at, "<geometry> is empty"))?;
    let tag = shape.tag_name().name();
    let at = format!("{at} > {tag}");
    let positive = |name: &str| -> Result<f64, SsxError> {
        let v = xml
            .number(shape, &at, name)?
            .ok_or_else(|| xml.err(shape, &at, format!("<{tag}> needs '{name}'")))?;
        if v <= 0.0 {
            return Err(xml.err(shape, &at, format!("'{name}' must be positive, got {v}")));
        }
        Ok(v)
    };
    Ok(match tag {
        "box" => {
            let s = xml
                .vec3(shape, &at, "size")?
                .ok_or_else(|| xml.err(shape, &at, "<box> needs 'size'"))?;
            if s.iter().any(|&v| v <= 0.0) {
                return Err(xml.err(
                    shape,
                    &at,
                    format!(
                        "a box's sizes must be positive, got {} {} {}",
                        s.x, s.y, s.z
                    ),
                ));
            }
            GeomShape::Box(s / 2.0)
        }
        "sphere" => GeomShape::Sphere(positive("radius")?),
        "cylinder" => GeomShape::Cylinder {
            radius: positive("radius")?,
            half_length: positive("length")? / 2.0,
        },
        "capsule" => GeomShape::Capsule {
            radius: positive("radius")?,
            half_length: positive("length")? / 2.0,
        },
        "mesh" => {
            let file = xml.attr(shape, &at, "filename")?;
            let scale = match xml.numbers(shape, &at, "scale", 3) {
                Ok(Some(v)) => Vec3::new(v[0], v[1], v[2]),
                Ok(None) => Vec3::repeat(1.0),
                // `scale="0.001"` (one number) is common and read by most tools.
                Err(e) => match xml.number(shape, &at, "scale") {
                    Ok(Some(s)) => Vec3::repeat(s),
                    _ => return Err(e),
                },
            };
            if scale.iter().any(|&v| v == 0.0) {
                return Err(xml.err(shape, &at, "a mesh's scale must not be zero"));
            }
            let path = ctx
                .search
                .resolve(file)
                .map_err(|m| xml.err(shape, &at, m))?;
            let mesh = ctx
                .meshes
                .load(&path, file, scale, ctx.budget)
                .map_err(|m| xml.err(shape, &at, m))?;
            GeomShape::Mesh(MeshFile { mesh, path, scale })
        }
        other => {
            return Err(xml.err(
                shape,
                &at,
                format!(
                    "unknown geometry <{other}> (URDF has box, cylinder, sphere, mesh and capsule)"
                ),
            ));
        }
    })
}

fn joint(
    xml: &Xml<'_>,
    j: Node<'_, '_>,
    at: &str,
    name: String,
    links: &HashMap<String, usize>,
) -> Result<Joint, SsxError> {
    let kind = match xml.attr(j, at, "type")? {
        "revolute" => JointType::Revolute,
        "continuous" => JointType::Continuous,
        "prismatic" => JointType::Prismatic,
        "fixed" => JointType::Fixed,
        k @ ("floating" | "planar") => {
            return Err(xml.err(
                j,
                at,
                format!("a {k} joint is not modelled: ssx joints are revolute, continuous, prismatic or fixed (a free base is the default: leave the joint out)"),
            ));
        }
        other => {
            return Err(xml.err(
                j,
                at,
                format!("unknown joint type '{other}' (URDF's are revolute, continuous, prismatic, fixed, floating and planar)"),
            ));
        }
    };
    let end = |tag: &'static str| -> Result<usize, SsxError> {
        let n = child(j, tag).ok_or_else(|| xml.err(j, at, format!("<joint> needs <{tag}>")))?;
        let l = xml.attr(n, &format!("{at} > {tag}"), "link")?;
        links
            .get(l)
            .copied()
            .ok_or_else(|| xml.err(n, &format!("{at} > {tag}"), format!("no link named '{l}'")))
    };
    let (parent, child_link) = (end("parent")?, end("child")?);
    if parent == child_link {
        return Err(xml.err(j, at, "a joint links two different links"));
    }
    let axis = match child(j, "axis") {
        None => Vec3::x(),
        // A fixed joint's axis means nothing (xacro often writes "0 0 0" there).
        Some(_) if kind == JointType::Fixed => Vec3::x(),
        Some(a) => {
            let v = xml
                .vec3(a, &format!("{at} > axis"), "xyz")?
                .unwrap_or_else(Vec3::x);
            if v.norm() < 1e-9 {
                return Err(xml.err(a, &format!("{at} > axis"), "the axis must not be zero"));
            }
            v.normalize()
        }
    };
    let (mut limits, mut effort) = (None, None);
    if let Some(l) = child(j, "limit") {
        let lat = format!("{at} > limit");
        let lower = xml.number(l, &lat, "lower")?.unwrap_or(0.0);
        let upper = xml.number(l, &lat, "upper")?.unwrap_or(0.0);
        if matches!(kind, JointType::Revolute | JointType::Prismatic) {
            if lower > upper {
                return Err(xml.err(
                    l,
                    &lat,
                    format!("lower limit {lower} is above upper limit {upper}"),
                ));
            }
            limits = Some([lower, upper]);
        }
        effort = xml.number(l, &lat, "effort")?.filter(|&e| e > 0.0);
    }
    let damping = match child(j, "dynamics") {
        None => 0.0,
        Some(d) => {
            let v = xml
                .number(d, &format!("{at} > dynamics"), "damping")?
                .unwrap_or(0.0);
            if v < 0.0 {
                return Err(xml.err(
                    d,
                    &format!("{at} > dynamics"),
                    format!("damping cannot be negative, got {v}"),
                ));
            }
            v
        }
    };
    Ok(Joint {
        name,
        kind,
        parent,
        child: child_link,
        origin: origin(xml, j, at)?,
        anchor: Vec3::zeros(),
        axis,
        limits,
        effort,
        damping,
        at: xml.origin(j, at),
    })
}
