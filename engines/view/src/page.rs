//! The built-in viewer page and the vendored three.js it runs on, embedded in the binary, and the
//! HTTP server that serves them.

use std::convert::Infallible;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{ACCESS_CONTROL_ALLOW_ORIGIN, CACHE_CONTROL, CONTENT_TYPE, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::sync::{Semaphore, oneshot};

use crate::ViewError;
use crate::mesh::MeshFiles;

/// (path, content type, body) of every file the page server answers.
const FILES: &[(&str, &str, &[u8])] = &[
    (
        "/viewer.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../assets/viewer.js"),
    ),
    (
        "/wire.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../assets/wire.js"),
    ),
    (
        "/bodies.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../assets/bodies.js"),
    ),
    (
        "/frames.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../assets/frames.js"),
    ),
    (
        "/rays.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../assets/rays.js"),
    ),
    (
        "/status.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../assets/status.js"),
    ),
    (
        "/vendor/three/three.module.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../assets/vendor/three/three.module.js"),
    ),
    (
        "/vendor/three/three.core.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../assets/vendor/three/three.core.js"),
    ),
    (
        "/vendor/three/OrbitControls.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../assets/vendor/three/OrbitControls.js"),
    ),
    (
        "/vendor/three/LICENSE",
        "text/plain; charset=utf-8",
        include_bytes!("../assets/vendor/three/LICENSE"),
    ),
];

const INDEX: &str = include_str!("../assets/index.html");

/// The page, told which port the WebSocket is on.
pub(crate) fn index_html(ws_port: u16) -> String {
    INDEX.replace("{{WS_PORT}}", &ws_port.to_string())
}

/// The content type and body for a request path, if it is one of ours.
pub(crate) fn lookup(path: &str, index: &Bytes) -> Option<(&'static str, Bytes)> {
    let path = path.split('?').next().unwrap_or(path);
    if path == "/" || path == "/index.html" {
        return Some(("text/html; charset=utf-8", index.clone()));
    }
    FILES
        .iter()
        .find(|(p, _, _)| *p == path)
        .map(|&(_, t, b)| (t, Bytes::from_static(b)))
}

