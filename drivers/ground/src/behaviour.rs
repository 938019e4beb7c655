//! What a ground robot decides, from its range ring and pose.

use std::f64::consts::{PI, TAU};

use serde::Deserialize;

/// A body command: forward speed (m/s) and turn rate (rad/s).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Command {
    /// Forward speed.
    pub linear: f64,
    /// Turn rate (counter-clockwise).
    pub angular: f64,
}

/// Stage's dispersal controller's settings.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Dispersal {
    /// Forward speed when the way is free (m/s).
    #[serde(default = "d_speed")]
    pub speed: f64,
    /// Turn gain on the heading error (1/s).
    #[serde(default = "d_turn_gain")]
    pub turn_gain: f64,
    /// Heading error within which the robot goes forward (rad).
    #[serde(default = "d_tolerance")]
    pub tolerance: f64,
    /// Free space needed ahead to go forward (m).
    #[serde(default = "d_ahead")]
    pub free_ahead: f64,
    /// The cosine and sine of each ray's angle, for the ring size last seen (computed once:
    /// at 1000 robots the trigonometry of every decision was a tenth of the driver phase).
    #[serde(skip)]
    pub rays: Vec<[f64; 2]>,
}

fn d_speed() -> f64 {
    0.4
}
fn d_turn_gain() -> f64 {
    2.0
}
fn d_tolerance() -> f64 {
    0.5
}
fn d_ahead() -> f64 {
    0.5
}

/// Behaviours.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Behaviour {
    /// A constant body command.
    Velocity {
        /// m/s.
        linear: f64,
        /// rad/s.
        angular: f64,
    },
    /// Constant wheel speeds (rad/s).
    Wheels {
        /// Left wheel.
        left: f64,
        /// Right wheel.
        right: f64,
    },
    /// Stage's dispersal.
    Dispersal(Dispersal),
    /// Waypoints with obstacle avoidance.
    Waypoints {
        /// The points (x, y).
        points: Vec<[f64; 2]>,
        /// Cruise speed (m/s).
        #[serde(default = "d_speed")]
        speed: f64,
        /// Within this of a point it counts as reached (m).
        #[serde(default = "d_reached")]
        reached: f64,
        /// Obstacles nearer than this are avoided (m).
        #[serde(default = "d_avoid")]
        avoid: f64,
        /// Start over after the last point.
        #[serde(default)]
        looped: bool,
        /// The point being driven to (state, starts at 0).
        #[serde(skip)]
        next: usize,
    },
    /// A timed script: each segment's body command for its duration, in turn, then a stop; a
    /// segment's gripper actions happen as it starts.
    Script(Script),
}

/// A timed script of body commands and gripper actions.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Script {
    /// The segments, in order.
    pub steps: Vec<Segment>,
    /// Simulated time of the first decision (state).
    #[serde(skip)]
    started: Option<f64>,
    /// How many segments have started (state).
    #[serde(skip)]
    started_count: usize,
    /// The gripper actions of a segment just started, not yet taken (state).
    #[serde(skip)]
    action: Option<Action>,
}

/// One segment of a [`Script`].
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Segment {
    /// How long it lasts (s).
    #[serde(rename = "for")]
    pub duration: f64,
    /// Forward speed (m/s).
    #[serde(default)]
    pub linear: f64,
    /// Turn rate (rad/s).
    #[serde(default)]
    pub angular: f64,
    /// Close (true) or open (false) the gripper as it starts.
    #[serde(default)]
    pub grip: Option<bool>,
    /// Move what the gripper holds to this height (m) as it starts.
    #[serde(default)]
    pub height: Option<f64>,
}

/// Gripper actions: close or open, and a height.
pub type Action = (Option<bool>, Option<f64>);

impl Script {
    fn valid(&self) -> bool {
        !self.steps.is_empty()
            && self.steps.iter().all(|s| {
                s.duration.is_finite()
                    && s.duration >= 0.0
                    && s.linear.is_finite()
                    && s.angular.is_finite()
                    && s.height.is_none_or(|h| h.is_finite() && h >= 0.0)
            })
    }

    /// The command at simulated time `time`; notes a newly started segment's actions.
    fn at(&mut self, time: f64) -> Command {
        let start = *self.started.get_or_insert(time);
        let mut end = start;
        let running = self.steps.iter().position(|s| {
            end += s.duration;
            time < end
        });
        // Segments shorter than a step still act: every one passed over is taken in turn, and
        // those that end the script once it is over.
        let upto = running.map_or(self.steps.len(), |r| r + 1);
        for s in &self.steps[self.started_count.min(upto)..upto] {
            let a = self.action.get_or_insert((None, None));
            a.0 = s.grip.or(a.0);
            a.1 = s.height.or(a.1);
        }
        self.started_count = self.started_count.max(upto);
        match running {
            Some(i) => Command {
                linear: self.steps[i].linear,
                angular: self.steps[i].angular,
            },
            None => Command::default(),
        }
    }

    /// Whether a segment uses the gripper.
    pub fn grips(&self) -> bool {
        self.steps
            .iter()
            .any(|s| s.grip.is_some() || s.height.is_some())
    }
}

fn d_reached() -> f64 {
    0.2
}
fn d_avoid() -> f64 {
    0.4
}

fn wrap(a: f64) -> f64 {
    (a + PI).rem_euclid(TAU) - PI
}

