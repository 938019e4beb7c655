//! Footprints: every collider as a shape in the plane extruded over a height interval (Stage's
//! 2.5D world), with the exact overlap, ray and distance tests on them.

use ssx_core::engine::Shape;
use ssx_core::math::{Pose, Vec3};

/// A collider's outline in the plane, about its centre.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Foot {
    /// A disc.
    Circle {
        /// Radius.
        r: f64,
    },
    /// A rectangle with half extents `hx`, `hy`, turned by the angle whose cosine is `c` and
    /// sine is `s`.
    Rect {
        /// Half extent along its own x.
        hx: f64,
        /// Half extent along its own y.
        hy: f64,
        /// Cosine of its heading.
        c: f64,
        /// Sine of its heading.
        s: f64,
    },
}

/// One collider in the world: a footprint at (x, y) extruded from `z0` to `z1`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Prim {
    /// Centre of the footprint.
    pub x: f64,
    /// Centre of the footprint.
    pub y: f64,
    /// The outline.
    pub foot: Foot,
    /// Bottom.
    pub z0: f64,
    /// Top.
    pub z1: f64,
    /// Bounds in the plane: min x, min y, max x, max y.
    pub aabb: [f64; 4],
    /// The radius of the smallest circle about the centre that holds the footprint (what a ring
    /// of rays sees of it), computed once where the prim is placed.
    pub rho: f64,
    /// The body it belongs to.
    pub body: u32,
}

/// Overlaps count only beyond this depth (m), so that bodies placed exactly touching (a box on
/// a box, a robot at a wall after a refused move) do not block each other.
pub const EPS: f64 = 1e-9;

/// Whether a rotation keeps the z axis vertical (up or down).
fn upright(z_axis: &Vec3) -> bool {
    z_axis.z.abs() > 1.0 - 1e-9
}

impl Prim {
    /// The prim of `shape` at world pose `w`; `None` for a plane (planes are kept apart).
    pub fn new(shape: &Shape, w: &Pose, body: u32) -> Option<Prim> {
        let t = w.translation.vector;
        let r = w.rotation.to_rotation_matrix();
        let m = r.matrix();
        let axis = m.column(2).into_owned();
        // Half extents of the world-aligned bounding box of a segment of half length `hl`
        // along `axis` swept by a radius `rad`, per world axis.
        let swept = |hl: f64, rad: f64, capsule: bool| {
            Vec3::from_fn(|i, _| {
                let a = axis[i].abs();
                let side = if capsule {
                    rad
                } else {
                    rad * (1.0 - a * a).max(0.0).sqrt()
                };
                a * hl + side
            })
        };
        let aligned = |e: Vec3| Foot::Rect {
            hx: e.x,
            hy: e.y,
            c: 1.0,
            s: 0.0,
        };
        let (foot, hz) = match *shape {
            Shape::Plane => return None,
            // A mesh is the box about it (its footprint and heights, no finer).
            Shape::Mesh { ref mesh, .. } => {
                let (lo, hi) = mesh.bounds();
                let centre = Pose::translation(
                    (lo.x + hi.x) / 2.0,
                    (lo.y + hi.y) / 2.0,
                    (lo.z + hi.z) / 2.0,
                );
                let boxed = Shape::Box {
                    half_extents: (hi - lo) / 2.0,
                };
                return Prim::new(&boxed, &(w * centre), body);
            }
            Shape::Sphere { radius } => (Foot::Circle { r: radius }, radius),
            Shape::Box { half_extents: h } => {
                if upright(&axis) {
                    let len = (m[(0, 0)] * m[(0, 0)] + m[(1, 0)] * m[(1, 0)]).sqrt();
                    let foot = Foot::Rect {
                        hx: h.x,
                        hy: h.y,
                        c: m[(0, 0)] / len,
                        s: m[(1, 0)] / len,
                    };
                    (foot, h.z)
                } else {
                    let e = Vec3::from_fn(|i, _| {
                        m[(i, 0)].abs() * h.x + m[(i, 1)].abs() * h.y + m[(i, 2)].abs() * h.z
                    });
                    (aligned(e), e.z)
                }
            }
            Shape::Cylinder {
                radius,
                half_length,
            } => {
                if upright(&axis) {
                    (Foot::Circle { r: radius }, half_length)
                } else {
                    let e = swept(half_length, radius, false);
                    (aligned(e), e.z)
                }
            }
            Shape::Capsule {
                radius,
                half_length,
            } => {
                if upright(&axis) {
                    (Foot::Circle { r: radius }, half_length + radius)
                } else {
                    let e = swept(half_length, radius, true);
                    (aligned(e), e.z)
                }
            }
        };
        let (ex, ey) = foot.extent();
        Some(Prim {
            x: t.x,
            y: t.y,
            foot,
            z0: t.z - hz,
            z1: t.z + hz,
            aabb: [t.x - ex, t.y - ey, t.x + ex, t.y + ey],
            rho: foot.radius(),
            body,
        })
    }

