//! Bitmap maps: an image (PNG, PGM or another PNM) or a ROS map_server YAML file, whose occupied
//! pixels become static walls. Runs of pixels are merged into rectangles (as Stage does), so a
//! 2000 × 2000 office becomes a few thousand boxes, not four million.

use std::io::Cursor;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use ssx_core::environment::ArtifactVisual;
use ssx_core::math::{Pose, Vec3, pose_from_xyz_rpy};
use ssx_core::{ArtifactSpec, BodyKind, BodySpec, ColliderSpec, MassSpec, Origin, Shape, SsxError};

pub use crate::occupancy::{Occupancy, Rect};
use crate::schema::MapFile;

/// Largest image side (pixels).
pub const MAX_SIDE: u32 = 20_000;
/// Most pixels in an image (64 million: 64 MiB as grey levels).
pub const MAX_PIXELS: u64 = 64 << 20;
/// Largest image or YAML file (bytes).
pub const MAX_FILE: u64 = 64 << 20;
/// Most wall rectangles after merging.
pub const MAX_RECTS: usize = 250_000;

const WALL_COLOR: [f32; 4] = [0.45, 0.45, 0.5, 1.0];

/// A map_server YAML file (the fields ssx reads; `free_thresh` and `mode` are accepted and not
/// needed for walls).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MapYaml {
    image: PathBuf,
    resolution: f64,
    origin: Vec<f64>,
    #[serde(default = "d_thresh")]
    occupied_thresh: f64,
    #[serde(default)]
    #[allow(dead_code)]
    free_thresh: Option<f64>,
    #[serde(default)]
    negate: serde_yaml::Value,
    #[serde(default)]
    #[allow(dead_code)]
    mode: Option<String>,
}

fn d_thresh() -> f64 {
    0.65
}

/// Everything needed to turn a map into walls, wherever it came from.
struct Settings {
    image: PathBuf,
    resolution: f64,
    origin: [f64; 3],
    thresh: f64,
    negate: bool,
}

/// Reads an image's grey levels, refusing what is not an image, and images larger than the
/// limits before their pixels are decoded.
pub fn grey_image(path: &Path) -> Result<(u32, u32, Vec<u8>), String> {
    let shown = path.display().to_string();
    let bytes = crate::source::read_regular_bytes(path, &shown, MAX_FILE, "a PNG or PGM image")?;
    let reader = || {
        image::io::Reader::new(Cursor::new(&bytes[..]))
            .with_guessed_format()
            .map_err(|e| format!("cannot read '{shown}': {e}"))
    };
    let probe = reader()?;
    if probe.format().is_none() {
        return Err(format!(
            "'{shown}' is not an image ssx reads (PNG, or PGM/PPM/PBM)"
        ));
    }
    let (w, h) = probe
        .into_dimensions()
        .map_err(|e| format!("'{shown}' is not a readable image: {e}"))?;
    if w == 0 || h == 0 {
        return Err(format!("'{shown}' has no pixels ({w} × {h})"));
    }
    if w > MAX_SIDE || h > MAX_SIDE || u64::from(w) * u64::from(h) > MAX_PIXELS {
        return Err(format!(
            "'{shown}' is {w} × {h} pixels; maps are limited to {MAX_SIDE} pixels a side and {MAX_PIXELS} pixels in all"
        ));
    }
    let mut r = reader()?;
    let mut limits = image::io::Limits::default();
    limits.max_image_width = Some(MAX_SIDE);
    limits.max_image_height = Some(MAX_SIDE);
    limits.max_alloc = Some(4 * MAX_PIXELS);
    r.limits(limits);
    let img = r
        .decode()
        .map_err(|e| format!("'{shown}' is not a readable image: {e}"))?;
    let grey = img.to_luma8();
    Ok((grey.width(), grey.height(), grey.into_raw()))
}

/// The occupancy of an image, as map_server reads it: occupancy = (255 − v) / 255 (v / 255
/// with `negate`), occupied above `thresh`.
pub fn occupancy(width: u32, height: u32, grey: &[u8], thresh: f64, negate: bool) -> Occupancy {
    let cells = grey
        .iter()
        .map(|&v| {
            let p = if negate {
                f64::from(v) / 255.0
            } else {
                (255.0 - f64::from(v)) / 255.0
            };
            p > thresh
        })
        .collect();
    Occupancy {
        width,
        height,
        cells,
    }
}

