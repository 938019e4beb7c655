//! The end-to-end suite: every test of ssx-tests in one executable, so that it links once and
//! its tests share the test threads (waits on real time, sockets and child processes overlap
//! instead of queueing binary by binary). One module a concern, as the files were. Only
//! `hot_path.rs` stays an executable of its own: it counts the process's allocations.

mod bad_input;
mod camera;
mod daemon;
mod engines;
mod environment;
mod explore;
mod fail_safe;
mod gripper;
mod maps;
mod models;
mod physics;
mod plugins;
mod robots;
mod ros2;
mod security;
mod soak;
mod swap;
mod sweep;
mod tls_stress;
mod view;
mod walkthrough;
mod zenoh;
