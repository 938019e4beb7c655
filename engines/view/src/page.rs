//! The built-in viewer page and the vendored three.js it runs on, embedded in the binary.

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

/// The body and content type for a request path, if it is one of ours.
pub(crate) fn lookup<'a>(path: &str, index: &'a str) -> Option<(&'static str, &'a [u8])> {
    let path = path.split('?').next().unwrap_or(path);
    if path == "/" || path == "/index.html" {
        return Some(("text/html; charset=utf-8", index.as_bytes()));
    }
    FILES
        .iter()
        .find(|(p, _, _)| *p == path)
        .map(|&(_, t, b)| (t, b))
}

/// Answers requests until the server is unblocked.
pub(crate) fn serve(server: &tiny_http::Server, index: &str) {
    for req in server.incoming_requests() {
        let found = match req.method() {
            tiny_http::Method::Get | tiny_http::Method::Head => lookup(req.url(), index),
            _ => None,
        };
        let result = match found {
            Some((ctype, body)) => {
                let header = tiny_http::Header::from_bytes(&b"Content-Type"[..], ctype.as_bytes())
                    .expect("static header");
                req.respond(tiny_http::Response::from_data(body).with_header(header))
            }
            None => {
                req.respond(tiny_http::Response::from_string("not found\n").with_status_code(404))
            }
        };
        if let Err(e) = result {
            tracing::debug!("view page: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_names_its_websocket_port_and_every_asset_is_served() {
        let index = index_html(9123);
        assert!(index.contains("9123"));
        assert!(!index.contains("{{WS_PORT}}"));
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
}
