//! The live stream: a Foxglove WebSocket server fed by its own publisher thread, and the
//! built-in three.js page on a small HTTP server beside it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam::queue::ArrayQueue;
use foxglove::websocket::{Capability, ChannelView, Client, ServerListener};
use foxglove::{Context, SinkId, WebSocketServer, WebSocketServerHandle};

use crate::ViewError;
use crate::frame::Queues;
use crate::hub::Hub;
use crate::mesh::{Links, MeshFiles};
use crate::publish::Channels;
use crate::pull::Pull;
use crate::scene::SceneInfo;

/// Where and how fast the live view runs.
#[derive(Clone, Debug, PartialEq)]
pub struct ViewOptions {
    /// Name the server gives itself (the page shows it).
    pub name: String,
    /// Address to listen on: 127.0.0.1 unless the scene says `"expose": true`.
    pub host: String,
    /// WebSocket port (0: any free port).
    pub port: u16,
    /// Port of the page (0: any free port).
    pub page_port: u16,
    /// Frames a wall second.
    pub rate: f64,
    /// Messages each client's queue holds before the oldest are dropped.
    pub backlog: usize,
    /// Rays drawn at most, over every range sensor: past this, one sensor in k is drawn.
    pub max_rays: usize,
}

impl Default for ViewOptions {
    fn default() -> Self {
        Self {
            name: "ssx".into(),
            host: "127.0.0.1".into(),
            port: 8765,
            page_port: 8766,
            rate: 30.0,
            backlog: 1024,
            max_rays: 20_000,
        }
    }
}

/// Clients that just subscribed to the scene, to send it to them.
struct SceneRequests {
    queue: ArrayQueue<SinkId>,
    publisher: std::sync::OnceLock<std::thread::Thread>,
}

impl ServerListener for SceneRequests {
    fn on_subscribe(&self, client: Client, channel: ChannelView) {
        if Channels::is_scene(channel.topic())
            && let Some(sink) = client.sink_id()
        {
            let _ = self.queue.push(sink);
            if let Some(t) = self.publisher.get() {
                t.unpark();
            }
        }
    }
}

/// The running server, page and publisher.
pub(crate) struct Live {
    ctx: Arc<Context>,
    server: Option<Arc<WebSocketServerHandle>>,
    page: Option<crate::page::PageServer>,
    /// The meshes the page server answers.
    meshes: MeshFiles,
    publisher: Option<JoinHandle<()>>,
    stop: Arc<AtomicBool>,
    requests: Arc<SceneRequests>,
    max_rays: usize,
    pub ws_url: String,
    pub page_url: String,
}

impl Live {
    /// Binds the WebSocket server and the page; fails with a message naming the address.
    pub fn bind(o: &ViewOptions) -> Result<Self, ViewError> {
        let ctx = Context::new();
        let requests = Arc::new(SceneRequests {
            queue: ArrayQueue::new(64),
            publisher: std::sync::OnceLock::new(),
        });
        let server = WebSocketServer::new()
            .name(o.name.clone())
            .bind(o.host.clone(), o.port)
            .context(&ctx)
            .capabilities([Capability::Time, Capability::Services])
            .message_backlog_size(o.backlog)
            .listener(requests.clone())
            .start_blocking()
            .map_err(|source| ViewError::WebSocket {
                host: o.host.clone(),
                port: o.port,
                source,
            })?;
        let port = server.port();
        let meshes = MeshFiles::default();
        let page = crate::page::PageServer::bind(
            &o.host,
            o.page_port,
            crate::page::index_html(port),
            Arc::clone(&meshes),
        )?;
        let page_port = page.port();
        Ok(Self {
            ctx,
            server: Some(Arc::new(server)),
            page: Some(page),
            meshes,
            publisher: None,
            stop: Arc::new(AtomicBool::new(false)),
            requests,
            max_rays: o.max_rays,
            ws_url: format!("ws://{}:{port}", o.host),
            page_url: format!("http://{}:{page_port}/", o.host),
        })
    }

    /// Starts the publisher thread for `scene`, fed by `frames`.
    pub fn start(
        &mut self,
        mut scene: Arc<SceneInfo>,
        frames: Arc<Queues>,
        hub: Hub,
    ) -> Result<std::thread::Thread, ViewError> {
        // Every frame's rays: the view rate already limits them.
        crate::mesh::serve(&self.meshes, &scene.meshes);
        let links = Links::Url(self.page_url.trim_end_matches('/').to_string());
        let mut ch = Channels::new(
            &self.ctx,
            Arc::clone(&scene),
            f64::INFINITY,
            self.max_rays,
            links,
        )?;
        let meshes = Arc::clone(&self.meshes);
        // The page pulls frames instead (pull.rs).
        let pull = Arc::new(Pull::new(&scene, ch.ray_plan()));
        if let Some(s) = &self.server {
            s.add_services(pull.services())
                .map_err(ViewError::Services)?;
        }
        let stop = Arc::clone(&self.stop);
        let requests = Arc::clone(&self.requests);
        let server = self.server.clone();
        let thread = std::thread::Builder::new()
            .name("ssx-view".into())
            .spawn(move || {
                loop {
                    let stopping = stop.load(Ordering::Acquire);
                    while let Some(sink) = requests.queue.pop() {
                        let ns = hub.0.sim_ns.load(Ordering::Relaxed);
                        ch.publish_scene(ns, Some(sink));
                    }
                    while let Some(side) = hub.0.live.queue.pop() {
                        ch.publish_side(&side);
                    }
                    while let Some(f) = frames.next() {
                        if let Some(r) = &f.reset {
                            // What the daemon logged before the reset goes out before it.
                            while let Some(side) = hub.0.live.queue.pop() {
                                ch.publish_side(&side);
                            }
                            // The new world's meshes are there before its scene names them.
                            crate::mesh::serve(&meshes, &r.info.meshes);
                            if let Err(e) = ch.reset(r) {
                                tracing::warn!("view: the reset's channels: {e}");
                            }
                            pull.reset(&r.info, ch.ray_plan(), r.episode);
                            scene = Arc::clone(&r.info);
                        } else {
                            ch.publish_frame(&f);
                            pull.publish(&f, &scene);
                            if let Some(s) = &server {
                                // Foxglove's clock follows the log time: simulated time, plus
                                // the simulated time at each reset (it never goes back).
                                s.broadcast_time(f.log_ns());
                            }
                        }
                        frames.recycle(f);
                    }
                    if stopping {
                        break;
                    }
                    std::thread::park_timeout(Duration::from_millis(100));
                }
            })
            .map_err(ViewError::thread("view", "publisher"))?;
        let t = thread.thread().clone();
        let _ = self.requests.publisher.set(t.clone());
        self.publisher = Some(thread);
        Ok(t)
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(t) = self.publisher.take() {
            t.thread().unpark();
            let _ = t.join();
        }
        // The publisher, which held the other reference, has ended.
        if let Some(s) = self.server.take().and_then(Arc::into_inner) {
            // Closes every client connection.
            drop(s.stop());
        }
        // Stops the page server and waits for its thread.
        drop(self.page.take());
    }
}
