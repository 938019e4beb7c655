//! Two-number commands from outside on one key (the diff-drive's `linear` and `angular`, the
//! holonomic agent's `ux` and `uy`): subscribed on the first read, the newest kept with the
//! simulated time it came, and in force for the `commands.timeout` after it.

use ssx_sdk::Ctx;
use ssx_sdk::bus::Bus;

use crate::{Remote, subscribe};

/// One key's commands, as a driver reads them.
#[derive(Debug, Default)]
pub(crate) struct Outside {
    /// The messaging extension and the subscription, once subscribed.
    link: Option<(Bus, u32)>,
    /// The scene lacks the extension (said once; the driver runs on).
    no_way_in: bool,
    /// The newest command and the simulated time it came.
    last: Option<([f64; 2], f64)>,
    /// Its sequence number.
    seq: u64,
}

impl Outside {
    /// The command in force for artifact `name` (`artifacts/<name>/cmd` unless `r` names a key),
    /// if any: the mailbox read, subscribing to `fields` (name, largest magnitude) on the first
    /// call.
    pub(crate) fn read(
        &mut self,
        ctx: &Ctx<'_>,
        r: &Remote,
        name: &str,
        fields: [(&'static str, f64); 2],
    ) -> Result<Option<[f64; 2]>, String> {
        if self.no_way_in {
            return Ok(None);
        }
        let (bus, sub) = match self.link {
            Some(link) => link,
            None => {
                let Some(bus) = Bus::find_or_warn(ctx, &r.extension, name)? else {
                    self.no_way_in = true;
                    return Ok(None);
                };
                let key = r
                    .key
                    .clone()
                    .unwrap_or_else(|| format!("artifacts/{name}/cmd"));
                *self.link.insert((bus, subscribe(ctx, bus, &key, &fields)?))
            }
        };
        let (time, _) = ctx.time()?;
        if let Some(m) = bus.read(ctx, sub)?.filter(|m| m.seq != self.seq) {
            let v = m.values();
            self.seq = m.seq;
            self.last = Some(([v[0], v[1]], time));
        }
        Ok(self
            .last
            .filter(|(_, at)| time - at <= r.timeout)
            .map(|(c, _)| c))
    }

    /// The messaging extension, once subscribed (for a second key on the same bus).
    pub(crate) fn bus(&self) -> Option<Bus> {
        self.link.map(|(bus, _)| bus)
    }
}
