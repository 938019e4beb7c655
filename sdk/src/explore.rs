//! Multi-robot exploration services (the `explore` extension, `libssx_explore.so`), after MAES
//! (reference/002): limited communication, environment tags, and per-robot SLAM maps. This module
//! is the one place their requests and responses are written; the extension and every client
//! (Rust drivers here, C through the same bytes) share it.
//!
//! All numbers are little-endian; `f64` as IEEE bits.
//!
//! | service        | request                                          | response |
//! |----------------|--------------------------------------------------|----------|
//! | `comms.send`   | `u32` sender artifact, then the message bytes     | empty |
//! | `comms.receive`| `u32` artifact                                    | the messages delivered to it this step: each `u32` sender, `u32` length, the bytes |
//! | `tags.drop`    | `u32` artifact, `u32` tag id, then the tag bytes  | empty |
//! | `tags.read`    | `f64` x, `f64` y, `f64` radius                    | each tag within `radius` of (x, y), in drop order: `u32` id, `u32` artifact, `f64` x, `f64` y, `u32` length, the bytes |
//! | `slam.scan`    | see [`Scan`]                                      | empty |
//! | `slam.map`     | `u32` artifact                                    | see [`SlamMap`] |
//!
//! A message sent at step k is delivered at the end of step k to the robots in range and line of
//! sight (and not lost), and readable by their drivers during step k + 1 only. A tag dropped at
//! step k lies at its robot's position at step k and is readable from step k + 1 on.

use crate::{Ctx, Error};

/// The extension's services, by name.
pub mod service {
    /// Broadcast a message.
    pub const SEND: &str = "comms.send";
    /// The messages delivered this step.
    pub const RECEIVE: &str = "comms.receive";
    /// Drop a tag.
    pub const DROP: &str = "tags.drop";
    /// Read the tags near a point.
    pub const READ: &str = "tags.read";
    /// A range scan for the SLAM map (from the `slam` sensor).
    pub const SCAN: &str = "slam.scan";
    /// A robot's SLAM map.
    pub const MAP: &str = "slam.map";
}

/// Little-endian reading of a byte slice, with the error naming what was short.
pub struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    /// Reads `bytes` from the start.
    pub fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes, at: 0 }
    }
    /// The next `n` bytes.
    pub fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], String> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let Some(end) = end else {
            return Err(format!(
                "the request ends before its {what} (byte {} of {})",
                self.at,
                self.bytes.len()
            ));
        };
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }
    /// A `u32`.
    pub fn u32(&mut self, what: &str) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.take(4, what)?.try_into().unwrap()))
    }
    /// A `u64`.
    pub fn u64(&mut self, what: &str) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.take(8, what)?.try_into().unwrap()))
    }
    /// A finite `f64`.
    pub fn f64(&mut self, what: &str) -> Result<f64, String> {
        let v = f64::from_le_bytes(self.take(8, what)?.try_into().unwrap());
        if v.is_finite() {
            Ok(v)
        } else {
            Err(format!("the {what} is not a finite number"))
        }
    }
    /// What is left.
    pub fn rest(&mut self) -> &'a [u8] {
        let s = &self.bytes[self.at..];
        self.at = self.bytes.len();
        s
    }
    /// Whether everything was read.
    pub fn is_empty(&self) -> bool {
        self.at == self.bytes.len()
    }
}

/// A range scan for the SLAM map: where the robot is (ground truth, for the extension's
/// exploration metric), where it believes it is (for its own map), and its rays.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Scan {
    /// The robot.
    pub artifact: u32,
    /// True pose: x, y, yaw.
    pub truth: [f64; 3],
    /// Estimated (noisy) pose: x, y, yaw.
    pub estimate: [f64; 3],
    /// The sensor's position in the robot frame (x, y).
    pub mount: [f64; 2],
    /// A ray reading this far saw nothing (m).
    pub max_range: f64,
    /// Each ray: angle in the robot frame (rad) and the distance read (m). A negative distance
    /// `-d` is a ray stopped at `d` by something the map should not hold (another robot): free
    /// up to there, and no evidence of an obstacle.
    pub rays: Vec<[f64; 2]>,
}

