//! A camera sensor's images as Foxglove shows them: the depth image (`32FC1`, metres; +inf where
//! nothing is seen, NaN too near), the colour image (`rgb8`) and the calibration, each on
//! `/cameras/<artifact>/<sensor>/...`, in the optical frame `<artifact>/<sensor>/optical`
//! that `/tf` places on the camera's body.

use std::sync::Arc;

use foxglove::bytes::Bytes;
use foxglove::schemas::{CameraCalibration, FrameTransform, Quaternion, RawImage, Timestamp};
use foxglove::{Channel, Context};

use crate::convert::vec3;
use crate::scene::{CameraGeometry, SensorInfo};

/// Topic prefix of the cameras' channels.
pub const CAMERAS: &str = "/cameras/";

/// One camera's channels.
pub(crate) struct CameraChannels {
    depth: Channel<RawImage>,
    image: Option<Channel<RawImage>>,
    calibration: Channel<CameraCalibration>,
    frame_id: String,
}

/// The optical frame's name for the sensor at `path` (`<artifact>/<sensor>`).
pub(crate) fn frame_id(path: &str) -> String {
    format!("{path}/optical")
}

/// Where the camera's optical frame sits on its body, for `/tf` (numbers fixed; the timestamp
/// is set per message).
pub(crate) fn transform(
    sensor: &SensorInfo,
    g: &CameraGeometry,
    body_frame: &str,
) -> FrameTransform {
    let [x, y, z, w] = g.orientation;
    FrameTransform {
        parent_frame_id: body_frame.into(),
        child_frame_id: frame_id(&sensor.path),
        translation: vec3(g.position[0], g.position[1], g.position[2]),
        rotation: Some(Quaternion { x, y, z, w }),
        ..Default::default()
    }
}

impl CameraChannels {
    pub(crate) fn new(ctx: &Arc<Context>, sensor: &SensorInfo, g: &CameraGeometry) -> Self {
        let topic = |what: &str| format!("{CAMERAS}{}/{what}", sensor.path);
        CameraChannels {
            depth: ctx.channel_builder(topic("depth")).build(),
            image: g.color.then(|| ctx.channel_builder(topic("image")).build()),
            calibration: ctx.channel_builder(topic("calibration")).build(),
            frame_id: frame_id(&sensor.path),
        }
    }

    /// Publishes one frame's images and the calibration; returns how many messages went out.
    /// A reading of the wrong length (a custom build) is not shown.
    pub(crate) fn publish(
        &self,
        g: &CameraGeometry,
        values: &[f64],
        stamp: Option<Timestamp>,
        meta: impl Fn() -> foxglove::PartialMetadata,
    ) -> u64 {
        let pixels = g.width as usize * g.height as usize;
        if values.len() != pixels * if g.color { 2 } else { 1 } {
            return 0;
        }
        let image = |encoding: &str, step: u32, data: Vec<u8>| RawImage {
            timestamp: stamp,
            frame_id: self.frame_id.clone(),
            width: g.width,
            height: g.height,
            encoding: encoding.into(),
            step,
            data: Bytes::from(data),
        };
        let mut sent = 0;
        if self.depth.has_sinks() {
            let data = values[..pixels]
                .iter()
                .flat_map(|&d| (d as f32).to_le_bytes())
                .collect();
            self.depth
                .log_with_meta(&image("32FC1", 4 * g.width, data), meta());
            sent += 1;
        }
        if let Some(ch) = &self.image
            && ch.has_sinks()
        {
            let data = values[pixels..]
                .iter()
                .flat_map(|&c| ssx_sdk::camera::unpack(c))
                .collect();
            ch.log_with_meta(&image("rgb8", 3 * g.width, data), meta());
            sent += 1;
        }
        if self.calibration.has_sinks() {
            let p = &g.pinhole;
            let msg = CameraCalibration {
                timestamp: stamp,
                frame_id: self.frame_id.clone(),
                width: g.width,
                height: g.height,
                distortion_model: "plumb_bob".into(),
                d: vec![0.0; 5],
                k: p.k().to_vec(),
                r: vec![1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0],
                p: vec![
                    p.fx, 0.0, p.cx, 0.0, 0.0, p.fy, p.cy, 0.0, 0.0, 0.0, 1.0, 0.0,
                ],
            };
            self.calibration.log_with_meta(&msg, meta());
            sent += 1;
        }
        sent
    }
}