fn yaml_settings(path: &Path) -> Result<Settings, SsxError> {
    let shown = path.display().to_string();
    let text = crate::source::read_regular(path, &shown, MAX_FILE)
        .map_err(|m| SsxError::Config(m.to_string()))?;
    let at = |line: usize, column: usize, message: String| SsxError::Input {
        origin: Box::new(Origin {
            file: path.to_path_buf(),
            json_path: String::new(),
            line,
            column,
        }),
        message,
    };
    let y: MapYaml = serde_yaml::from_str(&text).map_err(|e| {
        let (line, column) = e.location().map_or((1, 1), |l| (l.line(), l.column()));
        at(line, column, format!("not a map_server map file: {e}"))
    })?;
    let field = |name: &str| {
        text.lines()
            .position(|l| l.trim_start().starts_with(&format!("{name}:")))
            .map_or(1, |i| i + 1)
    };
    if !(1e-3..=100.0).contains(&y.resolution) {
        return Err(at(
            field("resolution"),
            1,
            format!(
                "resolution: expected a map resolution (m per pixel) from 0.001 to 100, got {}",
                ssx_sdk::number(y.resolution)
            ),
        ));
    }
    if !(2..=3).contains(&y.origin.len()) || y.origin.iter().any(|v| v.is_nan() || v.abs() > 1e5) {
        return Err(at(
            field("origin"),
            1,
            "origin: expected [x, y, yaw] with coordinates within ±1e5 m".into(),
        ));
    }
    if !(0.0..=1.0).contains(&y.occupied_thresh) {
        return Err(at(
            field("occupied_thresh"),
            1,
            "occupied_thresh: expected a number from 0 to 1".into(),
        ));
    }
    let negate = match &y.negate {
        serde_yaml::Value::Null => false,
        serde_yaml::Value::Bool(b) => *b,
        serde_yaml::Value::Number(n) if n.as_i64() == Some(0) => false,
        serde_yaml::Value::Number(n) if n.as_i64() == Some(1) => true,
        _ => {
            return Err(at(field("negate"), 1, "negate: expected 0 or 1".into()));
        }
    };
    let image = match path.parent() {
        Some(dir) if y.image.is_relative() => dir.join(&y.image),
        _ => y.image.clone(),
    };
    Ok(Settings {
        image,
        resolution: y.resolution,
        origin: [
            y.origin[0],
            y.origin[1],
            y.origin.get(2).copied().unwrap_or(0.0),
        ],
        thresh: y.occupied_thresh,
        negate,
    })
}

/// A scene's map as cells: the occupancy, metres per cell and the pose of its lower-left corner
/// (x, y, yaw).
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    /// Which cells are walls.
    pub occupancy: Occupancy,
    /// Metres per cell.
    pub resolution: f64,
    /// The world pose of the lower-left corner: x, y, yaw.
    pub origin: [f64; 3],
}

impl Layout {
    /// The cells as the host hands them to plugins: row 0 at the origin (the image's bottom
    /// row), rows going +y; 1 wall, 0 free.
    pub fn grid(&self) -> ssx_core::MapGrid {
        let o = &self.occupancy;
        let (w, h) = (o.width as usize, o.height as usize);
        let mut cells = Vec::with_capacity(w * h);
        for row in (0..h).rev() {
            cells.extend(o.cells[row * w..(row + 1) * w].iter().map(|&c| u8::from(c)));
        }
        ssx_core::MapGrid {
            width: o.width,
            height: o.height,
            resolution: self.resolution,
            origin: self.origin,
            cells,
        }
    }
}

/// Default cell size of a generated map (m).
pub const GENERATED_RESOLUTION: f64 = 0.5;