/// How many connections the page server holds at once; more wait in the kernel's backlog.
const MAX_CONNECTIONS: usize = 64;
/// A client that has not sent a whole request head within this is disconnected.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// The page's HTTP server: hyper on a single-threaded tokio runtime in a thread of its own.
///
/// (tiny_http, used before, sometimes left a browser's first requests unanswered: its thread pool
/// counts idle threads late, so a burst of new connections, as a page's parallel module loads,
/// could queue one behind a kept-alive connection until that closed.)
pub(crate) struct PageServer {
    port: u16,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl PageServer {
    /// Binds `host:port` (0: any free port) and serves the page with `index` as its front page,
    /// and the meshes in `meshes` (`/meshes/<name>`) as they are added.
    pub(crate) fn bind(
        host: &str,
        port: u16,
        index: String,
        meshes: MeshFiles,
    ) -> Result<Self, ViewError> {
        let where_ = |source: std::io::Error| ViewError::Page {
            host: host.to_string(),
            port,
            source,
        };
        let listener = std::net::TcpListener::bind((host, port)).map_err(where_)?;
        listener.set_nonblocking(true).map_err(where_)?;
        let bound = listener.local_addr().map_err(where_)?.port();
        let (stop, stopped) = oneshot::channel();
        let index = Bytes::from(index);
        let thread = std::thread::Builder::new()
            .name("ssx-view-page".into())
            .spawn(move || {
                match tokio::runtime::Builder::new_current_thread()
                    .enable_io()
                    .enable_time()
                    .build()
                {
                    Ok(rt) => rt.block_on(serve(listener, index, meshes, stopped)),
                    Err(e) => tracing::error!("view page: cannot start its runtime: {e}"),
                }
            })
            .map_err(ViewError::thread("view", "page"))?;
        Ok(Self {
            port: bound,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// The port it listens on.
    pub(crate) fn port(&self) -> u16 {
        self.port
    }
}

impl Drop for PageServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Accepts connections until told to stop; each is served in a task of its own.
async fn serve(
    listener: std::net::TcpListener,
    index: Bytes,
    meshes: MeshFiles,
    mut stopped: oneshot::Receiver<()>,
) {
    let listener = match tokio::net::TcpListener::from_std(listener) {
        Ok(l) => l,
        Err(e) => return tracing::error!("view page: cannot listen: {e}"),
    };
    let permits = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    loop {
        let permit = tokio::select! {
            _ = &mut stopped => return,
            p = Arc::clone(&permits).acquire_owned() => match p {
                Ok(p) => p,
                Err(_) => return,
            },
        };
        let stream = tokio::select! {
            _ = &mut stopped => return,
            r = listener.accept() => match r {
                Ok((stream, _)) => stream,
                Err(e) => {
                    // Out of descriptors, or a client gone before it was accepted: keep serving.
                    tracing::debug!("view page: accept: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let (index, meshes) = (index.clone(), Arc::clone(&meshes));
        tokio::spawn(async move {
            let service = service_fn(move |req| {
                std::future::ready(Ok::<_, Infallible>(respond(&req, &index, &meshes)))
            });
            let connection = http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .serve_connection(TokioIo::new(stream), service);
            if let Err(e) = connection.await {
                tracing::debug!("view page: {e}");
            }
            drop(permit);
        });
    }
}

/// A mesh the scene showed, by its path (`/meshes/<name>`).
fn mesh(path: &str, meshes: &MeshFiles) -> Option<(&'static str, Bytes)> {
    let name = path.strip_prefix(crate::mesh::PREFIX)?;
    let files = meshes.lock().unwrap_or_else(|p| p.into_inner());
    Some((crate::mesh::MEDIA_TYPE, files.get(name)?.clone()))
}

/// One of our files or meshes for GET and HEAD (hyper leaves out a HEAD response's body), else
/// 404.
fn respond<B>(req: &Request<B>, index: &Bytes, meshes: &MeshFiles) -> Response<Full<Bytes>> {
    let path = req.uri().path();
    let found = match *req.method() {
        Method::GET | Method::HEAD => lookup(path, index).or_else(|| mesh(path, meshes)),
        _ => None,
    };
    let is_mesh = found.is_some() && path.starts_with(crate::mesh::PREFIX);
    let (status, ctype, body) = match found {
        Some((ctype, body)) => (StatusCode::OK, ctype, body),
        None => (
            StatusCode::NOT_FOUND,
            "text/plain; charset=utf-8",
            Bytes::from_static(b"not found\n"),
        ),
    };
    let mut response = Response::new(Full::new(body));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(ctype));
    if is_mesh {
        // Foxglove's web app fetches a model from another origin; a name is its content, so
        // it never changes.
        headers.insert(ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
        headers.insert(
            CACHE_CONTROL,
            HeaderValue::from_static("public, max-age=31536000, immutable"),
        );
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_names_its_websocket_port_and_every_asset_is_served() {
        let html = index_html(9123);
        assert!(html.contains("9123"));
        assert!(!html.contains("{{WS_PORT}}"));
        let index = Bytes::from(html);
        for path in [
            "/",
            "/viewer.js",
            "/vendor/three/three.module.js",
            "/vendor/three/OrbitControls.js",
        ] {
            assert!(lookup(path, &index).is_some(), "{path}");
        }
        assert!(lookup("/../Cargo.toml", &index).is_none());
        // Every module a served script imports by a relative path is served too.
        for (path, _, body) in FILES.iter().filter(|(p, _, _)| p.ends_with(".js")) {
            let text = std::str::from_utf8(body).expect("utf-8");
            for import in text.split("from './").skip(1) {
                let name = import.split('\'').next().expect("closing quote");
                let dir = &path[..path.rfind('/').expect("absolute") + 1];
                let target = format!("{dir}{name}");
                assert!(lookup(&target, &index).is_some(), "{path} imports {target}");
            }
        }
    }

    /// A browser opens several connections at once and keeps them open; every one is answered
    /// while the others stay open (tiny_http, used before, left some unanswered here).
    #[test]
    fn many_open_connections_are_all_answered() {
        use std::io::{BufRead, BufReader, Write};
        let server =
            PageServer::bind("127.0.0.1", 0, index_html(1), MeshFiles::default()).expect("bind");
        let mut open = Vec::new();
        for i in 0..24 {
            let path = ["/", "/viewer.js", "/bodies.js", "/nope"][i % 4];
            let mut s =
                std::net::TcpStream::connect(("127.0.0.1", server.port())).expect("connect");
            // Bounds the test if an answer never comes.
            s.set_read_timeout(Some(Duration::from_secs(20)))
                .expect("timeout");
            write!(s, "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").expect("request");
            open.push((path, s));
        }
        for (path, s) in &open {
            let mut line = String::new();
            BufReader::new(s).read_line(&mut line).expect("an answer");
            let want = if *path == "/nope" {
                "HTTP/1.1 404"
            } else {
                "HTTP/1.1 200"
            };
            assert!(line.starts_with(want), "{path}: {line:?}");
        }
        // A request that is neither GET nor HEAD is not served a file.
        let mut s = std::net::TcpStream::connect(("127.0.0.1", server.port())).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(20)))
            .expect("timeout");
        write!(
            s,
            "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n"
        )
        .expect("request");
        let mut line = String::new();
        BufReader::new(&s).read_line(&mut line).expect("an answer");
        assert!(line.starts_with("HTTP/1.1 404"), "{line:?}");
        drop(open);
        drop(server);
    }

    /// A mesh is served once added, whole, as `model/stl`, to any origin; an unknown one is not.
    #[test]
    fn a_mesh_is_served_once_the_scene_adds_it() {
        use std::io::Read;
        let meshes = MeshFiles::default();
        let server =
            PageServer::bind("127.0.0.1", 0, index_html(1), Arc::clone(&meshes)).expect("bind");
        let get = |path: &str| {
            use std::io::Write;
            let mut s =
                std::net::TcpStream::connect(("127.0.0.1", server.port())).expect("connect");
            s.set_read_timeout(Some(Duration::from_secs(20)))
                .expect("timeout");
            write!(
                s,
                "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
            )
            .expect("request");
            let mut answer = Vec::new();
            s.read_to_end(&mut answer).expect("an answer");
            answer
        };
        let answer = get("/meshes/abc.stl");
        assert!(answer.starts_with(b"HTTP/1.1 404"));
        let body: Vec<u8> = (0..=255u8).cycle().take(100_000).collect();
        meshes
            .lock()
            .unwrap()
            .insert("abc.stl".into(), Bytes::from(body.clone()));
        let answer = get("/meshes/abc.stl");
        let text = String::from_utf8_lossy(&answer[..200]).to_lowercase();
        assert!(text.starts_with("http/1.1 200"), "{text}");
        assert!(text.contains("content-type: model/stl"), "{text}");
        assert!(text.contains("access-control-allow-origin: *"), "{text}");
        assert!(answer.ends_with(&body));
        drop(server);
    }
}