impl Scan {
    /// The request bytes.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.clear();
        out.extend_from_slice(&self.artifact.to_le_bytes());
        for v in self.truth.iter().chain(&self.estimate).chain(&self.mount) {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&self.max_range.to_le_bytes());
        out.extend_from_slice(&(self.rays.len() as u32).to_le_bytes());
        for r in &self.rays {
            out.extend_from_slice(&r[0].to_le_bytes());
            out.extend_from_slice(&r[1].to_le_bytes());
        }
    }
    /// Parses request bytes (into `self`, reusing its ray list).
    pub fn decode(&mut self, bytes: &[u8]) -> Result<(), String> {
        let mut r = Reader::new(bytes);
        self.artifact = r.u32("artifact")?;
        for v in self.truth.iter_mut() {
            *v = r.f64("true pose")?;
        }
        for v in self.estimate.iter_mut() {
            *v = r.f64("estimated pose")?;
        }
        for v in self.mount.iter_mut() {
            *v = r.f64("mount")?;
        }
        self.max_range = r.f64("max range")?;
        let n = r.u32("ray count")? as usize;
        if n > crate::limits::RAYS as usize {
            return Err(format!(
                "a scan has at most {} rays, got {n}",
                crate::limits::RAYS
            ));
        }
        self.rays.clear();
        for _ in 0..n {
            self.rays
                .push([r.f64("ray angle")?, r.f64("ray distance")?]);
        }
        if !r.is_empty() {
            return Err("the scan request is longer than its rays".into());
        }
        Ok(())
    }
}

/// Bytes of a [`SlamMap`] before its cells.
pub const MAP_HEADER: usize = 4 + 4 + 8 * 3 + 8 * 3 + 8;

/// A robot's occupancy grid, as `slam.map` returns it: `u32` columns, `u32` rows, `f64` x and
/// y of the grid's lower-left corner, `f64` cell size, the robot's estimated pose (`f64` x, y,
/// yaw), `u64` scans taken, then one `i8` per cell, row 0 at the bottom: the evidence that the
/// cell is occupied (log-odds in steps: > 0 occupied, < 0 free, 0 unknown).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SlamMap {
    /// Columns.
    pub nx: u32,
    /// Rows.
    pub ny: u32,
    /// Lower-left corner (x, y).
    pub origin: [f64; 2],
    /// Cell size (m).
    pub cell: f64,
    /// The robot's estimated pose (x, y, yaw).
    pub pose: [f64; 3],
    /// Scans taken into it.
    pub scans: u64,
    /// Evidence per cell.
    pub cells: Vec<i8>,
}

/// What a cell is believed to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Belief {
    /// Never seen.
    Unknown,
    /// Seen free.
    Free,
    /// Seen occupied.
    Occupied,
}