/// Reads or generates the scene's map. `resolve` turns a path named in the scene into a file
/// path; `err` makes a located error at a JSON path of the scene's `map`.
pub fn layout(
    map: &MapFile,
    scene_seed: u64,
    resolve: impl Fn(&Path) -> PathBuf,
    err: impl Fn(&str, String) -> SsxError,
) -> Result<Layout, SsxError> {
    let sources = [
        map.image.is_some(),
        map.yaml.is_some(),
        map.cave.is_some(),
        map.building.is_some(),
    ];
    if sources.iter().filter(|&&s| s).count() != 1 {
        return Err(err(
            "map",
            "a map needs exactly one of \"image\" (with \"resolution\"), \"yaml\" (a map_server file), \"cave\" or \"building\"".into(),
        ));
    }
    if map.cave.is_some() || map.building.is_some() {
        return generated(map, scene_seed, err);
    }
    let settings = match (&map.image, &map.yaml) {
        (Some(image), _) => {
            let Some(resolution) = map.resolution else {
                return Err(err(
                    "map",
                    "a map with \"image\" needs \"resolution\" (m per pixel)".into(),
                ));
            };
            let origin = map.origin.map_or([0.0; 2], |o| [o[0].0, o[1].0]);
            Settings {
                image: resolve(image),
                resolution: resolution.0,
                origin: [origin[0], origin[1], 0.0],
                thresh: map.occupied_thresh.map_or(d_thresh(), |t| t.0),
                negate: map.negate,
            }
        }
        (_, yaml) => {
            let yaml = yaml.as_ref().expect("one source, checked above");
            if map.resolution.is_some()
                || map.origin.is_some()
                || map.occupied_thresh.is_some()
                || map.negate
            {
                return Err(err(
                    "map",
                    "with \"yaml\", the resolution, origin, threshold and negate come from the YAML file; give only \"height\" beside it".into(),
                ));
            }
            let path = resolve(yaml);
            yaml_settings(&path).map_err(|e| match e {
                SsxError::Config(m) => err("map.yaml", m),
                other => other,
            })?
        }
    };
    let at = if map.yaml.is_some() {
        "map.yaml"
    } else {
        "map.image"
    };
    let (w, h, grey) = grey_image(&settings.image).map_err(|m| err(at, m))?;
    Ok(Layout {
        occupancy: occupancy(w, h, &grey, settings.thresh, settings.negate),
        resolution: settings.resolution,
        origin: settings.origin,
    })
}

/// A cave or a building generated from its seed.
fn generated(
    map: &MapFile,
    scene_seed: u64,
    err: impl Fn(&str, String) -> SsxError,
) -> Result<Layout, SsxError> {
    use crate::generate::{self, Building, Cave, Kind, Spawn};
    if map.occupied_thresh.is_some() || map.negate {
        return Err(err(
            "map",
            "a generated map takes no \"occupied_thresh\" or \"negate\"".into(),
        ));
    }
    let res = map.resolution.map_or(GENERATED_RESOLUTION, |r| r.0);
    let origin = map.origin.map_or([0.0; 2], |o| [o[0].0, o[1].0]);
    let cells = |size: &[crate::schema::Size; 2]| size.map(|s| (s.0 / res).round() as u32);
    let (kind, size, spawn, radius, at) = match (&map.cave, &map.building) {
        (Some(c), _) => {
            let smoothing = c.smoothing.unwrap_or(5);
            if smoothing > 100 {
                return Err(err(
                    "map.cave.smoothing",
                    format!("expected at most 100 rounds, got {smoothing}"),
                ));
            }
            let kind = Kind::Cave(Cave {
                seed: c.seed.unwrap_or(scene_seed),
                cells: cells(&c.size),
                fill: c.fill.map_or(0.45, |f| f.0),
                smoothing,
            });
            (kind, c.size, c.spawn, c.spawn_radius, "map.cave")
        }
        (_, Some(b)) => {
            let kind = Kind::Building(Building {
                seed: b.seed.unwrap_or(scene_seed),
                cells: cells(&b.size),
                room: (b.room_size.map_or(5.0, |s| s.0) / res).round().max(1.0) as u32,
                door: (b.door_width.map_or(1.0, |s| s.0) / res).ceil().max(1.0) as u32,
            });
            (kind, b.size, b.spawn, b.spawn_radius, "map.building")
        }
        _ => unreachable!("called for generated maps only"),
    };
    let centre = spawn.map_or([size[0].0 / 2.0, size[1].0 / 2.0], |s| {
        [s[0].0 - origin[0], s[1].0 - origin[1]]
    });
    if centre.iter().any(|&c| c < 0.0) {
        return Err(err(
            &format!("{at}.spawn"),
            "the spawn point lies outside the map".into(),
        ));
    }
    let spawn = Spawn {
        cell: centre.map(|c| (c / res).floor() as u32),
        radius: (radius.map_or(1.5, |r| r.0) / res).round() as u32,
    };
    let g = generate::generate(kind, spawn).map_err(|m| err(at, m))?;
    if g.attempts > 1 {
        tracing::info!(
            "{at}: the seed's map had too little free space; attempt {} (seed {}) was kept",
            g.attempts,
            g.seed
        );
    }
    Ok(Layout {
        occupancy: g.occupancy,
        resolution: res,
        origin: [origin[0], origin[1], 0.0],
    })
}

/// The map as a grey image: walls black, free space white, row 0 at the top.
pub fn png(occ: &Occupancy) -> Result<Vec<u8>, String> {
    let grey: Vec<u8> = occ.cells.iter().map(|&c| if c { 0 } else { 255 }).collect();
    let img = image::GrayImage::from_raw(occ.width, occ.height, grey)
        .ok_or("the occupancy does not match its size")?;
    let mut out = Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageOutputFormat::Png)
        .map_err(|e| e.to_string())?;
    Ok(out.into_inner())
}

