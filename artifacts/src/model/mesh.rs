//! Mesh files (STL, COLLADA, OBJ) read into ssx meshes, scaled, each file and scale once per
//! scene: a hundred replicated robots share one copy of each mesh.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ssx_core::Mesh;
use ssx_core::math::Vec3;

/// Bytes of one mesh file: a 16 MiB binary STL is 350,000 triangles.
pub(crate) const MAX_MESH_BYTES: u64 = 16 << 20;
/// Triangles of one mesh.
pub(crate) const MAX_MESH_TRIANGLES: usize = 1_000_000;

/// The meshes a scene has read, by file and scale.
#[derive(Default)]
pub(crate) struct MeshCache {
    meshes: HashMap<(PathBuf, [u64; 3]), Arc<Mesh>>,
}

impl MeshCache {
    /// The mesh in `path` (named `uri` in the model) scaled by `scale`.
    pub(crate) fn load(
        &mut self,
        path: &Path,
        uri: &str,
        scale: Vec3,
        budget: &std::cell::Cell<u64>,
    ) -> Result<Arc<Mesh>, String> {
        let canon = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        let key = (
            canon,
            [scale.x.to_bits(), scale.y.to_bits(), scale.z.to_bits()],
        );
        if let Some(m) = self.meshes.get(&key) {
            return Ok(m.clone());
        }
        let shown = path.display().to_string();
        let limit = MAX_MESH_BYTES.min(budget.get());
        let bytes = crate::source::read_regular_bytes(path, &shown, limit, "a mesh file")
            .map_err(|m| format!("mesh '{uri}': {m}"))?;
        budget.set(budget.get() - bytes.len() as u64);
        let scene = mesh_loader::Loader::default()
            .load_from_slice(&bytes, path)
            .map_err(|e| format!("mesh '{uri}' ({shown}) cannot be read: {e}"))?;
        let triangles: usize = scene.meshes.iter().map(|m| m.faces.len()).sum();
        if triangles > MAX_MESH_TRIANGLES {
            return Err(format!(
                "mesh '{uri}' has {triangles} triangles; the limit is {MAX_MESH_TRIANGLES} (simplify it, or use a simpler collision mesh)"
            ));
        }
        let mut vertices = Vec::new();
        let mut faces = Vec::with_capacity(triangles);
        let s = [scale.x as f32, scale.y as f32, scale.z as f32];
        for m in &scene.meshes {
            let base = vertices.len() as u32;
            vertices.extend(
                m.vertices
                    .iter()
                    .map(|v| [v[0] * s[0], v[1] * s[1], v[2] * s[2]]),
            );
            faces.extend(
                m.faces
                    .iter()
                    .map(|f| [f[0] + base, f[1] + base, f[2] + base]),
            );
        }
        // A mirroring scale (an odd number of negative factors) turns the triangles inside out.
        if s.iter().filter(|&&x| x < 0.0).count() % 2 == 1 {
            for f in &mut faces {
                f.swap(1, 2);
            }
        }
        let mesh = Mesh::new(path.display().to_string(), vertices, faces)
            .map_err(|m| format!("mesh '{uri}' ({shown}): {m}"))?;
        let mesh = Arc::new(mesh);
        self.meshes.insert(key, mesh.clone());
        Ok(mesh)
    }
}