    /// Whether the two overlap by more than [`EPS`], in the plane and in height.
    pub fn overlaps(&self, o: &Prim) -> bool {
        self.aabb[0] < o.aabb[2] - EPS
            && o.aabb[0] < self.aabb[2] - EPS
            && self.aabb[1] < o.aabb[3] - EPS
            && o.aabb[1] < self.aabb[3] - EPS
            && self.z0 < o.z1 - EPS
            && o.z0 < self.z1 - EPS
            && self.overlaps_flat(o)
    }

    /// Whether the footprints overlap by more than [`EPS`], whatever the heights.
    pub fn overlaps_flat(&self, o: &Prim) -> bool {
        let (dx, dy) = (o.x - self.x, o.y - self.y);
        match (self.foot, o.foot) {
            (Foot::Circle { r: a }, Foot::Circle { r: b }) => {
                let reach = a + b - EPS;
                reach > 0.0 && dx * dx + dy * dy < reach * reach
            }
            (Foot::Rect { .. }, Foot::Circle { r }) => rect_circle(self, o.x, o.y, r),
            (Foot::Circle { r }, Foot::Rect { .. }) => rect_circle(o, self.x, self.y, r),
            (
                Foot::Rect {
                    hx: ax,
                    hy: ay,
                    c: ac,
                    s: as_,
                },
                Foot::Rect {
                    hx: bx,
                    hy: by,
                    c: bc,
                    s: bs,
                },
            ) => {
                // Separating axes: the four edge normals.
                let axes = [(ac, as_), (-as_, ac), (bc, bs), (-bs, bc)];
                axes.iter().all(|&(ux, uy)| {
                    let ra = ax * (ac * ux + as_ * uy).abs() + ay * (-as_ * ux + ac * uy).abs();
                    let rb = bx * (bc * ux + bs * uy).abs() + by * (-bs * ux + bc * uy).abs();
                    (dx * ux + dy * uy).abs() < ra + rb - EPS
                })
            }
        }
    }

    /// The point of the footprint nearest to (px, py), and its distance (0 inside).
    pub fn nearest_flat(&self, px: f64, py: f64) -> (f64, f64, f64) {
        let (dx, dy) = (px - self.x, py - self.y);
        match self.foot {
            Foot::Circle { r } => {
                let d = (dx * dx + dy * dy).sqrt();
                if d <= r {
                    (px, py, 0.0)
                } else {
                    (self.x + dx * r / d, self.y + dy * r / d, d - r)
                }
            }
            Foot::Rect { hx, hy, c, s } => {
                let (lx, ly) = (c * dx + s * dy, -s * dx + c * dy);
                let (qx, qy) = (lx.clamp(-hx, hx), ly.clamp(-hy, hy));
                let d = ((lx - qx) * (lx - qx) + (ly - qy) * (ly - qy)).sqrt();
                (self.x + c * qx - s * qy, self.y + s * qx + c * qy, d)
            }
        }
    }

    /// Distance from a point to the solid (0 inside).
    pub fn distance(&self, p: &Vec3) -> f64 {
        let (_, _, flat) = self.nearest_flat(p.x, p.y);
        let dz = (self.z0 - p.z).max(p.z - self.z1).max(0.0);
        (flat * flat + dz * dz).sqrt()
    }

