//! What the extension shows in the live view and the recording: the explored and covered maps
//! and, on request, MAES's coverage heatmap (red where a robot was a moment ago, blue where one
//! was long ago), laid over the floor as RGBA overlays (`/overlays/explore/<name>` in views).

use serde::Deserialize;
use ssx_sdk::abi::{SSX_OVERLAY_BOXES, SSX_OVERLAY_LINES};
use ssx_sdk::{Ctx, MapInfo};

use crate::raster::Raster;

/// The `view` block.
#[derive(Deserialize, Clone, Debug)]
#[serde(deny_unknown_fields)]
pub struct ViewConfig {
    /// Draw the overlays every this many simulated seconds (0: never; default 1).
    #[serde(default = "d_every")]
    pub every: f64,
    /// Also draw the coverage heatmap.
    #[serde(default)]
    pub heatmap: bool,
    /// Age (s) at which the heatmap reaches blue (default 60).
    #[serde(default = "d_horizon")]
    pub horizon: f64,
    /// Also draw this robot's SLAM map (an artifact name; needs `slam`).
    #[serde(default)]
    pub slam: Option<String>,
    /// Draw the tags as small boxes where they were dropped (default true).
    #[serde(default = "yes")]
    pub tags: bool,
    /// Draw a line between every two robots a message passed between in the last second.
    #[serde(default)]
    pub links: bool,
}

fn yes() -> bool {
    true
}
fn d_every() -> f64 {
    1.0
}
fn d_horizon() -> f64 {
    60.0
}

impl Default for ViewConfig {
    fn default() -> Self {
        ViewConfig {
            every: d_every(),
            heatmap: false,
            horizon: d_horizon(),
            slam: None,
            tags: true,
            links: false,
        }
    }
}

impl ViewConfig {
    /// Checks the numbers.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.every.is_finite() && self.every >= 0.0) {
            return Err(format!(
                "invalid descriptor: 'view.every' must be 0 or more seconds, got {}",
                self.every
            ));
        }
        if !(self.horizon.is_finite() && self.horizon > 0.0) {
            return Err(format!(
                "invalid descriptor: 'view.horizon' must be a positive number of seconds, got {}",
                self.horizon
            ));
        }
        Ok(())
    }
}

/// Explored cells: white, half transparent.
pub const EXPLORED: [u8; 4] = [255, 255, 255, 110];
/// Free cells not explored yet: faint grey (so that explored share = white / (white + grey)).
pub const UNEXPLORED: [u8; 4] = [128, 128, 128, 40];
/// Covered cells: green, half transparent.
pub const COVERED: [u8; 4] = [60, 180, 75, 140];
/// Walls, and cells not covered: not drawn.
pub const CLEAR: [u8; 4] = [0, 0, 0, 0];

/// A SLAM map's occupied cells: dark red.
pub const OCCUPIED: [u8; 4] = [150, 30, 30, 220];
/// A SLAM map's free cells: blue, half transparent.
pub const FREE: [u8; 4] = [70, 130, 220, 110];

/// The overlays' schedule and their scratch buffer.
pub struct View {
    cfg: ViewConfig,
    next: f64,
    rgba: Vec<u8>,
    /// Nothing in the run shows overlays (the host said so): draw no more.
    unseen: bool,
}

/// One step's maps, as the extension holds them.
pub struct Maps<'a> {
    /// Walls (not drawn).
    pub walls: &'a [bool],
    /// Whether each cell was explored.
    pub explored: &'a dyn Fn(usize) -> bool,
    /// When each cell was last covered (s; NaN: never).
    pub covered_at: &'a [f32],
    /// The chosen robot's SLAM map (evidence per cell: > 0 occupied, < 0 free, 0 unknown).
    pub slam: Option<&'a [i8]>,
    /// Where the tags lie (when tags are drawn).
    pub tags: Option<&'a [[f64; 2]]>,
    /// Pairs of robot positions a message passed between in the last second (when drawn).
    pub links: Option<&'a [[[f64; 2]; 2]]>,
}

/// A tag's box: 0.15 m, yellow.
pub const TAG_SIZE: f64 = 0.15;
/// Tags' colour.
pub const TAG_COLOUR: [f32; 4] = [1.0, 0.85, 0.1, 1.0];
/// Comms links' colour, and their height above the floor (m).
pub const LINK_COLOUR: [f32; 4] = [0.3, 0.9, 1.0, 0.8];
/// Links are drawn this high (m).
pub const LINK_HEIGHT: f64 = 0.3;

