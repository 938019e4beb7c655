//! A model written as URDF: the `robot_description` of a robot that came from an MJCF file, so
//! that RViz2's RobotModel draws it as it draws a URDF robot (its links at the frames ssx
//! publishes on `/tf`, meshes by `file://` path with their scale).
//!
//! URDF puts a joint's axis through its child link's origin; an MJCF joint may sit elsewhere in
//! its body (`pos`). Such a joint is written through the origin: ssx's own `/tf` carries every
//! link's true pose, which is what RViz2 draws from, but a tool that computes the links from
//! `joint_states` alone (robot_state_publisher) would misplace the bodies below it.

use std::fmt::Write as _;

use ssx_core::math::Pose;

use super::{Geom, GeomShape, JointType, Model};

/// `model` as a URDF document named `name`.
pub(crate) fn write(model: &Model, name: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(out, r#"<?xml version="1.0"?>"#);
    let _ = writeln!(
        out,
        "<!-- written by ssx from {}: the links, geometry, inertia and joints ssx simulates -->",
        escape(name).replace("--", "- -")
    );
    let _ = writeln!(out, r#"<robot name="{}">"#, escape(name));
    for link in &model.links {
        let _ = writeln!(out, r#"  <link name="{}">"#, escape(&link.name));
        if let Some(i) = &link.inertial {
            let m = &i.inertia;
            let _ = writeln!(out, "    <inertial>");
            let _ = writeln!(out, "      {}", origin(&i.pose));
            let _ = writeln!(out, r#"      <mass value="{}"/>"#, i.mass);
            let _ = writeln!(
                out,
                r#"      <inertia ixx="{}" ixy="{}" ixz="{}" iyy="{}" iyz="{}" izz="{}"/>"#,
                m[(0, 0)],
                m[(0, 1)],
                m[(0, 2)],
                m[(1, 1)],
                m[(1, 2)],
                m[(2, 2)]
            );
            let _ = writeln!(out, "    </inertial>");
        }
        for (k, g) in link.visuals.iter().enumerate() {
            geom(&mut out, "visual", g, &format!("{}_{k}", link.name));
        }
        for (k, g) in link.collisions.iter().enumerate() {
            geom(&mut out, "collision", g, &format!("{}_{k}", link.name));
        }
        let _ = writeln!(out, "  </link>");
    }
    for j in &model.joints {
        let kind = match j.kind {
            JointType::Fixed => "fixed",
            JointType::Revolute => "revolute",
            JointType::Continuous => "continuous",
            JointType::Prismatic => "prismatic",
        };
        let _ = writeln!(out, r#"  <joint name="{}" type="{kind}">"#, escape(&j.name));
        let _ = writeln!(
            out,
            r#"    <parent link="{}"/>"#,
            escape(&model.links[j.parent].name)
        );
        let _ = writeln!(
            out,
            r#"    <child link="{}"/>"#,
            escape(&model.links[j.child].name)
        );
        let _ = writeln!(out, "    {}", origin(&j.origin));
        if j.kind != JointType::Fixed {
            let a = j.axis;
            let _ = writeln!(out, r#"    <axis xyz="{} {} {}"/>"#, a.x, a.y, a.z);
            // URDF wants a limit on revolute and prismatic joints; an effort of 0 reads as
            // none (as ssx reads it).
            let effort = j.effort.unwrap_or(0.0);
            match (j.kind, j.limits) {
                (JointType::Revolute | JointType::Prismatic, Some([lo, hi])) => {
                    let _ = writeln!(
                        out,
                        r#"    <limit lower="{lo}" upper="{hi}" effort="{effort}" velocity="0"/>"#
                    );
                }
                _ if j.effort.is_some() => {
                    let _ = writeln!(out, r#"    <limit effort="{effort}" velocity="0"/>"#);
                }
                _ => {}
            }
            if j.damping > 0.0 {
                let _ = writeln!(out, r#"    <dynamics damping="{}"/>"#, j.damping);
            }
        }
        let _ = writeln!(out, "  </joint>");
    }
    let _ = writeln!(out, "</robot>");
    out
}

fn origin(p: &Pose) -> String {
    let t = p.translation.vector;
    let (r, pi, y) = p.rotation.euler_angles();
    format!(
        r#"<origin xyz="{} {} {}" rpy="{r} {pi} {y}"/>"#,
        t.x, t.y, t.z
    )
}

fn geom(out: &mut String, tag: &str, g: &Geom, material: &str) {
    let _ = writeln!(out, "    <{tag}>");
    let _ = writeln!(out, "      {}", origin(&g.pose));
    let shape = match &g.shape {
        GeomShape::Box(h) => format!(r#"<box size="{} {} {}"/>"#, 2.0 * h.x, 2.0 * h.y, 2.0 * h.z),
        GeomShape::Sphere(r) => format!(r#"<sphere radius="{r}"/>"#),
        GeomShape::Cylinder {
            radius,
            half_length,
        } => format!(
            r#"<cylinder radius="{radius}" length="{}"/>"#,
            2.0 * half_length
        ),
        GeomShape::Capsule {
            radius,
            half_length,
        } => format!(
            r#"<capsule radius="{radius}" length="{}"/>"#,
            2.0 * half_length
        ),
        GeomShape::Mesh(m) => {
            let s = m.scale;
            format!(
                r#"<mesh filename="file://{}" scale="{} {} {}"/>"#,
                escape(&m.path.display().to_string()),
                s.x,
                s.y,
                s.z
            )
        }
    };
    let _ = writeln!(out, "      <geometry>{shape}</geometry>");
    if tag == "visual"
        && let Some(c) = g.color
    {
        let _ = writeln!(
            out,
            r#"      <material name="{}"><color rgba="{} {} {} {}"/></material>"#,
            escape(material),
            c[0],
            c[1],
            c[2],
            c[3]
        );
    }
    let _ = writeln!(out, "    </{tag}>");
}

/// Text safe in an XML attribute (a name keeps its characters: a link's frame is named by it).
fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn an_attribute_keeps_a_name_s_characters_and_escapes_xml_s_own() {
        assert_eq!(escape("arm--link_1"), "arm--link_1");
        assert_eq!(escape(r#"a<b>&"c""#), "a&lt;b&gt;&amp;&quot;c&quot;");
    }
}