/// The scene's map as an artifact named `map`: one static body whose colliders are the merged
/// wall rectangles of `layout`. `err` makes a located error at a JSON path of the scene's `map`.
pub fn artifact(
    map: &MapFile,
    layout: &Layout,
    err: impl Fn(&str, String) -> SsxError,
) -> Result<ArtifactSpec, SsxError> {
    let at = if map.yaml.is_some() {
        "map.yaml"
    } else if map.image.is_some() {
        "map.image"
    } else {
        "map"
    };
    let occ = &layout.occupancy;
    let h = occ.height;
    let rects = occ.rectangles();
    if rects.len() > MAX_RECTS {
        return Err(err(
            at,
            format!(
                "the map makes {} wall rectangles; the limit is {MAX_RECTS} (a noisy image? raise occupied_thresh)",
                rects.len()
            ),
        ));
    }
    let height = map.height.map_or(0.5, |h| h.0);
    let res = layout.resolution;
    let mut colliders = Vec::with_capacity(rects.len());
    let mut visuals = Vec::with_capacity(rects.len());
    for r in &rects {
        let half = Vec3::new(
            f64::from(r.w) * res / 2.0,
            f64::from(r.h) * res / 2.0,
            height / 2.0,
        );
        let centre = Vec3::new(
            (f64::from(r.x) + f64::from(r.w) / 2.0) * res,
            (f64::from(h) - f64::from(r.y) - f64::from(r.h) / 2.0) * res,
            height / 2.0,
        );
        let local_pose = Pose::from_parts(centre.into(), Default::default());
        let shape = Shape::Box { half_extents: half };
        colliders.push(ColliderSpec {
            shape: shape.clone(),
            local_pose,
            friction: 0.8,
            restitution: 0.0,
        });
        visuals.push(ArtifactVisual {
            body: 0,
            local_pose,
            shape,
            color: WALL_COLOR,
        });
    }
    let [ox, oy, yaw] = layout.origin;
    Ok(ArtifactSpec {
        name: "map".into(),
        bodies: vec![(
            "walls".into(),
            BodySpec {
                kind: BodyKind::Static,
                pose: pose_from_xyz_rpy([ox, oy, 0.0], [0.0, 0.0, yaw]),
                mass: MassSpec::Density(crate::DEFAULT_DENSITY),
                colliders,
                linear_damping: 0.0,
                angular_damping: 0.0,
                planar: false,
                group: 0,
            },
        )],
        joints: Vec::new(),
        visuals,
        driver: None,
        sensors: Vec::new(),
        model: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn occ(rows: &[&str]) -> Occupancy {
        Occupancy {
            width: rows[0].len() as u32,
            height: rows.len() as u32,
            cells: rows
                .iter()
                .flat_map(|r| r.chars().map(|c| c == '#'))
                .collect(),
        }
    }

    #[test]
    fn runs_merge_into_rectangles_that_cover_each_pixel_once() {
        let o = occ(&[
            "##....####", //
            "##....####",
            "##.......#",
            "..........",
            "#########.",
        ]);
        let rects = o.rectangles();
        assert_eq!(
            rects,
            vec![
                Rect {
                    x: 0,
                    y: 0,
                    w: 2,
                    h: 3
                },
                Rect {
                    x: 6,
                    y: 0,
                    w: 4,
                    h: 2
                },
                Rect {
                    x: 9,
                    y: 2,
                    w: 1,
                    h: 1
                },
                Rect {
                    x: 0,
                    y: 4,
                    w: 9,
                    h: 1
                },
            ]
        );
        let mut covered = vec![0; o.cells.len()];
        for r in &rects {
            for y in r.y..r.y + r.h {
                for x in r.x..r.x + r.w {
                    covered[(y * o.width + x) as usize] += 1;
                }
            }
        }
        let want: Vec<i32> = o.cells.iter().map(|&c| i32::from(c)).collect();
        assert_eq!(covered, want);
    }

    #[test]
    fn occupancy_follows_map_server() {
        // 255 is free, 0 occupied; 100 is occupancy 0.61 (free at 0.65, occupied at 0.5).
        let grey = [255, 0, 100];
        assert_eq!(
            occupancy(3, 1, &grey, 0.65, false).cells,
            [false, true, false]
        );
        assert_eq!(
            occupancy(3, 1, &grey, 0.5, false).cells,
            [false, true, true]
        );
        assert_eq!(
            occupancy(3, 1, &grey, 0.65, true).cells,
            [true, false, false]
        );
    }
}
