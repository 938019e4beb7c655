//! ROS 2 on Zenoh, as rmw_zenoh lays it out (ROS 2 Jazzy and later with rmw_zenoh 0.2.4+ /
//! Kilted; its docs/design.md): the message types ssx speaks with their CDR layout and RIHS01
//! type hashes, data keys, liveliness tokens, QoS text and entity GIDs, and the sample
//! attachment. No Zenoh session here: `ssx-zenoh` speaks it.
#![warn(missing_docs)]

pub mod attachment;
pub mod cdr;
pub mod graph;
pub mod msgs;
pub mod types;

pub use attachment::Attachment;
pub use msgs::Message;