    /// Where a ray from `o` along the unit `d` enters the solid within `max`: the distance and
    /// the outward normal there. A ray starting inside hits at 0 with a zero normal (a solid
    /// cast, as Rapier's).
    pub fn cast(&self, o: &Vec3, d: &Vec3, max: f64) -> Option<(f64, Vec3)> {
        // The height slab.
        let (mut t0, mut t1, mut n0) = (f64::NEG_INFINITY, f64::INFINITY, Vec3::zeros());
        if d.z.abs() < 1e-15 {
            if o.z < self.z0 || o.z > self.z1 {
                return None;
            }
        } else {
            let (a, b) = ((self.z0 - o.z) / d.z, (self.z1 - o.z) / d.z);
            if a < b {
                (t0, t1, n0) = (a, b, -Vec3::z());
            } else {
                (t0, t1, n0) = (b, a, Vec3::z());
            }
        }
        // The footprint.
        let (px, py) = (o.x - self.x, o.y - self.y);
        let (f0, f1, fnx, fny) = match self.foot {
            Foot::Circle { r } => {
                let a = d.x * d.x + d.y * d.y;
                let c = px * px + py * py - r * r;
                if a < 1e-30 {
                    if c > 0.0 {
                        return None;
                    }
                    (f64::NEG_INFINITY, f64::INFINITY, 0.0, 0.0)
                } else {
                    let b = px * d.x + py * d.y;
                    let disc = b * b - a * c;
                    if disc < 0.0 {
                        return None;
                    }
                    let root = disc.sqrt();
                    let (e0, e1) = ((-b - root) / a, (-b + root) / a);
                    let (hx, hy) = (px + e0 * d.x, py + e0 * d.y);
                    let len = (hx * hx + hy * hy).sqrt().max(f64::MIN_POSITIVE);
                    (e0, e1, hx / len, hy / len)
                }
            }
            Foot::Rect { hx, hy, c, s } => {
                let (lx, ly) = (c * px + s * py, -s * px + c * py);
                let (dx, dy) = (c * d.x + s * d.y, -s * d.x + c * d.y);
                let (mut e0, mut e1, mut nx, mut ny) = (f64::NEG_INFINITY, f64::INFINITY, 0.0, 0.0);
                for (l, dl, h, axis) in [(lx, dx, hx, 0), (ly, dy, hy, 1)] {
                    if dl.abs() < 1e-15 {
                        if l < -h || l > h {
                            return None;
                        }
                        continue;
                    }
                    let (a, b) = ((-h - l) / dl, (h - l) / dl);
                    let (near, far, sign) = if a < b { (a, b, -1.0) } else { (b, a, 1.0) };
                    if near > e0 {
                        e0 = near;
                        (nx, ny) = if axis == 0 { (sign, 0.0) } else { (0.0, sign) };
                    }
                    e1 = e1.min(far);
                }
                (e0, e1, c * nx - s * ny, s * nx + c * ny)
            }
        };
        let (enter, normal) = if f0 > t0 {
            (f0, Vec3::new(fnx, fny, 0.0))
        } else {
            (t0, n0)
        };
        let exit = t1.min(f1);
        if enter > exit || exit < 0.0 {
            return None;
        }
        if enter <= 0.0 {
            return Some((0.0, Vec3::zeros()));
        }
        (enter <= max).then_some((enter, normal))
    }
}

impl Foot {
    /// Half extents of its world-aligned bounds.
    pub fn extent(&self) -> (f64, f64) {
        match *self {
            Foot::Circle { r } => (r, r),
            Foot::Rect { hx, hy, c, s } => {
                (hx * c.abs() + hy * s.abs(), hx * s.abs() + hy * c.abs())
            }
        }
    }

    /// The radius of the smallest circle about the centre that holds the footprint.
    pub fn radius(&self) -> f64 {
        match *self {
            Foot::Circle { r } => r,
            Foot::Rect { hx, hy, .. } => (hx * hx + hy * hy).sqrt(),
        }
    }
}

fn rect_circle(rect: &Prim, cx: f64, cy: f64, r: f64) -> bool {
    // A centre inside the rectangle (distance 0) always overlaps.
    let (_, _, d) = rect.nearest_flat(cx, cy);
    d == 0.0 || d < r - EPS
}

/// Volume and principal moments of inertia per unit mass about the shape's centre, in its own
/// frame (lengths along z). `None` for a plane.
pub fn unit_inertia(shape: &Shape) -> Option<(f64, Vec3)> {
    let v = shape.volume();
    let i = match *shape {
        Shape::Plane => return None,
        // Its box's, about the mesh's origin (a robot model gives its inertia anyway).
        Shape::Mesh { ref mesh, .. } => {
            let (lo, hi) = mesh.bounds();
            let e = hi - lo;
            let (a, b, c) = (e.x * e.x, e.y * e.y, e.z * e.z);
            Vec3::new(b + c, a + c, a + b) / 12.0
        }
        Shape::Box { half_extents: h } => {
            let (a, b, c) = (4.0 * h.x * h.x, 4.0 * h.y * h.y, 4.0 * h.z * h.z);
            Vec3::new(b + c, a + c, a + b) / 12.0
        }
        Shape::Sphere { radius: r } => Vec3::repeat(0.4 * r * r),
        Shape::Cylinder {
            radius: r,
            half_length: l,
        } => {
            let side = (3.0 * r * r + 4.0 * l * l) / 12.0;
            Vec3::new(side, side, 0.5 * r * r)
        }
        Shape::Capsule {
            radius: r,
            half_length: l,
        } => {
            // The cylinder and the two hemispheres, by mass share.
            let (vc, vs) = (
                std::f64::consts::PI * r * r * 2.0 * l,
                4.0 / 3.0 * std::f64::consts::PI * r.powi(3),
            );
            let (mc, ms) = (vc / v, vs / v);
            let h = 2.0 * l;
            let side = mc * (h * h / 12.0 + r * r / 4.0)
                + ms * (0.4 * r * r + h * h / 4.0 + 3.0 * h * r / 8.0);
            Vec3::new(side, side, mc * 0.5 * r * r + ms * 0.4 * r * r)
        }
    };
    Some((v, i))
}
