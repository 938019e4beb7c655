//! The extension's descriptor: the Zenoh session (mode, endpoints, a configuration file) and
//! what is bridged. Checked whole at creation, so a scene error is reported before any step.

use std::collections::BTreeMap;

use serde::Deserialize;

/// The extension's descriptor, as written in the scene's `extensions` entry.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Descriptor {
    /// Every key starts with this (default `ssx/<instance name>`).
    #[serde(default)]
    pub prefix: Option<String>,
    /// `peer` (default), `client`, or `router` (ROS 2 nodes with rmw_zenoh look for a router on
    /// `tcp/localhost:7447`: ssxd can be it).
    #[serde(default = "d_mode")]
    pub mode: String,
    /// Endpoints to listen on (default `tcp/127.0.0.1:7447`; none in client mode).
    #[serde(default)]
    pub listen: Option<Vec<String>>,
    /// Endpoints to connect to.
    #[serde(default)]
    pub connect: Vec<String>,
    /// A Zenoh configuration file (JSON5) for everything else (TLS, access control); `mode`,
    /// `listen` and `connect` given here override it. Relative to the working directory.
    #[serde(default)]
    pub config_file: Option<String>,
    /// Must be true to listen on anything but loopback.
    #[serde(default)]
    pub expose: bool,
    /// Multicast scouting (off by default).
    #[serde(default)]
    pub scouting: bool,
    /// The clock stream.
    #[serde(default)]
    pub clock: ClockSpec,
    /// The statistics stream.
    #[serde(default)]
    pub stats: StatsSpec,
    /// Artifacts to bridge, by name or by name prefix ending in `*`.
    #[serde(default)]
    pub artifacts: BTreeMap<String, ArtifactBridge>,
    /// Outbound messages that may wait for the network at once; beyond that they are dropped.
    #[serde(default = "d_outbound")]
    pub outbound_queue: usize,
    /// A ROS 2 node on this session, in rmw_zenoh's layout (docs/ros2.md).
    #[serde(default)]
    pub ros2: Option<crate::ros2::config::Ros2Spec>,
}

fn d_mode() -> String {
    "peer".into()
}
fn d_outbound() -> usize {
    4096
}
fn d_one() -> u32 {
    1
}

/// A payload format.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Encoding {
    /// JSON (`application/json`).
    #[default]
    Json,
    /// Little-endian binary (`application/octet-stream`), laid out as docs/zenoh.md says.
    Binary,
}

/// `<prefix>/clock`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClockSpec {
    /// Every this many steps (0: off).
    #[serde(default = "d_one")]
    pub every: u32,
    /// Payload format.
    #[serde(default)]
    pub encoding: Encoding,
}

impl Default for ClockSpec {
    fn default() -> Self {
        ClockSpec {
            every: 1,
            encoding: Encoding::Json,
        }
    }
}

/// `<prefix>/stats`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StatsSpec {
    /// Period in simulated seconds (0: off).
    #[serde(default = "d_period")]
    pub period: f64,
}

fn d_period() -> f64 {
    1.0
}

impl Default for StatsSpec {
    fn default() -> Self {
        StatsSpec { period: 1.0 }
    }
}

/// What one artifact (or a group, by prefix) publishes.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArtifactBridge {
    /// `<prefix>/artifacts/<name>/state`: the first body's pose and twist.
    #[serde(default)]
    pub state: Option<Stream>,
    /// `<prefix>/artifacts/<name>/sensors/<sensor>`: readings, when fresh and due.
    #[serde(default)]
    pub sensors: BTreeMap<String, Stream>,
}

/// A periodic stream.
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stream {
    /// Every this many steps (at least 1).
    #[serde(default = "d_one")]
    pub every: u32,
    /// Payload format.
    #[serde(default)]
    pub encoding: Encoding,
}

impl Descriptor {
    /// Parses and checks a descriptor.
    pub fn parse(text: &str) -> Result<Descriptor, String> {
        let d: Descriptor = serde_json::from_str(text).map_err(ssx_sdk::descriptor_error)?;
        if !["peer", "client", "router"].contains(&d.mode.as_str()) {
            return Err(format!(
                "invalid descriptor: mode must be \"peer\", \"client\" or \"router\", not \"{}\"",
                d.mode
            ));
        }
        if let Some(r) = &d.ros2 {
            r.check()?;
        }
        if let Some(p) = &d.prefix {
            check_key(p, "prefix")?;
        }
        if !(d.stats.period.is_finite() && d.stats.period >= 0.0) {
            return Err("invalid descriptor: stats.period must be a number of seconds >= 0".into());
        }
        if d.outbound_queue == 0 {
            return Err("invalid descriptor: outbound_queue must be at least 1".into());
        }
        for (name, a) in &d.artifacts {
            let streams = a
                .state
                .iter()
                .map(|s| ("state".to_string(), s))
                .chain(a.sensors.iter().map(|(k, s)| (format!("sensors.{k}"), s)));
            for (what, s) in streams {
                if s.every == 0 {
                    return Err(format!(
                        "invalid descriptor: artifacts.{name}.{what}.every must be at least 1"
                    ));
                }
            }
        }
        Ok(d)
    }