/// The direction of ray `i` of a full ring of `n`, relative to the heading.
fn ray_angle(i: usize, n: usize) -> f64 {
    TAU * i as f64 / n as f64
}

impl Behaviour {
    /// Checks the numbers.
    pub fn validate(&self) -> Result<(), String> {
        let ok = match self {
            Behaviour::Velocity { linear, angular } => linear.is_finite() && angular.is_finite(),
            Behaviour::Wheels { left, right } => left.is_finite() && right.is_finite(),
            Behaviour::Dispersal(d) => [d.speed, d.turn_gain, d.tolerance, d.free_ahead]
                .iter()
                .all(|x| x.is_finite() && *x >= 0.0),
            Behaviour::Waypoints {
                points,
                speed,
                reached,
                avoid,
                ..
            } => {
                !points.is_empty()
                    && points.iter().flatten().all(|x| x.is_finite())
                    && [*speed, *reached, *avoid]
                        .iter()
                        .all(|x| x.is_finite() && *x > 0.0)
            }
            Behaviour::Script(script) => script.valid(),
        };
        if ok {
            Ok(())
        } else {
            Err("invalid descriptor: behaviour numbers must be finite (speeds and distances > 0, durations and heights ≥ 0), with at least one waypoint or script step".into())
        }
    }

    /// Whether it reads the range sensor.
    pub fn needs_range(&self) -> bool {
        matches!(self, Behaviour::Dispersal(_) | Behaviour::Waypoints { .. })
    }

    /// The gripper actions a script segment that started at the last [`Behaviour::decide`]
    /// asks for (once).
    pub fn take_action(&mut self) -> Option<Action> {
        match self {
            Behaviour::Script(s) => s.action.take(),
            _ => None,
        }
    }

    /// This update's command at simulated time `time`, given the wheels (radius, base).
    /// `ranges` is a full ring starting at the heading.
    pub fn decide(
        &mut self,
        (wheel_radius, wheel_base): (f64, f64),
        ranges: &[f64],
        (position, heading): ([f64; 2], f64),
        time: f64,
    ) -> Command {
        match self {
            Behaviour::Script(s) => s.at(time),
            Behaviour::Velocity { linear, angular } => Command {
                linear: *linear,
                angular: *angular,
            },
            Behaviour::Wheels { left, right } => Command {
                linear: wheel_radius * (*left + *right) / 2.0,
                angular: wheel_radius * (*right - *left) / wheel_base,
            },
            Behaviour::Dispersal(d) => disperse(d, ranges),
            Behaviour::Waypoints {
                points,
                speed,
                reached,
                avoid,
                looped,
                next,
            } => {
                let Some(goal) = points.get(*next) else {
                    return Command::default();
                };
                let (dx, dy) = (goal[0] - position[0], goal[1] - position[1]);
                if dx.hypot(dy) < *reached {
                    *next += 1;
                    if *looped && *next == points.len() {
                        *next = 0;
                    }
                    return Command::default();
                }
                let mut error = wrap(dy.atan2(dx) - heading);
                // Avoidance: the nearest obstacle in the front half turns the robot away.
                let n = ranges.len();
                let front = (0..n)
                    .map(|i| (wrap(ray_angle(i, n)), ranges[i]))
                    .filter(|(a, r)| a.abs() < PI / 2.0 && *r < *avoid)
                    .min_by(|a, b| a.1.total_cmp(&b.1));
                let mut forward = *speed;
                if let Some((a, r)) = front {
                    error = if a >= 0.0 { -PI / 2.0 } else { PI / 2.0 };
                    forward *= (r / *avoid).clamp(0.0, 1.0);
                }
                Command {
                    linear: if error.abs() < PI / 2.0 {
                        forward * error.cos()
                    } else {
                        0.0
                    },
                    angular: 2.0 * error,
                }
            }
        }
    }
}

/// Stage's dispersal: the vector sum of the range readings points to free space.
pub fn disperse(d: &mut Dispersal, ranges: &[f64]) -> Command {
    let n = ranges.len();
    if n == 0 {
        return Command::default();
    }
    if d.rays.len() != n {
        d.rays = (0..n)
            .map(|i| {
                let a = ray_angle(i, n);
                [a.cos(), a.sin()]
            })
            .collect();
    }
    let max = ranges.iter().copied().fold(0.0, f64::max);
    // Nothing in range: every ray reads the same maximum.
    if ranges.iter().all(|&r| r >= max) {
        return Command::default();
    }
    let (mut x, mut y) = (0.0, 0.0);
    for (&r, [c, s]) in ranges.iter().zip(&d.rays) {
        x += r * c;
        y += r * s;
    }
    let error = y.atan2(x);
    // Free ahead: the rays within ±45° of the heading.
    let free = (0..n)
        .filter(|&i| wrap(ray_angle(i, n)).abs() <= PI / 4.0)
        .all(|i| ranges[i] > d.free_ahead);
    if error.abs() < d.tolerance && free {
        Command {
            linear: d.speed,
            angular: d.turn_gain * error,
        }
    } else {
        Command {
            linear: 0.0,
            // Turn on the spot, never slower than 0.3 rad of error asks (blocked straight ahead:
            // turn left).
            angular: d.turn_gain
                * if error == 0.0 {
                    0.3
                } else {
                    error.signum() * error.abs().max(0.3)
                },
        }
    }
}
