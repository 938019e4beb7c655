//! Meshes in the view: each distinct mesh of the scene once, as a binary STL (Foxglove's
//! `model/stl`), named by its content. The live view links to it (the page server answers
//! `/meshes/<name>`, so the page and Foxglove fetch each mesh once however many bodies wear it);
//! a recording, which must stand alone, embeds it in the scene's model primitives up to a
//! budget, and draws the rest as their boxes.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use foxglove::schemas::{CubePrimitive, ModelPrimitive, SceneUpdate};
use ssx_core::Mesh;
use ssx_core::math::Vec3;

use crate::convert::{color, vec3};

/// Where a model primitive's mesh is found: the path the page server answers, before the
/// live view puts its address in front.
pub(crate) const PREFIX: &str = "/meshes/";
/// Foxglove's media type for a binary STL.
pub(crate) const MEDIA_TYPE: &str = "model/stl";
/// A recording embeds at most this much mesh data in one scene message (bodies past it are
/// drawn as their meshes' boxes): 100 TurtleBot3s would otherwise write 460 MB.
pub(crate) const EMBED_BUDGET: usize = 64 << 20;

/// One distinct mesh as the view sends it.
#[derive(Clone, Debug)]
pub struct ViewMesh {
    /// Binary STL.
    pub stl: Bytes,
    /// Its box, for a body drawn without it.
    pub lo: Vec3,
    /// See `lo`.
    pub hi: Vec3,
}

impl ViewMesh {
    /// The mesh as a binary STL (80-byte header, count, then per triangle its normal, three
    /// corners and a zero attribute word), and the name it is served under: a hash of the
    /// bytes, so that a name means the same mesh across resets.
    pub fn new(mesh: &Mesh) -> (String, ViewMesh) {
        let mut b = Vec::with_capacity(84 + 50 * mesh.triangles.len());
        let mut header = [0u8; 80];
        let tag = b"ssx mesh";
        header[..tag.len()].copy_from_slice(tag);
        b.extend_from_slice(&header);
        b.extend_from_slice(&(mesh.triangles.len() as u32).to_le_bytes());
        for t in &mesh.triangles {
            let [a, c, d] = t.map(|i| {
                let v = mesh.vertices[i as usize];
                Vec3::new(v[0] as f64, v[1] as f64, v[2] as f64)
            });
            let n = (c - a)
                .cross(&(d - a))
                .try_normalize(0.0)
                .unwrap_or_default();
            for v in [n, a, c, d] {
                for x in v.iter() {
                    b.extend_from_slice(&(*x as f32).to_le_bytes());
                }
            }
            b.extend_from_slice(&[0, 0]);
        }
        let mut h = DefaultHasher::new();
        b.hash(&mut h);
        let (lo, hi) = mesh.bounds();
        (
            format!("{:016x}.stl", h.finish()),
            ViewMesh {
                stl: Bytes::from(b),
                lo,
                hi,
            },
        )
    }
}

/// The meshes the page server answers: every one any world of this run has shown (a name is
/// its content, so a reset's world reuses the ones it shares).
pub(crate) type MeshFiles = Arc<Mutex<HashMap<String, Bytes>>>;

/// Adds `meshes` to what the page server answers.
pub(crate) fn serve(files: &MeshFiles, meshes: &HashMap<String, ViewMesh>) {
    let mut f = files.lock().unwrap_or_else(|p| p.into_inner());
    for (name, m) in meshes {
        f.entry(name.clone()).or_insert_with(|| m.stl.clone());
    }
}

/// How a sink's model primitives reach their meshes.
#[derive(Clone, Debug)]
pub(crate) enum Links {
    /// By URL: the page server's address (`http://host:port`) before each `/meshes/<name>`.
    Url(String),
    /// The bytes in the message, up to [`EMBED_BUDGET`] in all; past it, boxes.
    Embed,
}

/// `update` with each model primitive's mesh reached as `links` says; `None` when there is no
/// model primitive (nothing to copy).
pub(crate) fn linked(
    update: &SceneUpdate,
    meshes: &HashMap<String, ViewMesh>,
    links: &Links,
) -> Option<SceneUpdate> {
    if update.entities.iter().all(|e| e.models.is_empty()) {
        return None;
    }
    let mut out = update.clone();
    let mut embedded = 0usize;
    let mut boxed = 0usize;
    for e in &mut out.entities {
        let models = std::mem::take(&mut e.models);
        for mut m in models {
            let Some(mesh) = m.url.strip_prefix(PREFIX).and_then(|n| meshes.get(n)) else {
                e.models.push(m);
                continue;
            };
            match links {
                Links::Url(base) => {
                    m.url = format!("{base}{}", m.url);
                    e.models.push(m);
                }
                Links::Embed if embedded + mesh.stl.len() <= EMBED_BUDGET => {
                    embedded += mesh.stl.len();
                    m.url.clear();
                    m.data = mesh.stl.clone();
                    e.models.push(m);
                }
                Links::Embed => {
                    boxed += 1;
                    e.cubes.push(bounding_box(&m, mesh));
                }
            }
        }
    }
    if boxed > 0 {
        tracing::warn!(
            "recording: {boxed} meshes drawn as their boxes: the scene's meshes pass the {} MiB a recording embeds",
            EMBED_BUDGET >> 20
        );
    }
    Some(out)
}