    /// The Zenoh configuration: the file (if any), then mode, endpoints and scouting from the
    /// descriptor. Refuses a listening endpoint beyond loopback unless `expose` is set.
    pub fn zenoh_config(&self) -> Result<zenoh::Config, String> {
        let mut c = match &self.config_file {
            Some(path) => zenoh::Config::from_file(path)
                .map_err(|e| format!("zenoh config_file '{path}': {e}"))?,
            None => zenoh::Config::default(),
        };
        let set = |c: &mut zenoh::Config, key: &str, value: String| {
            c.insert_json5(key, &value)
                .map_err(|e| format!("zenoh setting {key} = {value}: {e}"))
        };
        set(&mut c, "mode", format!("\"{}\"", self.mode))?;
        let listen = match (&self.listen, self.mode.as_str(), &self.config_file) {
            (Some(l), _, _) => Some(l.clone()),
            (None, "peer" | "router", None) => Some(vec!["tcp/127.0.0.1:7447".to_string()]),
            (None, _, None) => Some(Vec::new()), // client
            (None, _, Some(_)) => None,          // the file's own
        };
        if let Some(l) = &listen {
            set(&mut c, "listen/endpoints", json_list(l))?;
        }
        if !self.connect.is_empty() || self.config_file.is_none() {
            set(&mut c, "connect/endpoints", json_list(&self.connect))?;
        }
        if self.config_file.is_none() || !self.scouting {
            set(
                &mut c,
                "scouting/multicast/enabled",
                self.scouting.to_string(),
            )?;
        }
        // Whatever the file or the defaults say, every listening endpoint is checked.
        let endpoints: Vec<String> = match c.get_json("listen/endpoints") {
            Ok(text) => parse_endpoints(&text),
            Err(_) => Vec::new(),
        };
        if !self.expose {
            if let Some(e) = endpoints.iter().find(|e| !is_loopback(e)) {
                return Err(format!(
                    "zenoh listen endpoint '{e}' is not on loopback; set \"expose\": true to open it beyond this machine"
                ));
            }
            if self.scouting {
                return Err(
                    "multicast scouting announces the daemon on the network; set \"expose\": true to allow it"
                        .into(),
                );
            }
        }
        Ok(c)
    }
}

/// For a daemon open beyond this machine without what would close it: a warning that says so
/// (docs/zenoh.md "Security"). Open means a listening endpoint beyond loopback; closed means
/// every such endpoint is TLS with client certificates required, and access control is on.
pub fn exposure_warning(c: &zenoh::Config) -> Option<String> {
    let endpoints: Vec<String> = c
        .get_json("listen/endpoints")
        .map(|t| parse_endpoints(&t))
        .unwrap_or_default();
    let open: Vec<&String> = endpoints.iter().filter(|e| !is_loopback(e)).collect();
    let first = open.first()?;
    let is_true = |key: &str| c.get_json(key).is_ok_and(|v| v.trim() == "true");
    let missing: Vec<&str> = [
        (
            open.iter()
                .any(|e| !e.starts_with("tls/") && !e.starts_with("quic/")),
            "TLS",
        ),
        (
            !is_true("transport/link/tls/enable_mtls"),
            "client certificates",
        ),
        (!is_true("access_control/enabled"), "access control"),
    ]
    .into_iter()
    .filter_map(|(lacks, what)| lacks.then_some(what))
    .collect();
    (!missing.is_empty()).then(|| {
        format!(
            "zenoh: listening on '{first}' beyond this machine without {}: anyone who reaches it can command the robots and pause the run (docs/zenoh.md \"Security\"; artifacts/zenoh/lab.json5 closes it)",
            missing.join(", ")
        )
    })
}

fn json_list(items: &[String]) -> String {
    serde_json::to_string(items).expect("strings serialise")
}

