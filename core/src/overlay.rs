//! Overlays: what extensions draw over the world for a viewer (grids of coloured cells, boxes,
//! segments), kept by name in bounded lists; render backends read them through
//! [`OverlaySource`].

/// What an overlay draws.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OverlayKind {
    /// RGBA cells on a horizontal grid (`width`, `height`, `resolution`, `origin`, `rgba`).
    #[default]
    Grid,
    /// Boxes in `color`: `values` holds 6 numbers a box, its centre and size (m, world frame).
    Boxes,
    /// Line segments in `color`: `values` holds 6 numbers a segment, its two ends.
    Lines,
}

/// Numbers a box or a segment takes in [`Overlay::values`].
pub const SHAPE_VALUES: usize = 6;
/// Most boxes or segments an overlay may have.
pub const MAX_OVERLAY_SHAPES: usize = 100_000;

/// A picture an extension lays over the world for views (the explored map, a heatmap, tags,
/// comms links): RGBA cells on a horizontal grid, row 0 at `origin`, rows going +y, columns +x;
/// or boxes or line segments.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Overlay {
    /// Its name, unique in its extension (letters, digits, `_`, `.`, `-`).
    pub name: String,
    /// What it draws.
    pub kind: OverlayKind,
    /// Boxes or segments, [`SHAPE_VALUES`] numbers each.
    pub values: Vec<f64>,
    /// Their colour, RGBA 0 to 1.
    pub color: [f32; 4],
    /// Cells per row.
    pub width: u32,
    /// Rows.
    pub height: u32,
    /// Cell size (m).
    pub resolution: f64,
    /// Where cell (0, 0)'s corner lies (m, world frame).
    pub origin: [f64; 3],
    /// `width × height` RGBA cells, 4 bytes each.
    pub rgba: Vec<u8>,
    /// Simulated time it was drawn at (s).
    pub time: f64,
    /// Counts its changes, so that a backend copies it only when it changed.
    pub version: u64,
}

/// Most cells an overlay may have (a 4096 × 4096 map).
pub const MAX_OVERLAY_CELLS: u64 = 4096 * 4096;
/// Most overlays an extension may keep.
pub const MAX_OVERLAYS: usize = 16;

/// Why an overlay was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OverlayError {
    /// A bad name.
    #[error("an overlay's name is 1 to 64 letters, digits, '_', '.' or '-'")]
    Name,
    /// A bad size, resolution or origin.
    #[error(
        "an overlay is 1 to 16,777,216 cells with a positive finite resolution and a finite origin"
    )]
    Size,
    /// The cells do not match the size.
    #[error("an overlay of {width} × {height} cells needs {need} bytes of RGBA, got {got}")]
    Cells {
        /// Cells per row.
        width: u32,
        /// Rows.
        height: u32,
        /// Bytes needed.
        need: u64,
        /// Bytes given.
        got: usize,
    },
    /// Too many.
    #[error("an extension keeps at most 16 overlays")]
    TooMany,
    /// Shapes that are not whole, too many, or not finite.
    #[error(
        "an overlay's shapes are up to 100,000 boxes or segments of 6 finite numbers each (got {0} numbers), in a colour of 4 numbers from 0 to 1"
    )]
    Shapes(usize),
}

/// Sets overlay `name` in `list` (keeping its buffer), or adds it.
pub fn set_overlay(
    list: &mut Vec<Overlay>,
    name: &str,
    (width, height, resolution, origin): (u32, u32, f64, [f64; 3]),
    rgba: &[u8],
    time: f64,
) -> Result<(), OverlayError> {
    let cells = u64::from(width) * u64::from(height);
    if cells == 0
        || cells > MAX_OVERLAY_CELLS
        || !(resolution.is_finite() && resolution > 0.0)
        || !origin.iter().all(|v| v.is_finite())
    {
        return Err(OverlayError::Size);
    }
    if rgba.len() as u64 != cells * 4 {
        return Err(OverlayError::Cells {
            width,
            height,
            need: cells * 4,
            got: rgba.len(),
        });
    }
    let o = slot(list, name)?;
    (o.width, o.height, o.resolution, o.origin, o.time) = (width, height, resolution, origin, time);
    o.kind = OverlayKind::Grid;
    o.values.clear();
    o.rgba.clear();
    o.rgba.extend_from_slice(rgba);
    o.version += 1;
    Ok(())
}

/// Sets overlay `name` in `list` to boxes or segments (`kind` not [`OverlayKind::Grid`]).
pub fn set_shapes(
    list: &mut Vec<Overlay>,
    name: &str,
    kind: OverlayKind,
    values: &[f64],
    color: [f32; 4],
    time: f64,
) -> Result<(), OverlayError> {
    let whole = values.len().is_multiple_of(SHAPE_VALUES)
        && values.len() / SHAPE_VALUES <= MAX_OVERLAY_SHAPES
        && kind != OverlayKind::Grid;
    if !whole
        || !values.iter().all(|v| v.is_finite())
        || !color.iter().all(|c| (0.0..=1.0).contains(c))
    {
        return Err(OverlayError::Shapes(values.len()));
    }
    let o = slot(list, name)?;
    (o.kind, o.color, o.time) = (kind, color, time);
    o.rgba.clear();
    o.values.clear();
    o.values.extend_from_slice(values);
    o.version += 1;
    Ok(())
}

/// Overlay `name` of `list`, added (empty) when new; the name checked.
fn slot<'l>(list: &'l mut Vec<Overlay>, name: &str) -> Result<&'l mut Overlay, OverlayError> {
    let name_ok = (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b));
    if !name_ok {
        return Err(OverlayError::Name);
    }
    let i = match list.iter().position(|o| o.name == name) {
        Some(i) => i,
        None if list.len() >= MAX_OVERLAYS => return Err(OverlayError::TooMany),
        None => {
            list.push(Overlay {
                name: name.to_string(),
                ..Overlay::default()
            });
            list.len() - 1
        }
    };
    Ok(&mut list[i])
}

/// Every extension's overlays, as a backend reads them.
pub trait OverlaySource {
    /// Calls `each(extension, overlay)` for every overlay, in extension order.
    fn visit(&self, each: &mut dyn FnMut(&str, &Overlay));
}
