//! The plugin phases without per-artifact timing (fast mode, batches of worlds): consecutive
//! instances of one library plugin that exports `step_many` step in one call (up to
//! [`batch::MOST`] a call), in the order one call each would step them; the others one call
//! each. In real time each instance keeps its own call, so that a missed deadline names the
//! slowest artifact (step.rs).

use std::panic::{AssertUnwindSafe, catch_unwind};

use smallvec::SmallVec;

use super::calls::{drive_one, fail, sense_one};
use super::{ArtifactSensors, DriverSlot, Shard, panic_message};
use crate::abi::batch::{self, DriverRun, Faults, SensorRun};
use crate::error::PluginFault;
use crate::guard::{self, Label, Phase};
use crate::plugin::{BatchMember, CommandBuffer, Reading, ReadingSource};
use crate::world::{ArtifactId, World};

/// The drivers gathered for one call: their slots' indices, with what each offers for it.
type DriverPicks = SmallVec<[(u32, BatchMember); batch::MOST]>;

/// The sensors gathered for one call: (artifact's index in the shard, sensor's index).
type SensorPicks = SmallVec<[(u32, u32, BatchMember); batch::MOST]>;

/// Whether `member` may join the gathered call (one plugin, room left).
fn joins<T>(picks: &[T], member: &BatchMember, last: impl Fn(&T) -> &BatchMember) -> bool {
    picks.len() < batch::MOST && picks.last().is_some_and(|p| last(p).joins(member))
}

/// The driver phase of one shard.
pub(super) fn drive(
    shard: &mut Shard<DriverSlot>,
    world: &World<'_>,
    readings: &dyn ReadingSource,
) {
    let Shard {
        items,
        faults,
        slowest,
    } = shard;
    *slowest = None;
    let mut picks = DriverPicks::new();
    for i in 0..items.len() {
        if !items[i].enabled {
            continue;
        }
        let member = items[i].member;
        if !member.is_some_and(|m| joins(&picks, &m, |p| &p.1)) {
            drive_picked(items, &mut picks, world, readings, faults);
        }
        match member {
            Some(m) => picks.push((i as u32, m)),
            None => drive_one(&mut items[i], world, readings, faults),
        }
    }
    drive_picked(items, &mut picks, world, readings, faults);
}

/// Steps the gathered drivers (one plugin's) and forgets them.
fn drive_picked(
    items: &mut [DriverSlot],
    picks: &mut DriverPicks,
    world: &World<'_>,
    readings: &dyn ReadingSource,
    faults: &mut Vec<PluginFault>,
) {
    match picks.as_slice() {
        [] => {}
        [(i, _)] => drive_one(&mut items[*i as usize], world, readings, faults),
        [(first, _), ..] => {
            let doing = guard::enter(items[*first as usize].guard, Phase::Drive, world.step);
            let mut run = Drivers { items, picks };
            let failed = contained(|| batch::drive_many(world, readings, &mut run));
            drop(doing);
            for (k, m) in failed {
                let slot = &mut items[picks[k].0 as usize];
                slot.commands.drain();
                fail(faults, &mut slot.enabled, world, slot.id, slot.label, m);
            }
        }
    }
    picks.clear();
}

/// A run of drivers as the batch call reads it (`picks` in slot order).
struct Drivers<'s> {
    items: &'s mut [DriverSlot],
    picks: &'s [(u32, BatchMember)],
}

impl DriverRun for Drivers<'_> {
    fn len(&self) -> usize {
        self.picks.len()
    }
    fn member(&self, k: usize) -> BatchMember {
        self.picks[k].1
    }
    fn each<'a>(
        &'a mut self,
        f: &mut dyn FnMut(ArtifactId, &'a mut CommandBuffer, &'static Label),
    ) {
        let (Some(first), Some(last)) = (self.picks.first(), self.picks.last()) else {
            return;
        };
        let (first, last) = (first.0 as usize, last.0 as usize);
        let mut picks = self.picks.iter().peekable();
        for (i, slot) in (first..).zip(&mut self.items[first..=last]) {
            if picks.next_if(|p| p.0 as usize == i).is_some() {
                f(slot.id, &mut slot.commands, slot.guard);
            }
        }
    }
}

