//! The ROS 2 graph on Zenoh, as rmw_zenoh lays it out (its docs/design.md): data keys,
//! liveliness tokens for nodes, publishers, subscriptions and services, the compact QoS text in
//! them, and entity GIDs.
//!
//! - data key: `<domain>/<fully qualified name without the leading '/'>/<DDS type>/<type hash>`;
//! - node token: `@ros2_lv/<domain>/<zid>/<node id>/<node id>/NN/<enclave>/<namespace>/<node>`;
//! - entity token: the node's chunks with the entity id and kind (`MP`, `MS`, `SS`, `SC`), then
//!   `/<mangled name>/<DDS type>/<type hash>/<qos>`;
//! - mangling replaces every `/` with `%`; an empty namespace or enclave is `%`;
//! - an entity's GID is the XXH3-128 of its token (low 64 bits then high 64, little-endian).

use crate::types::dds_name;

/// The prefix of every liveliness token (a hermetic Zenoh namespace).
pub const ADMIN_SPACE: &str = "@ros2_lv";

/// `RELIABLE` or `BEST_EFFORT`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reliability {
    /// Delivered over a reliable transport.
    Reliable,
    /// May be dropped.
    BestEffort,
}

/// `VOLATILE` or `TRANSIENT_LOCAL` (latched: late joiners get the last `depth` samples).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durability {
    /// Only subscribers present at publication.
    Volatile,
    /// Late joiners too.
    TransientLocal,
}

/// An endpoint's QoS, as far as rmw_zenoh encodes it (history is always `KEEP_LAST` here;
/// deadline, lifespan and liveliness are left at their defaults).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Qos {
    /// Reliability.
    pub reliability: Reliability,
    /// Durability.
    pub durability: Durability,
    /// `KEEP_LAST` depth.
    pub depth: u32,
}

impl Qos {
    /// Reliable, volatile, keep last `depth` (rclcpp's default with that depth).
    pub const fn reliable(depth: u32) -> Qos {
        Qos {
            reliability: Reliability::Reliable,
            durability: Durability::Volatile,
            depth,
        }
    }
    /// Best effort, volatile (`SensorDataQoS` is this with depth 5).
    pub const fn best_effort(depth: u32) -> Qos {
        Qos {
            reliability: Reliability::BestEffort,
            durability: Durability::Volatile,
            depth,
        }
    }
    /// Reliable and transient local (latched), keep last `depth`.
    pub const fn latched(depth: u32) -> Qos {
        Qos {
            reliability: Reliability::Reliable,
            durability: Durability::TransientLocal,
            depth,
        }
    }

    /// The compact text in liveliness tokens (`qos_to_keyexpr` in rmw_zenoh): each policy left
    /// empty when it equals rmw_zenoh's default (reliable, volatile, keep last 42, infinite
    /// durations, automatic liveliness), else its rmw enum value. `reliable(10)` is
    /// `::,10:,:,:,,`.
    pub fn key(&self) -> String {
        let reliability = match self.reliability {
            Reliability::Reliable => "",
            Reliability::BestEffort => "2",
        };
        let durability = match self.durability {
            Durability::Volatile => "",
            Durability::TransientLocal => "1",
        };
        let depth = if self.depth == 42 {
            String::new()
        } else {
            self.depth.to_string()
        };
        format!("{reliability}:{durability}:,{depth}:,:,:,,")
    }
}

/// `/` → `%`, as in every chunk of a liveliness token.
pub fn mangle(name: &str) -> String {
    name.replace('/', "%")
}

/// The fully qualified name of `name` in `namespace`: `/ns/name` (an absolute `name`, starting
/// with `/`, is kept as it is).
pub fn qualify(namespace: &str, name: &str) -> String {
    if name.starts_with('/') {
        return name.to_string();
    }
    let ns = namespace.trim_end_matches('/');
    let ns = if ns.is_empty() || ns.starts_with('/') {
        ns.to_string()
    } else {
        format!("/{ns}")
    };
    format!("{ns}/{name}")
}

/// Whether `name` is a valid ROS 2 name chunk sequence: `/`-separated tokens of letters,
/// digits and underscores, none empty, none starting with a digit (the design article
/// "Topic and Service name mapping").
pub fn valid_name(name: &str) -> bool {
    let body = name.strip_prefix('/').unwrap_or(name);
    !body.is_empty()
        && body.split('/').all(|t| {
            !t.is_empty()
                && !t.starts_with(|c: char| c.is_ascii_digit())
                && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}

/// The Zenoh key of a topic or service: `<domain>/<name without the leading '/'>/<DDS
/// type>/<hash>`. `ros_type` is `pkg/msg/Name` or `pkg/srv/Name`.
pub fn data_key(domain: u32, qualified: &str, ros_type: &str, hash: &str) -> String {
    format!(
        "{domain}/{}/{}/{hash}",
        qualified.trim_start_matches('/'),
        dds_name(ros_type)
    )
}

/// What kind of entity a token declares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A message publisher (`MP`).
    Publisher,
    /// A message subscription (`MS`).
    Subscription,
    /// A service server (`SS`).
    Service,
    /// A service client (`SC`).
    Client,
}

impl Kind {
    fn code(self) -> &'static str {
        match self {
            Kind::Publisher => "MP",
            Kind::Subscription => "MS",
            Kind::Service => "SS",
            Kind::Client => "SC",
        }
    }
}