/// The endpoints of a `listen/endpoints` value: a list, or a map of mode to list.
fn parse_endpoints(json: &str) -> Vec<String> {
    let mut out = Vec::new();
    fn walk(v: &serde_json::Value, out: &mut Vec<String>) {
        match v {
            serde_json::Value::String(s) => out.push(s.clone()),
            serde_json::Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            serde_json::Value::Object(m) => m.values().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(json) {
        walk(&v, &mut out);
    }
    out
}

/// `proto/host:port[#...]` with host 127.x.y.z, `[::1]` or `localhost`.
pub fn is_loopback(endpoint: &str) -> bool {
    let Some((_, address)) = endpoint.split_once('/') else {
        return false;
    };
    let address = address.split(['#', '?']).next().unwrap_or("");
    let host = match address.rsplit_once(':') {
        Some((h, _)) => h,
        None => address,
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host == "localhost"
        || host == "::1"
        || host
            .parse::<std::net::Ipv4Addr>()
            .is_ok_and(|a| a.is_loopback())
}

/// The artifacts (indices into `names`) an artifact pattern of the descriptor names: a name, or
/// a prefix ending in `*`.
pub fn matching(names: &[String], pattern: &str) -> Vec<u32> {
    let hit = |name: &str| match pattern.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => name == pattern,
    };
    (0..names.len() as u32)
        .filter(|&a| hit(&names[a as usize]))
        .collect()
}

/// A key expression we build keys from: no wildcards, no empty chunks.
pub fn check_key(key: &str, what: &str) -> Result<(), String> {
    let bad = key.is_empty()
        || key.starts_with('/')
        || key.ends_with('/')
        || key.contains("//")
        || key.contains(['*', '$', '?', '#'])
        || key.chars().any(char::is_whitespace);
    if bad {
        Err(format!(
            "invalid key '{key}' for {what}: no leading or trailing '/', no empty chunks, no wildcards or spaces"
        ))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn artifact_patterns_are_a_name_or_a_prefix_with_a_star() {
        let names: Vec<String> = ["rover", "rover_2", "quad", "rov"].map(String::from).into();
        assert_eq!(matching(&names, "rover"), [0]);
        assert_eq!(matching(&names, "rover*"), [0, 1]);
        assert_eq!(matching(&names, "*"), [0, 1, 2, 3]);
        assert_eq!(matching(&names, "drone"), Vec::<u32>::new());
    }

    #[test]
    fn loopback_endpoints() {
        for e in [
            "tcp/127.0.0.1:7447",
            "tcp/[::1]:7447",
            "tcp/localhost:1",
            "udp/127.0.0.2:9",
        ] {
            assert!(is_loopback(e), "{e}");
        }
        for e in [
            "tcp/0.0.0.0:7447",
            "tcp/[::]:7447",
            "tcp/192.168.1.2:7447",
            "tcp",
        ] {
            assert!(!is_loopback(e), "{e}");
        }
    }

    #[test]
    fn a_public_listen_endpoint_needs_expose() {
        let d = Descriptor::parse(r#"{"listen": ["tcp/0.0.0.0:7447"]}"#).unwrap();
        assert_eq!(
            d.zenoh_config().unwrap_err(),
            "zenoh listen endpoint 'tcp/0.0.0.0:7447' is not on loopback; set \"expose\": true to open it beyond this machine"
        );
        let d = Descriptor::parse(r#"{"listen": ["tcp/0.0.0.0:7447"], "expose": true}"#).unwrap();
        assert!(d.zenoh_config().is_ok());
    }

    #[test]
    fn an_open_daemon_is_warned_of_and_the_lab_configuration_closes_it() {
        let config = |json: &str| Descriptor::parse(json).unwrap().zenoh_config().unwrap();
        assert_eq!(exposure_warning(&config("{}")), None, "loopback only");
        assert_eq!(
            exposure_warning(&config(
                r#"{"listen": ["tcp/0.0.0.0:7447"], "expose": true}"#
            ))
            .unwrap(),
            "zenoh: listening on 'tcp/0.0.0.0:7447' beyond this machine without TLS, client certificates, access control: anyone who reaches it can command the robots and pause the run (docs/zenoh.md \"Security\"; artifacts/zenoh/lab.json5 closes it)"
        );
        let lab = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../artifacts/zenoh/lab.json5"
        );
        let lab = config(&format!(r#"{{"config_file": "{lab}", "expose": true}}"#));
        assert_eq!(exposure_warning(&lab), None);
        // The lab file with a plain TCP endpoint beside its TLS one.
        let mut open = lab.clone();
        open.insert_json5(
            "listen/endpoints",
            r#"["tls/0.0.0.0:7447", "tcp/0.0.0.0:7448"]"#,
        )
        .unwrap();
        assert!(exposure_warning(&open).unwrap().starts_with(
            "zenoh: listening on 'tls/0.0.0.0:7447' beyond this machine without TLS: "
        ),);
    }

    #[test]
    fn defaults_listen_on_loopback_without_scouting() {
        let c = Descriptor::parse("{}").unwrap().zenoh_config().unwrap();
        assert_eq!(
            c.get_json("listen/endpoints").unwrap().replace(' ', ""),
            r#"["tcp/127.0.0.1:7447"]"#
        );
        assert_eq!(c.get_json("scouting/multicast/enabled").unwrap(), "false");
    }
}
