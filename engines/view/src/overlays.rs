//! Extensions' overlays as Foxglove messages: an occupancy-style grid of RGBA cells, or boxes and
//! segments as one scene entity.

use foxglove::Channel;
use foxglove::schemas::{
    Color, CubePrimitive, Grid, LinePrimitive, PackedElementField, Point3, Pose, Quaternion,
    SceneEntity, SceneUpdate, Vector2, line_primitive, packed_element_field::NumericType,
};

use crate::convert::{stamp, vec3};
use crate::frame::nanos;
use crate::scene::WORLD_FRAME;

/// An overlay's channel: cells or shapes.
pub(crate) enum OverlayChannel {
    Grid(Channel<Grid>),
    Shapes(Channel<SceneUpdate>),
}

/// Boxes or segments as one `foxglove.SceneUpdate` entity `overlays/<extension>/<name>` in
/// `world`, replacing the last.
pub(crate) fn shapes(o: &crate::frame::FrameOverlay, offset_ns: u64) -> SceneUpdate {
    let [r, g, b, a] = o.color.map(f64::from);
    let color = Some(Color { r, g, b, a });
    let mut entity = SceneEntity {
        timestamp: stamp(offset_ns + nanos(o.time)),
        frame_id: WORLD_FRAME.into(),
        id: format!("overlays/{}", o.path),
        frame_locked: false,
        ..Default::default()
    };
    let shapes = o.values.chunks_exact(ssx_core::render::SHAPE_VALUES);
    match o.kind {
        ssx_core::OverlayKind::Boxes => {
            entity.cubes = shapes
                .map(|v| CubePrimitive {
                    pose: Some(Pose {
                        position: vec3(v[0], v[1], v[2]),
                        orientation: Some(Quaternion {
                            x: 0.0,
                            y: 0.0,
                            z: 0.0,
                            w: 1.0,
                        }),
                    }),
                    size: vec3(v[3], v[4], v[5]),
                    color,
                })
                .collect();
        }
        _ => {
            entity.lines = vec![LinePrimitive {
                r#type: line_primitive::Type::LineList as i32,
                thickness: 2.0,
                scale_invariant: true,
                points: shapes
                    .flat_map(|v| {
                        [
                            Point3 {
                                x: v[0],
                                y: v[1],
                                z: v[2],
                            },
                            Point3 {
                                x: v[3],
                                y: v[4],
                                z: v[5],
                            },
                        ]
                    })
                    .collect(),
                color,
                ..Default::default()
            }];
        }
    }
    SceneUpdate {
        deletions: Vec::new(),
        entities: vec![entity],
    }
}

/// An overlay as a `foxglove.Grid` in `world`: RGBA cells, the four colour fields by name, so
/// that Foxglove's 3D panel colours it ("RGBA (separate fields)").
pub(crate) fn grid(o: &crate::frame::FrameOverlay, offset_ns: u64) -> Grid {
    let field = |name: &str, offset| PackedElementField {
        name: name.into(),
        offset,
        r#type: NumericType::Uint8 as i32,
    };
    Grid {
        timestamp: stamp(offset_ns + nanos(o.time)),
        frame_id: WORLD_FRAME.into(),
        pose: Some(Pose {
            position: vec3(o.origin[0], o.origin[1], o.origin[2]),
            orientation: Some(Quaternion {
                x: 0.0,
                y: 0.0,
                z: 0.0,
                w: 1.0,
            }),
        }),
        column_count: o.width,
        cell_size: Some(Vector2 {
            x: o.resolution,
            y: o.resolution,
        }),
        row_stride: o.width * 4,
        cell_stride: 4,
        fields: vec![
            field("red", 0),
            field("green", 1),
            field("blue", 2),
            field("alpha", 3),
        ],
        data: o.rgba.clone().into(),
    }
}
