//! The team's links: messages delivered by range, walls and loss; tags dropped and read; SLAM
//! maps merged among robots that can talk.

use std::collections::BTreeMap;

use crate::raster::Raster;
use crate::slam::Slam;

use crate::config::*;
use crate::{Explore, slam, unit};

/// A tag in the world.
pub(crate) struct Tag {
    pub(crate) id: u32,
    pub(crate) artifact: u32,
    pub(crate) at: [f64; 2],
    pub(crate) bytes: Vec<u8>,
}

/// The tags, filed in square buckets as wide as the largest read radius, so a read looks at
/// the nine buckets around its point rather than at every tag.
#[derive(Default)]
pub(crate) struct TagIndex {
    pub(crate) list: Vec<Tag>,
    pub(crate) buckets: std::collections::HashMap<(i64, i64), Vec<u32>>,
    pub(crate) size: f64,
}

impl TagIndex {
    pub(crate) fn bucket(&self, x: f64, y: f64) -> (i64, i64) {
        (
            (x / self.size).floor() as i64,
            (y / self.size).floor() as i64,
        )
    }
    pub(crate) fn push(&mut self, tag: Tag) {
        let b = self.bucket(tag.at[0], tag.at[1]);
        self.buckets
            .entry(b)
            .or_default()
            .push(self.list.len() as u32);
        self.list.push(tag);
    }
    /// The tags within `r` of (x, y) (r at most the bucket size), in drop order.
    pub(crate) fn near(&self, x: f64, y: f64, r: f64, out: &mut Vec<u32>) {
        out.clear();
        let (bx, by) = self.bucket(x, y);
        for dy in -1..=1 {
            for dx in -1..=1 {
                if let Some(ids) = self.buckets.get(&(bx + dx, by + dy)) {
                    out.extend(ids.iter().copied().filter(|&i| {
                        let t = &self.list[i as usize];
                        (t.at[0] - x).powi(2) + (t.at[1] - y).powi(2) <= r * r
                    }));
                }
            }
        }
        out.sort_unstable();
    }
}

/// Whether a message from a robot at `a` reaches one at `b` (range and walls, before losses);
/// if not, whether walls were the reason.
pub(crate) fn reaches(
    raster: &Raster,
    c: &Comms,
    walls: &[bool],
    a: [f64; 3],
    b: [f64; 3],
) -> Result<(), bool> {
    let d = ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)).sqrt();
    if d > c.range {
        return Err(false);
    }
    let (p, q) = ([a[0], a[1]], [b[0], b[1]]);
    match c.walls {
        WallRule::Ignore => Ok(()),
        WallRule::Block if raster.crossings(walls, p, q) == 0 => Ok(()),
        WallRule::Attenuate { attenuate }
            if d + attenuate * f64::from(raster.crossings(walls, p, q)) <= c.range =>
        {
            Ok(())
        }
        _ => Err(true),
    }
}

impl Explore {
    pub(crate) fn deliver(&mut self, step: u64) {
        let Some(setup) = &self.setup else { return };
        let Some(c) = &self.cfg.comms else { return };
        let mut out = std::mem::take(self.outbox.get_mut().unwrap());
        // One sender's messages keep their order (one driver sends from one thread).
        out.sort_by_key(|(from, _)| *from);
        let inbox = self.inbox.get_mut().unwrap();
        for (bytes, n) in inbox.values_mut() {
            bytes.clear();
            *n = 0;
        }
        let mut number = 0u64;
        let mut last = None;
        for (from, msg) in &out {
            number = if last == Some(*from) { number + 1 } else { 0 };
            last = Some(*from);
            self.counts.sent += 1;
            let Ok(k) = setup.robots.binary_search(from) else {
                continue;
            };
            for (j, &to) in setup.robots.iter().enumerate() {
                if to == *from {
                    continue;
                }
                match reaches(&self.raster, c, &setup.walls, self.poses[k], self.poses[j]) {
                    Err(true) => self.counts.blocked += 1,
                    Err(false) => {}
                    Ok(()) => {
                        if unit(self.seed, step, *from, to, number) < c.loss {
                            self.counts.lost += 1;
                            continue;
                        }
                        let (bytes, n) = inbox.entry(to).or_default();
                        if *n as usize >= c.inbox {
                            self.counts.overflowed += 1;
                            continue;
                        }
                        bytes.extend_from_slice(&from.to_le_bytes());
                        bytes.extend_from_slice(&(msg.len() as u32).to_le_bytes());
                        bytes.extend_from_slice(msg);
                        *n += 1;
                        self.counts.delivered += 1;
                        // Kept only while someone is shown them (else never pruned, see
                        // `after_step`).
                        if self.cfg.view.links && self.view.drawing() {
                            self.links.insert((k.min(j), k.max(j)), self.time);
                        }
                    }
                }
            }
        }
    }

    pub(crate) fn place_tags(&mut self) {
        let Some(setup) = &self.setup else { return };
        let mut dropped = std::mem::take(self.dropped.get_mut().unwrap());
        dropped.sort_by_key(|(a, _, _)| *a);
        let tags = self.tags.get_mut().unwrap();
        for (artifact, id, bytes) in dropped {
            if let Ok(k) = setup.robots.binary_search(&artifact) {
                let [x, y, _] = self.poses[k];
                tags.push(Tag {
                    id,
                    artifact,
                    at: [x, y],
                    bytes,
                });
                self.counts.tags += 1;
            }
        }
    }

    pub(crate) fn merge_maps(&mut self) {
        let Some(setup) = &self.setup else { return };
        let Some(c) = &self.cfg.comms else { return };
        let maps = self.maps.get_mut().unwrap();
        let robots: Vec<usize> = (0..setup.robots.len())
            .filter(|&k| maps.contains_key(&setup.robots[k]))
            .collect();
        // Components of the "can talk" graph, by union-find.
        let mut parent: Vec<usize> = (0..robots.len()).collect();
        fn root(p: &mut [usize], mut i: usize) -> usize {
            while p[i] != i {
                p[i] = p[p[i]];
                i = p[i];
            }
            i
        }
        for a in 0..robots.len() {
            for b in a + 1..robots.len() {
                let (pa, pb) = (self.poses[robots[a]], self.poses[robots[b]]);
                let (ra, rb) = (root(&mut parent, a), root(&mut parent, b));
                if ra != rb && reaches(&self.raster, c, &setup.walls, pa, pb).is_ok() {
                    parent[ra.max(rb)] = ra.min(rb);
                }
            }
        }
        let mut groups: BTreeMap<usize, Vec<u32>> = BTreeMap::new();
        for (a, &k) in robots.iter().enumerate() {
            let r = root(&mut parent, a);
            groups.entry(r).or_default().push(setup.robots[k]);
        }
        for members in groups.values().filter(|m| m.len() > 1) {
            let mut locked: Vec<&mut Slam> = Vec::with_capacity(members.len());
            for (id, m) in maps.iter_mut() {
                if members.contains(id) {
                    locked.push(m.get_mut().unwrap());
                }
            }
            slam::merge(&mut locked, &mut self.merge_scratch);
            self.counts.merges += members.len() as u64;
        }
    }
}
