//! A ROS 2 service call waiting for its answer: what the control path carries from the
//! service's queryable (input.rs) to the publisher thread that answers it.

use ssx_ros2::Attachment;

/// A ROS 2 service call waiting for its answer.
pub struct Call {
    /// The query to reply to.
    pub query: zenoh::query::Query,
    /// The request's attachment (its sequence number and the client's GID go into the reply).
    pub request: Option<Attachment>,
}
