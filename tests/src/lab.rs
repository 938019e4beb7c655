//! The shipped lab configuration (docs/zenoh.md "Security") for tests: certificates made at
//! test time with rcgen (a CA, ssxd's for localhost and 127.0.0.1, one per client common name),
//! the shipped client configuration and the shipped daemon side, pointed at them.

use std::path::Path;

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};

use crate::repo_root;

/// A CA named `ca_name`, and certificates it signed, written into `dir/certs`: `ca.pem`,
/// `ssxd.pem`/`.key` (for localhost and 127.0.0.1) and `NAME.pem`/`.key` per client common
/// name. Returns the CA's issuer, to sign more.
pub fn certify(dir: &Path, ca_name: &str, clients: &[&str]) -> Issuer<'static, KeyPair> {
    let certs = dir.join("certs");
    std::fs::create_dir_all(&certs).unwrap();
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name.push(DnType::CommonName, ca_name);
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    std::fs::write(certs.join("ca.pem"), ca_cert.pem()).unwrap();
    let issuer = Issuer::new(ca, ca_key);
    let sign = |name: &str, alt: Vec<String>| {
        let key = KeyPair::generate().unwrap();
        let mut p = CertificateParams::new(alt).unwrap();
        p.distinguished_name.push(DnType::CommonName, name);
        let cert = p.signed_by(&key, &issuer).unwrap();
        std::fs::write(certs.join(format!("{name}.pem")), cert.pem()).unwrap();
        std::fs::write(certs.join(format!("{name}.key")), key.serialize_pem()).unwrap();
    };
    sign("ssxd", vec!["localhost".into(), "127.0.0.1".into()]);
    for c in clients {
        sign(c, vec![format!("{c}.lab")]);
    }
    issuer
}

/// The shipped client configuration with `name`'s certificate from `dir` (None: only the CA,
/// no certificate of its own), connecting to the daemon on `port`; a failed connection gives
/// up after 3 s.
pub fn client(dir: &Path, name: Option<&str>, port: u16) -> zenoh::Config {
    let mut c = zenoh::Config::from_file(repo_root().join("artifacts/zenoh/client.json5"))
        .expect("the shipped client configuration");
    let path = |f: &str| format!("\"{}\"", dir.join("certs").join(f).display());
    let set = |c: &mut zenoh::Config, key: &str, value: String| {
        c.insert_json5(key, &value)
            .unwrap_or_else(|e| panic!("{key} = {value}: {e}"))
    };
    set(
        &mut c,
        "transport/link/tls/root_ca_certificate",
        path("ca.pem"),
    );
    match name {
        Some(n) => {
            set(
                &mut c,
                "transport/link/tls/connect_certificate",
                path(&format!("{n}.pem")),
            );
            set(
                &mut c,
                "transport/link/tls/connect_private_key",
                path(&format!("{n}.key")),
            );
        }
        None => {
            set(
                &mut c,
                "transport/link/tls/connect_certificate",
                "null".into(),
            );
            set(
                &mut c,
                "transport/link/tls/connect_private_key",
                "null".into(),
            );
        }
    }
    set(
        &mut c,
        "connect/endpoints",
        format!("[\"tls/localhost:{port}\"]"),
    );
    set(&mut c, "connect/timeout_ms", "3000".into());
    set(&mut c, "connect/exit_on_failure", "true".into());
    c
}

/// The shipped lab configuration (`artifacts/zenoh/lab.json5`, mutual TLS and its access
/// control) with ssxd's certificate from `dir`, listening on `tls/127.0.0.1:PORT` only.
pub fn listener(dir: &Path, port: u16) -> zenoh::Config {
    let mut c = zenoh::Config::from_file(repo_root().join("artifacts/zenoh/lab.json5"))
        .expect("the shipped lab configuration");
    let path = |f: &str| format!("\"{}\"", dir.join("certs").join(f).display());
    for (key, value) in [
        ("transport/link/tls/root_ca_certificate", path("ca.pem")),
        ("transport/link/tls/listen_certificate", path("ssxd.pem")),
        ("transport/link/tls/listen_private_key", path("ssxd.key")),
        ("listen/endpoints", format!("[\"tls/127.0.0.1:{port}\"]")),
    ] {
        c.insert_json5(key, &value)
            .unwrap_or_else(|e| panic!("{key} = {value}: {e}"));
    }
    c
}
