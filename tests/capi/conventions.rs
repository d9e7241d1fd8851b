//! include/b2frame.h must be exactly what cbindgen (pinned 0.29.4) generates from src/capi with
//! cbindgen.toml; a stale header would give C programs wrong prototypes or layouts.
//! Regenerate with `scripts/gen-header.sh` (or `B2FRAME_WRITE_HEADER=1 cargo test --test capi
//! conventions::`).

use std::path::Path;

fn generate() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config =
        cbindgen::Config::from_file(root.join("cbindgen.toml")).expect("cbindgen.toml must parse");
    let bindings = cbindgen::Builder::new()
        .with_config(config)
        .with_src(root.join("src/capi/mod.rs"))
        .generate()
        .expect("cbindgen must be able to generate the header");
    let mut out = Vec::new();
    bindings.write(&mut out);
    String::from_utf8(out).expect("the header is UTF-8")
}

#[test]
fn b2frame_h_is_up_to_date() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("include/b2frame.h");
    let fresh = generate();
    if std::env::var_os("B2FRAME_WRITE_HEADER").is_some() {
        std::fs::write(&path, &fresh).expect("write include/b2frame.h");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed != fresh {
        let first_diff = committed
            .lines()
            .zip(fresh.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| committed.lines().count().min(fresh.lines().count()));
        panic!(
            "include/b2frame.h is stale (first difference at line {}): the C API in src/capi \
             changed. Regenerate it with scripts/gen-header.sh (or B2FRAME_WRITE_HEADER=1 cargo \
             test --test capi conventions::) and commit it.",
            first_diff + 1
        );
    }
}

#[test]
fn b2frame_h_declares_the_functions_of_this_crate() {
    // A sanity check that the generation really looked at src/capi.
    let fresh = generate();
    for name in [
        "blosc2_error_string",
        "b2frame_version_string",
        "blosc2_remove_urlpath",
    ] {
        assert!(
            fresh.contains(&format!("{name}(")),
            "{name} missing from the header"
        );
    }
    assert!(fresh.contains("typedef struct blosc2_schunk {"));
}