impl SlamMap {
    /// The response bytes.
    pub fn encode(&self, out: &mut [u8]) -> usize {
        let len = MAP_HEADER + self.cells.len();
        if out.len() < len {
            return len;
        }
        let mut at = 0;
        let mut put = |b: &[u8]| {
            out[at..at + b.len()].copy_from_slice(b);
            at += b.len();
        };
        put(&self.nx.to_le_bytes());
        put(&self.ny.to_le_bytes());
        for v in [self.origin[0], self.origin[1], self.cell]
            .iter()
            .chain(&self.pose)
        {
            put(&v.to_le_bytes());
        }
        put(&self.scans.to_le_bytes());
        for (o, &c) in out[MAP_HEADER..len].iter_mut().zip(&self.cells) {
            *o = c as u8;
        }
        len
    }
    /// Parses response bytes into `self` (reusing its cells).
    pub fn decode(&mut self, bytes: &[u8]) -> Result<(), String> {
        let mut r = Reader::new(bytes);
        self.nx = r.u32("columns")?;
        self.ny = r.u32("rows")?;
        self.origin = [r.f64("origin")?, r.f64("origin")?];
        self.cell = r.f64("cell")?;
        self.pose = [r.f64("pose")?, r.f64("pose")?, r.f64("pose")?];
        self.scans = r.u64("scans")?;
        let n = self.nx as usize * self.ny as usize;
        let cells = r.take(n, "cells")?;
        self.cells.clear();
        self.cells.extend(cells.iter().map(|&b| b as i8));
        Ok(())
    }
    /// The cell holding (x, y), if inside.
    pub fn cell_of(&self, x: f64, y: f64) -> Option<(u32, u32)> {
        let fx = ((x - self.origin[0]) / self.cell).floor();
        let fy = ((y - self.origin[1]) / self.cell).floor();
        (fx >= 0.0 && fy >= 0.0 && fx < f64::from(self.nx) && fy < f64::from(self.ny))
            .then_some((fx as u32, fy as u32))
    }
    /// The centre of a cell.
    pub fn centre(&self, ix: u32, iy: u32) -> [f64; 2] {
        [
            self.origin[0] + (f64::from(ix) + 0.5) * self.cell,
            self.origin[1] + (f64::from(iy) + 0.5) * self.cell,
        ]
    }
    /// What cell (ix, iy) is believed to be.
    pub fn belief(&self, ix: u32, iy: u32) -> Belief {
        match self.cells[(iy * self.nx + ix) as usize] {
            0 => Belief::Unknown,
            v if v > 0 => Belief::Occupied,
            _ => Belief::Free,
        }
    }
}

/// A handle on the `explore` extension, found once by name.
#[derive(Clone, Copy, Debug)]
pub struct Explore {
    ext: u32,
}

impl Explore {
    /// The extension named `name` in the scene (`"explore"` by default in the shipped scenes).
    pub fn find(ctx: &Ctx<'_>, name: &str) -> Result<Explore, String> {
        ctx.extension(name)
            .map(|ext| Explore { ext })
            .map_err(|e| format!("needs the exploration extension '{name}' in the scene: {e}"))
    }

    /// Broadcasts `message` from the calling artifact.
    pub fn send(&self, ctx: &Ctx<'_>, message: &[u8], scratch: &mut Vec<u8>) -> Result<(), Error> {
        scratch.clear();
        scratch.extend_from_slice(&ctx.artifact().to_le_bytes());
        scratch.extend_from_slice(message);
        ctx.call_extension(self.ext, service::SEND, scratch, &mut [])
            .map(|_| ())
    }

