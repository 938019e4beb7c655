//! One plugin instance, one call: a sensor's or a driver's step behind its crash label and panic
//! boundary, and what a failure does (the instance disabled, the fault kept for the step's end).
//! The phases call these one instance at a time in real time (step.rs) and for instances that
//! cannot join a batch call (batched.rs).

use std::panic::{AssertUnwindSafe, catch_unwind};

use super::{DriverSlot, SensorSlot, panic_message};
use crate::error::PluginFault;
use crate::guard::{self, Label, Phase};
use crate::plugin::{DriverContext, ReadingSource, SensorContext};
use crate::world::{ArtifactId, World};

/// Runs one sensor of artifact `id` (enabled and wanted on this step) by its own call.
pub(super) fn sense_one(
    slot: &mut SensorSlot,
    id: ArtifactId,
    world: &World<'_>,
    faults: &mut Vec<PluginFault>,
) {
    let ctx = SensorContext {
        world,
        artifact: id,
    };
    let doing = guard::enter(slot.guard, Phase::Sense, world.step);
    let result = catch_unwind(AssertUnwindSafe(|| {
        slot.plugin.get_mut().sense(&ctx, &mut slot.reading)
    }));
    drop(doing);
    let message = match result {
        Ok(Ok(())) => None,
        Ok(Err(m)) => Some(m),
        Err(p) => Some(panic_message(&*p)),
    };
    match message {
        None => {
            if slot.reading.take_written() {
                slot.reading.stamp(world.step);
            }
        }
        Some(m) => fail(faults, &mut slot.enabled, world, id, slot.label, m),
    }
}

/// Runs one (enabled) driver by its own call.
pub(super) fn drive_one(
    slot: &mut DriverSlot,
    world: &World<'_>,
    readings: &dyn ReadingSource,
    faults: &mut Vec<PluginFault>,
) {
    let ctx = DriverContext {
        world,
        artifact: slot.id,
        readings,
    };
    let doing = guard::enter(slot.guard, Phase::Drive, world.step);
    let result = catch_unwind(AssertUnwindSafe(|| {
        slot.plugin.drive(&ctx, &mut slot.commands)
    }));
    drop(doing);
    let message = match result {
        Ok(Ok(())) => None,
        Ok(Err(m)) => Some(m),
        Err(p) => Some(panic_message(&*p)),
    };
    if let Some(m) = message {
        slot.commands.drain();
        fail(faults, &mut slot.enabled, world, slot.id, slot.label, m);
    }
}

/// Disables a plugin that failed and keeps its fault for the step's end.
pub(super) fn fail(
    faults: &mut Vec<PluginFault>,
    enabled: &mut bool,
    world: &World<'_>,
    id: ArtifactId,
    label: &Label,
    message: String,
) {
    *enabled = false;
    faults.push(PluginFault {
        artifact: world.artifact(id).name.clone(),
        plugin: label.text().to_string(),
        step: world.step,
        message,
    });
}
