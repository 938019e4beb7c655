//! The quadrotor's airframe effects one at a time on SwarmSimX's figure-eight (docs/robots.md,
//! "Quadrotor physics"): each variant flies the figure-eight scene with the library quadrotor's
//! airframe reduced to some of its effects, and reports the tracking error's mean and standard
//! deviation per eight ([`crate::fidelity`]).

use std::path::Path;

use serde_json::{Value, json};

/// One variant: its name, the flight settings it flies (the artifact's `flight` with its
/// `airframe` reduced to the variant's effects) and the motion-capture latency (steps).
#[derive(Clone, Debug)]
pub struct Variant {
    /// What it has on.
    pub name: String,
    /// The descriptor's `flight` (the artifact's controller gains kept).
    pub flight: Value,
    /// The `mocap` sensor's latency (steps).
    pub mocap_latency: u64,
}

/// One row of the table: a variant's (mean, std) per figure-eight, by artifact name.
#[derive(Clone, Debug)]
pub struct Row {
    /// The variant's name.
    pub name: String,
    /// (artifact, mean error m, std m).
    pub errors: Vec<(String, f64, f64)>,
}

/// The airframe settings that say what the rotors are, not which effects act on them.
pub const ROTORS: &[&str] = &[
    "arm",
    "thrust_curve",
    "k_f",
    "k_m",
    "omega_min",
    "omega_max",
];

fn read_json(path: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// The variants of a quadrotor artifact file: all off, each effect alone, all on. "Off" is the
/// airframe's defaults (one symmetric motor lag, no drag, no ground effect, no battery) and no
/// motion-capture latency.
pub fn variants(artifact: &Path) -> Result<Vec<Variant>, String> {
    let a = read_json(artifact)?;
    let base = a
        .pointer("/driver/descriptor/flight")
        .cloned()
        .unwrap_or_else(|| json!({}));
    let on = base.get("airframe").cloned().unwrap_or_else(|| json!({}));
    // Every variant keeps the vehicle's own rotors (geometry, thrust and torque curves, speed
    // range): only the effects are switched. Without them a variant flew the airframe's
    // defaults, the 0.8 kg quadrotor's rotors, under any artifact's body.
    let flight = |airframe: Value| {
        let mut f = base.clone();
        let mut a = airframe;
        for k in ROTORS {
            if let (Some(v), Some(m)) = (on.get(*k), a.as_object_mut()) {
                m.entry(k.to_string()).or_insert_with(|| v.clone());
            }
        }
        f["airframe"] = a;
        f
    };
    let latency = a["sensors"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["name"] == "mocap"))
        .and_then(|s| s.pointer("/descriptor/latency"))
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let mut out = vec![Variant {
        name: "all off".into(),
        flight: flight(json!({})),
        mocap_latency: 0,
    }];
    let pick = |keys: &[&str]| {
        let mut m = serde_json::Map::new();
        for k in keys {
            if let Some(v) = on.get(*k) {
                m.insert((*k).to_string(), v.clone());
            }
        }
        Value::Object(m)
    };
    let drag = |part: &str| {
        on.pointer(&format!("/drag/{part}"))
            .map(|v| json!({ "drag": { part: v } }))
    };
    let alone: Vec<(&str, Option<Value>)> = vec![
        (
            "motors (spin-up/down, delay, rotor inertia)",
            Some(pick(&[
                "spin_up",
                "spin_down",
                "motor_delay",
                "rotor_inertia",
            ])),
        ),
        ("rotor drag", drag("rotor")),
        ("linear body drag", drag("linear")),
        ("quadratic body drag", drag("quadratic")),
        (
            "ground effect",
            on.get("ground_effect").map(|_| pick(&["ground_effect"])),
        ),
        ("battery", on.get("battery").map(|_| pick(&["battery"]))),
    ];
    for (name, airframe) in alone {
        if let Some(airframe) = airframe.filter(|v| v.as_object().is_some_and(|m| !m.is_empty())) {
            out.push(Variant {
                name: name.into(),
                flight: flight(airframe),
                mocap_latency: 0,
            });
        }
    }
    if latency > 0 {
        out.push(Variant {
            name: format!("motion-capture latency ({latency} steps)"),
            flight: flight(json!({})),
            mocap_latency: latency,
        });
    }
    out.push(Variant {
        name: "all on".into(),
        flight: flight(on.clone()),
        mocap_latency: latency,
    });
    Ok(out)
}

/// `scene` with every artifact's `flight` and `mocap` latency set as `variant` says,
/// written into `dir` (artifact paths made absolute).
pub fn scene_for(
    scene: &Path,
    variant: &Variant,
    dir: &Path,
) -> Result<std::path::PathBuf, String> {
    let mut s = read_json(scene)?;
    let scene = std::path::absolute(scene).map_err(|e| format!("{}: {e}", scene.display()))?;
    let base = scene.parent().unwrap_or(Path::new("/"));
    for a in s["artifacts"].as_array_mut().into_iter().flatten() {
        if let Some(rel) = a["artifact"].as_str() {
            a["artifact"] = json!(base.join(rel).display().to_string());
        }
        let Some(driver) = a.pointer_mut("/overrides/driver") else {
            continue;
        };
        driver["flight"] = variant.flight.clone();
        a["overrides"]["sensors"] = json!({ "mocap": { "latency": variant.mocap_latency } });
    }
    let name = variant
        .name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect::<String>();
    let path = dir.join(format!("{name}.json"));
    ssx_core::write_atomic(&path, s.to_string().as_bytes()).map_err(|e| e.to_string())?;
    Ok(path)
}

/// Flies every variant of `artifact` on `scene` for `laps` periods of each eight.
pub fn run(scene: &Path, artifact: &Path, laps: f64, dir: &Path) -> Result<Vec<Row>, String> {
    variants(artifact)?
        .iter()
        .map(|v| {
            let tracks = crate::fidelity::run(&scene_for(scene, v, dir)?, laps)?;
            Ok(Row {
                name: v.name.clone(),
                errors: tracks
                    .iter()
                    .map(|t| {
                        let (m, s) = t.mean_std();
                        (t.name.clone(), m, s)
                    })
                    .collect(),
            })
        })
        .collect()
}