/// A node on a Zenoh session.
#[derive(Clone, Debug)]
pub struct Node {
    /// `ROS_DOMAIN_ID`.
    pub domain: u32,
    /// The session's Zenoh id, as Zenoh prints it.
    pub zid: String,
    /// The node's id within the session.
    pub id: u32,
    /// Its namespace (`""` or `/ns`).
    pub namespace: String,
    /// Its name.
    pub name: String,
}

impl Node {
    fn prefix(&self, entity: u32, kind: &str) -> String {
        let ns = if self.namespace.is_empty() || self.namespace == "/" {
            "%".to_string()
        } else {
            mangle(&self.namespace)
        };
        format!(
            "{ADMIN_SPACE}/{}/{}/{}/{entity}/{kind}/%/{ns}/{}",
            self.domain, self.zid, self.id, self.name
        )
    }

    /// The node's own liveliness token.
    pub fn token(&self) -> String {
        self.prefix(self.id, "NN")
    }

    /// The token of entity `id` of `kind` on `qualified` (fully qualified) with type `ros_type`.
    pub fn entity_token(
        &self,
        id: u32,
        kind: Kind,
        qualified: &str,
        ros_type: &str,
        hash: &str,
        qos: Qos,
    ) -> String {
        format!(
            "{}/{}/{}/{hash}/{}",
            self.prefix(id, kind.code()),
            mangle(qualified),
            dds_name(ros_type),
            qos.key()
        )
    }
}

/// An entity's GID: the XXH3-128 of its liveliness token, low half first, little-endian.
pub fn gid(token: &str) -> [u8; 16] {
    let h = xxhash_rust::xxh3::xxh3_128(token.as_bytes());
    let mut g = [0u8; 16];
    g[..8].copy_from_slice(&(h as u64).to_le_bytes());
    g[8..].copy_from_slice(&((h >> 64) as u64).to_le_bytes());
    g
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tokens and keys of rmw_zenoh's design document ("Graph Cache" and "Topic and Service
    /// name mapping"), rebuilt from their parts.
    #[test]
    fn the_examples_of_rmw_zenohs_design_document() {
        let string = "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18";
        let listener = Node {
            domain: 2,
            zid: "aac3178e146ba6f1fc6e6a4085e77f21".into(),
            id: 0,
            namespace: String::new(),
            name: "listener".into(),
        };
        assert_eq!(
            listener.token(),
            "@ros2_lv/2/aac3178e146ba6f1fc6e6a4085e77f21/0/0/NN/%/%/listener"
        );
        assert_eq!(
            listener.entity_token(
                10,
                Kind::Subscription,
                "/chatter",
                "std_msgs/msg/String",
                string,
                Qos::reliable(10)
            ),
            format!(
                "@ros2_lv/2/aac3178e146ba6f1fc6e6a4085e77f21/0/10/MS/%/%/listener/%chatter/std_msgs::msg::dds_::String_/{string}/::,10:,:,:,,"
            )
        );
        let talker = Node {
            zid: "8b20917502ee955ac4476e0266340d5c".into(),
            name: "talker".into(),
            ..listener.clone()
        };
        assert_eq!(
            talker.entity_token(
                10,
                Kind::Publisher,
                "/chatter",
                "std_msgs/msg/String",
                string,
                Qos::reliable(7)
            ),
            format!(
                "@ros2_lv/2/8b20917502ee955ac4476e0266340d5c/0/10/MP/%/%/talker/%chatter/std_msgs::msg::dds_::String_/{string}/::,7:,:,:,,"
            )
        );
        assert_eq!(
            data_key(0, "/robot1/chatter", "std_msgs/msg/String", string),
            format!("0/robot1/chatter/std_msgs::msg::dds_::String_/{string}")
        );
    }

    #[test]
    fn qos_names_and_gids() {
        assert_eq!(Qos::reliable(42).key(), "::,:,:,:,,");
        assert_eq!(Qos::best_effort(5).key(), "2::,5:,:,:,,");
        assert_eq!(Qos::latched(1).key(), ":1:,1:,:,:,,");
        assert_eq!(qualify("", "rover/odom"), "/rover/odom");
        assert_eq!(qualify("/sim", "rover/odom"), "/sim/rover/odom");
        assert_eq!(qualify("sim/", "clock"), "/sim/clock");
        assert_eq!(qualify("/sim", "/clock"), "/clock");
        assert!(valid_name("/rover_1/cmd_vel") && valid_name("ssx"));
        assert!(
            !valid_name("/1rover") && !valid_name("a//b") && !valid_name("a b") && !valid_name("")
        );
        let node = Node {
            domain: 0,
            zid: "1".into(),
            id: 3,
            namespace: "/sim/a".into(),
            name: "ssx".into(),
        };
        assert_eq!(node.token(), "@ros2_lv/0/1/3/3/NN/%/%sim%a/ssx");
        // The GID is XXH3-128 of the token; the reference value is xxHash's own for "abc".
        assert_eq!(
            u128::from_le_bytes(gid("abc")),
            0x06b05ab6733a618578af5f94892f3950
        );
        assert_ne!(gid(&node.token()), gid("other"));
    }
}