impl View {
    /// A schedule that draws first at the first step.
    pub fn new(cfg: ViewConfig) -> Self {
        View {
            cfg,
            next: 0.0,
            rgba: Vec::new(),
            unseen: false,
        }
    }

    /// Whether overlays are drawn at all in this run (asked for, and something shows them).
    pub fn drawing(&self) -> bool {
        !self.unseen && self.cfg.every > 0.0
    }

    /// Whether the overlays are due at simulated time `time` (then [`View::draw`] them).
    pub fn due(&self, time: f64) -> bool {
        self.drawing() && time + 1e-9 >= self.next
    }

    /// The drawing settings.
    pub fn config(&self) -> &ViewConfig {
        &self.cfg
    }

    /// Draws the overlays (when [`View::due`]) at simulated time `time`.
    pub fn draw(
        &mut self,
        ctx: &Ctx<'_>,
        raster: &Raster,
        maps: &Maps<'_>,
        time: f64,
    ) -> Result<(), String> {
        while self.next <= time + 1e-9 {
            self.next += self.cfg.every;
        }
        let info = MapInfo {
            width: raster.nx,
            height: raster.ny,
            resolution: raster.cell,
            origin: [raster.x0, raster.y0, 0.0],
        };
        let free = |i: usize| !maps.walls.get(i).copied().unwrap_or(false);
        self.paint(raster, |i| match (free(i), (maps.explored)(i)) {
            (false, _) => CLEAR,
            (true, true) => EXPLORED,
            (true, false) => UNEXPLORED,
        });
        if !ctx.overlay("explored", &info, &self.rgba)? {
            self.unseen = true;
            return Ok(());
        }
        self.paint(raster, |i| match free(i) && !maps.covered_at[i].is_nan() {
            true => COVERED,
            false => CLEAR,
        });
        ctx.overlay("covered", &info, &self.rgba)?;
        if self.cfg.heatmap {
            let horizon = self.cfg.horizon;
            self.paint(raster, |i| {
                let at = maps.covered_at[i];
                if at.is_nan() || !free(i) {
                    CLEAR
                } else {
                    heat(((time - f64::from(at)) / horizon).clamp(0.0, 1.0))
                }
            });
            ctx.overlay("heatmap", &info, &self.rgba)?;
        }
        if let Some(cells) = maps.slam {
            self.paint(raster, |i| match cells[i] {
                e if e > 0 => OCCUPIED,
                e if e < 0 => FREE,
                _ => CLEAR,
            });
            ctx.overlay("slam", &info, &self.rgba)?;
        }
        if let Some(tags) = maps.tags {
            let h = TAG_SIZE / 2.0;
            let boxes: Vec<f64> = tags
                .iter()
                .flat_map(|&[x, y]| [x, y, h, TAG_SIZE, TAG_SIZE, TAG_SIZE])
                .collect();
            ctx.overlay_shapes("tags", SSX_OVERLAY_BOXES, &boxes, TAG_COLOUR)?;
        }
        if let Some(links) = maps.links {
            let z = LINK_HEIGHT;
            let segments: Vec<f64> = links
                .iter()
                .flat_map(|&[[x0, y0], [x1, y1]]| [x0, y0, z, x1, y1, z])
                .collect();
            ctx.overlay_shapes("links", SSX_OVERLAY_LINES, &segments, LINK_COLOUR)?;
        }
        Ok(())
    }

    fn paint(&mut self, raster: &Raster, colour: impl Fn(usize) -> [u8; 4]) {
        self.rgba.clear();
        self.rgba
            .extend((0..raster.len()).flat_map(|i| colour(i).into_iter()));
    }
}

/// MAES's heatmap colour for an age from 0 (now: red) to 1 (the horizon or older: blue), through
/// yellow, green and cyan.
pub fn heat(age: f64) -> [u8; 4] {
    let hue = age.clamp(0.0, 1.0) * 240.0;
    let x = 1.0 - ((hue / 60.0) % 2.0 - 1.0).abs();
    let (r, g, b) = match (hue / 60.0) as u32 {
        0 => (1.0, x, 0.0),
        1 => (x, 1.0, 0.0),
        2 => (0.0, 1.0, x),
        _ => (0.0, x, 1.0),
    };
    let byte = |v: f64| (v * 255.0).round() as u8;
    [byte(r), byte(g), byte(b), 160]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_heatmap_runs_from_red_now_to_blue_at_the_horizon() {
        assert_eq!(heat(0.0), [255, 0, 0, 160]);
        assert_eq!(heat(0.5), [0, 255, 0, 160]);
        assert_eq!(heat(1.0), [0, 0, 255, 160]);
        assert_eq!(heat(7.0), [0, 0, 255, 160]);
    }
}
