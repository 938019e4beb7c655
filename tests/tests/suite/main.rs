//! The end-to-end suite: every test of ssx-tests in one executable, so that it links once and
//! its tests share the test threads (waits on real time, sockets and child processes overlap
//! instead of queueing binary by binary). One module a concern, as the files were. Two stay
//! executables of their own, run alone: `hot_path.rs` counts the process's allocations, and
//! `soak.rs` bounds a real-time daemon's misses over 60 s (in the suite, beside the other test
//! thread's work, it missed 11% of its steps against a bound of 10%, and its memory grew).

mod bad_input;
mod camera;
mod daemon;
mod engines;
mod environment;
mod explore;
mod fail_safe;
mod gripper;
mod logs;
mod maps;
mod models;
mod physics;
mod plugins;
mod replay;
mod robots;
mod ros2;
mod security;
mod swap;
mod sweep;
mod tls_stress;
mod view;
mod walkthrough;
mod zenoh;