/// The sensor phase of one shard.
pub(super) fn sense(shard: &mut Shard<ArtifactSensors>, world: &World<'_>) {
    let Shard {
        items,
        faults,
        slowest,
    } = shard;
    *slowest = None;
    let mut picks = SensorPicks::new();
    for i in 0..items.len() {
        for j in 0..items[i].sensors.len() {
            let slot = &mut items[i].sensors[j];
            // Disabled (failed), or idle on this step (it said so).
            if !(slot.enabled && slot.reading.wanted_at(world.step)) {
                continue;
            }
            let member = slot.member;
            if !member.is_some_and(|m| joins(&picks, &m, |p| &p.2)) {
                sense_picked(items, &mut picks, world, faults);
            }
            match member {
                Some(m) => picks.push((i as u32, j as u32, m)),
                None => {
                    let id = items[i].id;
                    sense_one(&mut items[i].sensors[j], id, world, faults);
                }
            }
        }
    }
    sense_picked(items, &mut picks, world, faults);
}

/// Steps the gathered sensors (one plugin's) and forgets them.
fn sense_picked(
    items: &mut [ArtifactSensors],
    picks: &mut SensorPicks,
    world: &World<'_>,
    faults: &mut Vec<PluginFault>,
) {
    match picks.as_slice() {
        [] => {}
        [(i, j, _)] => {
            let item = &mut items[*i as usize];
            sense_one(&mut item.sensors[*j as usize], item.id, world, faults);
        }
        [(i, j, _), ..] => {
            let label = items[*i as usize].sensors[*j as usize].guard;
            let doing = guard::enter(label, Phase::Sense, world.step);
            let mut run = Sensors { items, picks };
            let mut failed = contained(|| batch::sense_many(world, &mut run))
                .into_iter()
                .peekable();
            drop(doing);
            for (k, &(i, j, _)) in picks.iter().enumerate() {
                let item = &mut items[i as usize];
                let slot = &mut item.sensors[j as usize];
                match failed.next_if(|(at, _)| *at == k) {
                    Some((_, m)) => fail(faults, &mut slot.enabled, world, item.id, slot.label, m),
                    None => {
                        if slot.reading.take_written() {
                            slot.reading.stamp(world.step);
                        }
                    }
                }
            }
        }
    }
    picks.clear();
}

/// A run of sensors as the batch call reads it (`picks` in (artifact, sensor) order).
struct Sensors<'s> {
    items: &'s mut [ArtifactSensors],
    picks: &'s [(u32, u32, BatchMember)],
}

impl SensorRun for Sensors<'_> {
    fn len(&self) -> usize {
        self.picks.len()
    }
    fn member(&self, k: usize) -> BatchMember {
        self.picks[k].2
    }
    fn each<'a>(&'a mut self, f: &mut dyn FnMut(ArtifactId, &'a mut Reading, &'static Label)) {
        let (Some(first), Some(last)) = (self.picks.first(), self.picks.last()) else {
            return;
        };
        let (first, last) = (first.0 as usize, last.0 as usize);
        let mut picks = self.picks.iter().peekable();
        for (i, item) in (first..).zip(&mut self.items[first..=last]) {
            for (j, slot) in item.sensors.iter_mut().enumerate() {
                if picks
                    .next_if(|p| (p.0 as usize, p.1 as usize) == (i, j))
                    .is_some()
                {
                    f(item.id, &mut slot.reading, slot.guard);
                }
            }
        }
    }
}

/// A batch call's faults; a panic on the host's side of it (a bug) is charged to its first
/// instance, as the one it cannot tell.
fn contained(call: impl FnOnce() -> Faults) -> Faults {
    catch_unwind(AssertUnwindSafe(call))
        .unwrap_or_else(|p| [(0, panic_message(&*p))].into_iter().collect())
}