    /// Calls `service` with `request`, growing `buffer` until the response fits; returns it.
    fn call<'b>(
        &self,
        ctx: &Ctx<'_>,
        service: &str,
        request: &[u8],
        buffer: &'b mut Vec<u8>,
    ) -> Result<&'b [u8], Error> {
        if buffer.len() < 256 {
            buffer.resize(256, 0);
        }
        loop {
            match ctx.call_extension(self.ext, service, request, buffer) {
                Ok(n) => return Ok(&buffer[..n]),
                // Every service here answers the same again when asked again within a step.
                Err(Error(crate::abi::SSX_ERR_OUT_OF_RANGE)) if buffer.len() < 1 << 28 => {
                    buffer.resize(buffer.len() * 4, 0);
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// The messages delivered to the calling artifact this step, as (sender, bytes), into
    /// `buffer`'s storage.
    pub fn receive<'b>(
        &self,
        ctx: &Ctx<'_>,
        buffer: &'b mut Vec<u8>,
    ) -> Result<Vec<(u32, &'b [u8])>, String> {
        let me = ctx.artifact().to_le_bytes();
        let bytes = self.call(ctx, service::RECEIVE, &me, buffer)?;
        let mut r = Reader::new(bytes);
        let mut out = Vec::new();
        while !r.is_empty() {
            let from = r.u32("sender")?;
            let n = r.u32("length")? as usize;
            out.push((from, r.take(n, "message")?));
        }
        Ok(out)
    }

    /// Drops a tag at the calling artifact's position (placed at the end of this step).
    pub fn drop_tag(&self, ctx: &Ctx<'_>, id: u32, bytes: &[u8]) -> Result<(), Error> {
        let mut req = Vec::with_capacity(8 + bytes.len());
        req.extend_from_slice(&ctx.artifact().to_le_bytes());
        req.extend_from_slice(&id.to_le_bytes());
        req.extend_from_slice(bytes);
        ctx.call_extension(self.ext, service::DROP, &req, &mut [])
            .map(|_| ())
    }

    /// The tags within `radius` of (x, y), in drop order.
    pub fn read_tags(
        &self,
        ctx: &Ctx<'_>,
        at: [f64; 2],
        radius: f64,
        buffer: &mut Vec<u8>,
    ) -> Result<Vec<Tag>, String> {
        let mut req = [0u8; 24];
        for (k, v) in [at[0], at[1], radius].iter().enumerate() {
            req[8 * k..8 * k + 8].copy_from_slice(&v.to_le_bytes());
        }
        let bytes = self.call(ctx, service::READ, &req, buffer)?;
        let mut r = Reader::new(bytes);
        let mut out = Vec::new();
        while !r.is_empty() {
            let id = r.u32("id")?;
            let artifact = r.u32("artifact")?;
            let position = [r.f64("x")?, r.f64("y")?];
            let n = r.u32("length")? as usize;
            out.push(Tag {
                id,
                artifact,
                position,
                bytes: r.take(n, "tag")?.to_vec(),
            });
        }
        Ok(out)
    }

    /// Sends a scan (the `slam` sensor does this).
    pub fn scan(&self, ctx: &Ctx<'_>, scan: &Scan, scratch: &mut Vec<u8>) -> Result<(), Error> {
        scan.encode(scratch);
        ctx.call_extension(self.ext, service::SCAN, scratch, &mut [])
            .map(|_| ())
    }

    /// The calling artifact's SLAM map, into `map` (`buffer` is scratch space kept between
    /// calls).
    pub fn map(
        &self,
        ctx: &Ctx<'_>,
        map: &mut SlamMap,
        buffer: &mut Vec<u8>,
    ) -> Result<(), String> {
        let me = ctx.artifact().to_le_bytes();
        let bytes = self.call(ctx, service::MAP, &me, buffer)?;
        map.decode(bytes)
    }
}

/// A tag as `tags.read` returns it.
#[derive(Clone, Debug, PartialEq)]
pub struct Tag {
    /// The id its dropper gave it.
    pub id: u32,
    /// Who dropped it.
    pub artifact: u32,
    /// Where (x, y).
    pub position: [f64; 2],
    /// Its bytes.
    pub bytes: Vec<u8>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scan_and_a_map_survive_their_encoding() {
        let scan = Scan {
            artifact: 7,
            truth: [1.0, 2.0, 0.5],
            estimate: [1.1, 1.9, 0.45],
            mount: [0.1, 0.0],
            max_range: 4.0,
            rays: vec![[0.0, 1.5], [1.0, 4.0]],
        };
        let mut bytes = Vec::new();
        scan.encode(&mut bytes);
        let mut back = Scan::default();
        back.decode(&bytes).unwrap();
        assert_eq!(back, scan);
        assert_eq!(
            back.decode(&bytes[..bytes.len() - 1]).unwrap_err(),
            "the request ends before its ray distance (byte 104 of 111)"
        );
        let map = SlamMap {
            nx: 3,
            ny: 2,
            origin: [-1.0, 2.0],
            cell: 0.5,
            pose: [0.0, 2.5, 1.0],
            scans: 9,
            cells: vec![0, -3, 5, 0, 0, -128],
        };
        let mut out = vec![0u8; 10];
        assert_eq!(map.encode(&mut out), MAP_HEADER + 6);
        out.resize(MAP_HEADER + 6, 0);
        map.encode(&mut out);
        let mut back = SlamMap::default();
        back.decode(&out).unwrap();
        assert_eq!(back, map);
        assert_eq!(back.belief(2, 0), Belief::Occupied);
        assert_eq!(back.belief(1, 0), Belief::Free);
        assert_eq!(back.cell_of(-0.9, 2.9), Some((0, 1)));
        assert_eq!(back.cell_of(0.6, 2.1), None);
    }
}
