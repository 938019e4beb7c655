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

fn main() {
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let fixtures = root.join("tests/fixtures/c");
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
    shared_library(
        &fixtures.join("no_entry.c"),
        &out.join("libno_entry.so"),
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
        &["-DFIXTURE_VERSION=0"],
    );
    shared_library(
        &fixtures.join("versioned.c"),
        &out.join("libsmall_table.so"),
        &["-DFIXTURE_SMALL"],
    );
    println!("cargo:rerun-if-changed=../sdk/include/ssx.h");
}
