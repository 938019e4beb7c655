//! The committed C header must be exactly what the pinned cbindgen generates from `src/abi.rs`.
//! `SSX_BLESS=1 cargo test -p ssx-sdk --test header` rewrites it.

use std::path::Path;

fn generate() -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).expect("cbindgen.toml");
    let mut out = Vec::new();
    cbindgen::Builder::new()
        .with_config(config)
        .with_src(dir.join("src/abi.rs"))
        .generate()
        .expect("cbindgen generates the header")
        .write(&mut out);
    let mut text = String::from_utf8(out).expect("UTF-8 header");
    // The entry point is implemented by plugins, not declared in abi.rs as a function; the
    // initialiser macros are C, kept in a file of their own.
    text = text.replace(
        "#endif  /* SSX_H */",
        &format!(
            "#ifdef __cplusplus\nextern \"C\" {{\n#endif\n\n/* Every plugin library defines this. */\nconst SsxPluginTable *ssx_plugin_entry(void);\n\n#ifdef __cplusplus\n}}  /* extern \"C\" */\n#endif\n\n{}\n#endif  /* SSX_H */",
            include_str!("../src/initialisers.h")
        ),
    );
    text
}

#[test]
fn the_committed_header_is_fresh() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("include/ssx.h");
    let fresh = generate();
    if std::env::var_os("SSX_BLESS").is_some() {
        std::fs::write(&path, &fresh).expect("write the header");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == fresh,
        "sdk/include/ssx.h is stale: regenerate it with `SSX_BLESS=1 cargo test -p ssx-sdk --test header` and commit it"
    );
}