/// The box about a model primitive's mesh, in its frame.
fn bounding_box(m: &ModelPrimitive, mesh: &ViewMesh) -> CubePrimitive {
    let c = (mesh.lo + mesh.hi) / 2.0;
    let size = mesh.hi - mesh.lo;
    let mut pose = m.pose.unwrap_or_default();
    // No orientation (or a zero one, as protobuf's default reads) is none.
    let turn = pose
        .orientation
        .as_ref()
        .and_then(|q| nalgebra::Unit::try_new(nalgebra::Quaternion::new(q.w, q.x, q.y, q.z), 1e-12))
        .unwrap_or_default();
    let at = turn * c;
    let p = pose.position.get_or_insert_with(Default::default);
    (p.x, p.y, p.z) = (p.x + at.x, p.y + at.y, p.z + at.z);
    CubePrimitive {
        pose: Some(pose),
        size: vec3(size.x, size.y, size.z),
        color: m.color.or_else(|| color([1.0; 4])),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use foxglove::schemas::SceneEntity;

    fn tetrahedron() -> Mesh {
        Mesh::new(
            "t.stl".into(),
            vec![
                [0.0, 0.0, 0.0],
                [1.0, 0.0, 0.0],
                [0.0, 1.0, 0.0],
                [0.0, 0.0, 1.0],
            ],
            vec![[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]],
        )
        .unwrap()
    }

    #[test]
    fn a_mesh_is_a_binary_stl_with_outward_normals_and_a_name_from_its_bytes() {
        let (name, m) = ViewMesh::new(&tetrahedron());
        assert_eq!(m.stl.len(), 84 + 4 * 50);
        assert_eq!(u32::from_le_bytes(m.stl[80..84].try_into().unwrap()), 4);
        let f = |o: usize| f32::from_le_bytes(m.stl[o..o + 4].try_into().unwrap());
        // The first face (0, 2, 1) lies in z = 0 and faces down.
        assert_eq!([f(84), f(88), f(92)], [0.0, 0.0, -1.0]);
        // Its third corner is vertex 1.
        assert_eq!([f(84 + 36), f(84 + 40), f(84 + 44)], [1.0, 0.0, 0.0]);
        assert_eq!(ViewMesh::new(&tetrahedron()).0, name);
        assert!(name.ends_with(".stl"));
    }

    #[test]
    fn a_url_gets_the_server_s_address_and_a_recording_embeds_within_its_budget() {
        let (name, small) = ViewMesh::new(&tetrahedron());
        let big = ViewMesh {
            stl: Bytes::from(vec![0u8; EMBED_BUDGET / 2 + 1]),
            lo: Vec3::new(-1.0, -2.0, 0.0),
            hi: Vec3::new(1.0, 2.0, 2.0),
        };
        let meshes = HashMap::from([(name.clone(), small), ("big.stl".to_string(), big)]);
        let model = |n: &str| ModelPrimitive {
            url: format!("{PREFIX}{n}"),
            media_type: MEDIA_TYPE.into(),
            ..Default::default()
        };
        let update = SceneUpdate {
            deletions: vec![],
            entities: vec![SceneEntity {
                id: "a".into(),
                models: vec![model(&name), model("big.stl"), model("big.stl")],
                ..Default::default()
            }],
        };
        let live = linked(&update, &meshes, &Links::Url("http://h:1".into())).unwrap();
        assert_eq!(
            live.entities[0].models[0].url,
            format!("http://h:1/meshes/{name}")
        );
        let rec = linked(&update, &meshes, &Links::Embed).unwrap();
        let e = &rec.entities[0];
        // The small one and one big one fit; the second big one is its box, centred on its
        // middle.
        assert_eq!(e.models.len(), 2);
        assert_eq!(e.models[0].data.len(), 84 + 4 * 50);
        assert!(e.models.iter().all(|m| m.url.is_empty()));
        assert_eq!(e.cubes.len(), 1);
        let c = &e.cubes[0];
        assert_eq!(c.pose.as_ref().unwrap().position.as_ref().unwrap().z, 1.0);
        assert_eq!(c.size.as_ref().unwrap().y, 4.0);
        // A scene without meshes is not copied.
        assert!(linked(&SceneUpdate::default(), &meshes, &Links::Embed).is_none());
    }
}
