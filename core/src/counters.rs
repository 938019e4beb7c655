//! The work a step does, counted (issue 60's floor table): plugin calls, host calls, moves and
//! their overlap tests, rings of rays and their exact tests. A build with the `counters` feature
//! (`cargo build --release -p ssxd --features counters`) adds each to a process-wide tally that
//! `ssxd run` prints at exit; without it, [`add`] is empty and compiles to nothing. The tallies
//! are relaxed atomic adds, which cost time: take times from a build without the feature.

/// What is counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub enum Work {
    /// A driver's step through the C ABI (one instance, one call).
    DriverCall,
    /// A sensor's step through the C ABI.
    SensorCall,
    /// A driver's call of a host function.
    DriverHostCall,
    /// A sensor's call of a host function.
    SensorHostCall,
    /// An extension's call of a host function.
    ExtensionHostCall,
    /// A body's move over a step (it had a velocity).
    Move,
    /// A pose a move tried: its prims built there and checked for blockers.
    MoveTry,
    /// A prim offered as a possible blocker of a tried pose (from the grid or every prim).
    MoveCandidate,
    /// An exact overlap test of a tried prim against a candidate (bounds first).
    OverlapTest,
    /// A ring of rays cast as one query.
    Ring,
    /// A prim a ring met (each once a ring).
    RingPrim,
    /// A (prim, ray) pair a ring's angular windows let through to the cull.
    RingTest,
    /// A single ray's query (`cast_ray`, or a ring's ray cast alone).
    Ray,
    /// A ray's walk through the grid's cells (a single ray's, or a ring's ray past its block).
    Walk,
    /// A cell a walk read.
    WalkCell,
    /// A prim offered to one ray alone (cull and, if it passes, the exact test): from a walk's
    /// cells, the list of prims outside the grid, or every prim of a world without a grid.
    WalkTest,
    /// An exact ray-prim test (after every cull), rings and walks alike.
    RayCast,
    /// A moving prim filed in the grid for a step.
    Filed,
}

/// Every kind, in order, with the name printed.
pub const ALL: [(Work, &str); 18] = [
    (Work::DriverCall, "driver calls"),
    (Work::SensorCall, "sensor calls"),
    (Work::DriverHostCall, "driver host calls"),
    (Work::SensorHostCall, "sensor host calls"),
    (Work::ExtensionHostCall, "extension host calls"),
    (Work::Move, "moves"),
    (Work::MoveTry, "poses tried"),
    (Work::MoveCandidate, "blocker candidates"),
    (Work::OverlapTest, "overlap tests"),
    (Work::Ring, "rings"),
    (Work::RingPrim, "prims met by rings"),
    (Work::RingTest, "ring window tests"),
    (Work::Ray, "single rays"),
    (Work::Walk, "walks"),
    (Work::WalkCell, "cells walked"),
    (Work::WalkTest, "walk tests"),
    (Work::RayCast, "exact ray tests"),
    (Work::Filed, "prims filed"),
];

#[cfg(feature = "counters")]
static TALLY: [std::sync::atomic::AtomicU64; ALL.len()] =
    [const { std::sync::atomic::AtomicU64::new(0) }; ALL.len()];

/// Counts `n` of `what` (nothing without the `counters` feature).
#[inline(always)]
pub fn add(what: Work, n: u64) {
    #[cfg(feature = "counters")]
    TALLY[what as usize].fetch_add(n, std::sync::atomic::Ordering::Relaxed);
    #[cfg(not(feature = "counters"))]
    let _ = (what, n);
}

/// Every tally so far, by name; `None` in a build without the `counters` feature.
pub fn tallies() -> Option<Vec<(&'static str, u64)>> {
    #[cfg(feature = "counters")]
    {
        Some(
            ALL.iter()
                .map(|&(w, name)| {
                    let n = TALLY[w as usize].load(std::sync::atomic::Ordering::Relaxed);
                    (name, n)
                })
                .collect(),
        )
    }
    #[cfg(not(feature = "counters"))]
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table names every kind once, at its own index.
    #[test]
    fn the_table_lists_every_kind_in_order() {
        for (i, &(w, _)) in ALL.iter().enumerate() {
            assert_eq!(w as usize, i);
        }
        assert_eq!(tallies().is_some(), cfg!(feature = "counters"));
    }
}
