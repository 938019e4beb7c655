//! Builds the C plugin libraries the tests load: the shipped C driver (drivers/hover-c) and the
//! broken fixtures (tests/fixtures/c), each a shared library compiled with the C compiler the
//! `cc` crate finds, against the committed header alone.

use std::path::{Path, PathBuf};
use std::process::Command;

fn shared_library(src: &Path, out: &Path, defines: &[&str]) {
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sdk/include");
    let compiler = cc::Build::new().cargo_metadata(false).get_compiler();
    let mut cmd: Command = compiler.to_command();
    cmd.args([
        "-std=c99", "-Wall", "-Wextra", "-Werror", "-O2", "-fPIC", "-shared",
    ])
    .arg("-I")
    .arg(&include)
    .args(defines)
    .arg(src)
    .arg("-o")
    .arg(out)
    .arg("-lm");
    let status = cmd.status().expect("run the C compiler");
    assert!(status.success(), "compiling {} failed", src.display());
    println!("cargo:rerun-if-changed={}", src.display());
}

/// Plugin tables written with the header's initialiser macros (C and C++20 alike).
const WITH_MACROS: &str = r#"
static SsxStatus create(const SsxHostApi *h, const char *d, const SsxInit *i, void **o, SsxErrorBuf *e) {
    (void)h; (void)d; (void)i; (void)e; *o = 0; return SSX_OK;
}
static void destroy(void *o) { (void)o; }
static SsxStatus step(void *o, SsxCtx c, SsxErrorBuf *e) { (void)o; (void)c; (void)e; return SSX_OK; }
static SsxStatus reset(void *o, uint64_t s, SsxErrorBuf *e) { (void)o; (void)s; (void)e; return SSX_OK; }
static const SsxPluginDesc PLUGINS[] = {
    SSX_DRIVER("d", "a driver", create, destroy, step),
    SSX_SENSOR("s", "a sensor", create, destroy, step),
    SSX_EXTENSION("e", "an extension", create, destroy, step, 0),
    { SSX_PLUGIN_FIELDS(SSX_KIND_EXTENSION, "r", "with reset", create, destroy, step), .reset = reset },
};
static const SsxPluginTable TABLE = SSX_PLUGIN_TABLE(PLUGINS);
"#;

/// The header alone must compile as strict C99 and as C++17; a table written with its
/// initialiser macros, as strict C99 and as C++20 (with one flag).
fn header_compiles(out: &Path) {
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sdk/include");
    let c_src = out.join("header_check.c");
    std::fs::write(
        &c_src,
        "#include \"ssx.h\"\nint main(void) { return SSX_OK; }\n",
    )
    .unwrap();
    let cpp_src = out.join("header_check.cpp");
    std::fs::write(&cpp_src, "#include \"ssx.h\"\nint main() { SsxPluginTable t{}; return static_cast<int>(t.plugin_count); }\n").unwrap();
    let c_macros = out.join("macros_check.c");
    let main = "int main(void) { return (int)TABLE.plugin_count - 4; }\n";
    std::fs::write(
        &c_macros,
        format!("#include \"ssx.h\"\n{WITH_MACROS}{main}"),
    )
    .unwrap();
    let cpp_macros = out.join("macros_check.cpp");
    std::fs::write(
        &cpp_macros,
        format!("#include \"ssx.h\"\n{WITH_MACROS}{main}"),
    )
    .unwrap();
    // g++ warns of fields left out of a designated initialiser too (gcc does not): C++
    // plugins need the flag docs/plugins.md gives.
    let cpp_flag = "-Wno-missing-field-initializers";
    for (cpp, std, src, extra) in [
        (false, "-std=c99", &c_src, None),
        (true, "-std=c++17", &cpp_src, None),
        (false, "-std=c99", &c_macros, None),
        (true, "-std=c++20", &cpp_macros, Some(cpp_flag)),
    ] {
        let compiler = cc::Build::new()
            .cpp(cpp)
            .cargo_metadata(false)
            .get_compiler();
        let status = compiler
            .to_command()
            .args([
                std,
                "-Wall",
                "-Wextra",
                "-Werror",
                "-pedantic",
                "-fsyntax-only",
            ])
            .args(extra)
            .arg("-I")
            .arg(&include)
            .arg(src)
            .status()
            .expect("run the compiler");
        assert!(
            status.success(),
            "{} (with sdk/include/ssx.h) does not compile with {std}",
            src.display()
        );
    }
}

fn main() {
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let fixtures = root.join("tests/fixtures/c");
    header_compiles(&out);
    shared_library(
        &root.join("drivers/hover-c/hover.c"),
        &out.join("libssx_driver_hover_c.so"),
        &[],
    );
    shared_library(
        &fixtures.join("misbehaving.c"),
        &out.join("libmisbehaving.so"),
        &[],
    );
    shared_library(&fixtures.join("faults.c"), &out.join("libfaults.so"), &[]);
    shared_library(
        &fixtures.join("no_entry.c"),
        &out.join("libno_entry.so"),
        &[],
    );
    shared_library(
        &fixtures.join("counter_ext.c"),
        &out.join("libcounter_ext.so"),
        &[],
    );
    shared_library(
        &fixtures.join("versioned.c"),
        &out.join("libabi_future.so"),
        &["-DFIXTURE_VERSION=99"],
    );
    shared_library(
        &fixtures.join("versioned.c"),
        &out.join("libabi_past.so"),
        &["-DFIXTURE_VERSION=1"],
    );
    shared_library(
        &fixtures.join("versioned.c"),
        &out.join("libsmall_table.so"),
        &["-DFIXTURE_SMALL"],
    );
    // The library-swap tests' builds of one driver.
    let swap = fixtures.join("swap.c");
    // v1 as a library built against the header before `save`/`restore` (shorter entries).
    shared_library(&swap, &out.join("libswap_x.so"), &["-DOLD_ENTRY"]);
    shared_library(&swap, &out.join("libswap_y.so"), &["-DPUSH_Y"]);
    // A plugin written by position against version 3's first layout, built with the flag
    // docs/plugins.md gives for such plugins (the fields appended since are left null).
    shared_library(
        &swap,
        &out.join("libswap_positional.so"),
        &["-DPOSITIONAL", "-Wno-missing-field-initializers"],
    );
    shared_library(&swap, &out.join("libswap_fails.so"), &["-DFAIL_CREATE"]);
    shared_library(
        &swap,
        &out.join("libswap_renamed.so"),
        &["-DPLUGIN_NAME=\"shover\""],
    );
    // The state hand-over tests' builds of one sensor.
    let counter = fixtures.join("counter.c");
    shared_library(&counter, &out.join("libcounter_v1.so"), &[]);
    shared_library(&counter, &out.join("libcounter_v2.so"), &["-DVERSION=2"]);
    shared_library(
        &counter,
        &out.join("libcounter_fresh.so"),
        &["-DVERSION=3", "-DNO_HANDOVER"],
    );
    shared_library(
        &counter,
        &out.join("libcounter_bad.so"),
        &["-DVERSION=4", "-DBAD_RESTORE"],
    );
    // The batch-call tests' builds of one driver: with `step_many`, as built against the
    // header before it (shorter entries), and without it.
    let many = fixtures.join("many.c");
    shared_library(&many, &out.join("libmany.so"), &[]);
    shared_library(&many, &out.join("libmany_v3.so"), &["-DV3_ENTRY"]);
    shared_library(&many, &out.join("libmany_single.so"), &["-DSINGLE"]);
    println!("cargo:rerun-if-changed=../sdk/include/ssx.h");
}
