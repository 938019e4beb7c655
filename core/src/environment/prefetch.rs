//! An Environment's hint to the cache (see [`crate::prefetch`]): what a step reads, for a batch
//! of worlds to fetch while it steps the worlds before. A world's data are blocks that point to
//! blocks; each level's addresses are only known once the level above is in the cache, so a
//! batch hints one level a world, a world further ahead for each level nearer the top.

use super::Environment;
use crate::prefetch::{bytes, value};

/// How much of a library instance's own state is hinted (its size is the plugin's; the
/// standard ground driver's is 416 bytes).
const INSTANCE: usize = 512;

impl Environment {
    /// Hints the cache to fetch the blocks `level` pointers away from this Environment's own
    /// fields (1: the blocks its fields point to; up to [`crate::prefetch::LEVELS`]): its plugin slots, their
    /// instances, commands and readings, its body states and its engine's lists. It reads the
    /// levels above, so they should be hinted first. Changes nothing.
    pub fn prefetch(&self, level: usize) {
        match level {
            1 => {
                value(self.driver_shards.as_slice());
                value(self.sensor_shards.as_slice());
                value(self.states.as_slice());
                value(&*self.engine);
            }
            2 => {
                for shard in &self.driver_shards {
                    value(shard.items.as_slice());
                }
                for shard in &self.sensor_shards {
                    value(shard.items.as_slice());
                }
                self.engine.prefetch();
            }
            3 => {
                for slot in self.driver_shards.iter().flat_map(|s| &s.items) {
                    if let Some(m) = &slot.member {
                        bytes(m.instance.cast(), INSTANCE);
                    }
                    slot.commands.prefetch();
                }
                for artifact in self.sensor_shards.iter().flat_map(|s| &s.items) {
                    value(artifact.sensors.as_slice());
                }
            }
            4 => {
                let sensors = self.sensor_shards.iter().flat_map(|s| &s.items);
                for slot in sensors.flat_map(|a| &a.sensors) {
                    if let Some(m) = &slot.member {
                        bytes(m.instance.cast(), INSTANCE);
                    }
                    value(slot.reading.values());
                }
            }
            _ => {}
        }
    }
}
