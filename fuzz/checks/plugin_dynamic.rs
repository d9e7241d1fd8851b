//! The dynamic plugin loader (`b2frame::dynamic`) with arbitrary names, plugin paths, Python
//! output and library files.
//!
//! Properties, for every input:
//! - `valid_name` holds exactly for non-empty names of ASCII letters, digits and `_`;
//!   `file_name` is `libblosc2_<name>.so` (`blosc2_<name>.dll` on Windows).
//! - `candidates` fails with `InvalidParam` for a name that is not valid; otherwise every listed
//!   non-empty entry gives, in order, either the entry itself (when its last component is the
//!   plugin's file name) or `entry/<file>` and `entry/blosc2_<name>/<file>`: every candidate is
//!   inside a listed entry (one or two plain components below it, the last one the file name),
//!   and there are no others.
//! - `parse_libpath` gives `Some` only for UTF-8 output with a non-blank line, and then the
//!   first such line without surrounding blanks.
//! - `load` of an invalid name fails with the kind's error (and again from the cache).
//! - `load_from` of a file holding input bytes (always after a first byte that is not `0x7f`,
//!   so the file is never an ELF object and no code of it can run), of a missing file and of a
//!   directory fails with the kind's error.
//! - Real shared libraries the check builds once with the target's C compiler (no `info`; an
//!   `info` table naming five defined functions; one naming two defined and a missing third;
//!   one with a NULL second entry; one naming a missing second function), loaded through a
//!   hard link whose name comes from the input (the first candidate of a plugin path listing
//!   the scratch directory): the load succeeds exactly when the table names the kind's
//!   functions and they are defined, and then gives those names, non-NULL addresses, the path
//!   loaded, and the same addresses on a second load. Without a compiler, `libz.so.1` and
//!   `libc.so.6` stand in (libraries without `info`). Input names never reach `dlopen` without
//!   a directory part (no search of the system's library path with a chosen name).
//!
//! Input: `flags | name length | name | path length | plugin path | rest` (flags: bits 0-1 the
//! kind, bits 2-4 which library file, bit 5 list the scratch directory first). `rest` is both
//! the Python output and the bytes of the arbitrary file.
use b2frame::dynamic::{self, Kind};
use b2frame::error::Error;
use std::path::{Component, Path, PathBuf};

/// One test library.
struct TestLib {
    path: PathBuf,
    /// How many leading entries of its `info` table name defined functions (0 also when it
    /// has no `info`).
    defined: usize,
}

/// The test libraries' sources and how many leading table entries name defined functions.
const SOURCES: [(&str, usize); 5] = [
    ("int b2f_fuzz_plain(void) { return 1; }\n", 0),
    (
        "int f0(void){return 0;} int f1(void){return 1;} int f2(void){return 2;}\n\
         int f3(void){return 3;} int f4(void){return 4;}\n\
         const char *info[5] = {\"f0\", \"f1\", \"f2\", \"f3\", \"f4\"};\n",
        5,
    ),
    (
        "int f0(void){return 0;} int f1(void){return 1;}\n\
         const char *info[5] = {\"f0\", \"f1\", \"b2f_missing\", \"f0\", \"f1\"};\n",
        2,
    ),
    (
        "int f0(void){return 0;}\nconst char *info[5] = {\"f0\", 0, \"f0\", \"f0\", \"f0\"};\n",
        1,
    ),
    (
        "int f0(void){return 0;}\n\
         const char *info[5] = {\"f0\", \"b2f_absent\", \"f0\", \"f0\", \"f0\"};\n",
        1,
    ),
];

/// The function names of the tables above, in order.
const NAMES: [&str; 5] = ["f0", "f1", "f2", "f3", "f4"];

/// The libraries, built once per process into a directory of their own (kept: loaded
/// libraries stay mapped, and the check links to them).
fn libs() -> &'static [TestLib] {
    static L: std::sync::OnceLock<Vec<TestLib>> = std::sync::OnceLock::new();
    L.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("b2f-fuzz-plugins-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("plugin build dir");
        let mut out = Vec::new();
        for (k, (src, defined)) in SOURCES.iter().enumerate() {
            let c = dir.join(format!("p{k}.c"));
            let so = dir.join(format!("p{k}.so"));
            std::fs::write(&c, src).expect("write plugin source");
            let built = std::process::Command::new(target_cc())
                .args(["-shared", "-fPIC", "-O0", "-o"])
                .arg(&so)
                .arg(&c)
                .stdin(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if !built {
                break;
            }
            out.push(TestLib {
                path: so,
                defined: *defined,
            });
        }
        if out.len() < SOURCES.len() {
            out.clear();
            for lib in ["libz.so.1", "libc.so.6"] {
                out.push(TestLib {
                    path: PathBuf::from(lib),
                    defined: 0,
                });
            }
        }
        out
    })
}

/// The C compiler that builds libraries this process can load: under a cross test (aarch64 under
/// qemu) the host's `cc` would build host objects, so the target's compiler comes first, named
/// as the cc crate names it (`CC_<arch>_unknown_linux_gnu`, which scripts/cross-aarch64.sh sets),
/// then `CC`, then `cc`. Under wine no compiler is reachable by these names and the stand-ins
/// below are used. (tests/common's `target_cc` reads `B2FRAME_TARGET_CC` first, the wine
/// stand-in compiler; this check is also built into the fuzz crate, which cannot use
/// tests/common, and builds no libraries under wine.)
fn target_cc() -> String {
    let target = format!("CC_{}_unknown_linux_gnu", std::env::consts::ARCH);
    let named = |v: &str| std::env::var(v).ok().filter(|s| !s.is_empty());
    let env = if cfg!(target_os = "linux") {
        named(&target).or_else(|| named("CC"))
    } else {
        None
    };
    env.unwrap_or_else(|| "cc".into())
}

fn scratch_dir() -> PathBuf {
    let t = std::thread::current().id();
    std::env::temp_dir().join(format!("b2f-fuzz-plugin-{}-{t:?}", std::process::id()))
}

fn nfunctions(kind: Kind) -> usize {
    match kind {
        Kind::Codec | Kind::Filter => 2,
        Kind::Tuner => 5,
    }
}

fn model_valid(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c == '_' || c.is_ascii_digit() || c.is_ascii_alphabetic())
}

fn check_names(name: &str, plugin_path: &str) {
    assert_eq!(
        dynamic::valid_name(name),
        model_valid(name),
        "valid_name({name:?})"
    );
    let file = dynamic::file_name(name);
    if cfg!(windows) {
        assert_eq!(file, format!("blosc2_{name}.dll"));
    } else {
        assert_eq!(file, format!("libblosc2_{name}.so"));
    }
    let c = dynamic::candidates(name, plugin_path);
    if !model_valid(name) {
        assert_eq!(c, Err(Error::InvalidParam), "candidates of an invalid name");
        return;
    }
    let c = c.expect("candidates of a valid name");
    let sep = if cfg!(windows) { ';' } else { ':' };
    let mut it = c.iter();
    for entry in plugin_path.split(sep).filter(|e| !e.is_empty()) {
        let p = Path::new(entry);
        let first = it.next().expect("a candidate for every entry");
        assert_eq!(
            first.file_name().and_then(|f| f.to_str()),
            Some(file.as_str()),
            "candidate {first:?} is not the plugin's file"
        );
        let below = first
            .strip_prefix(p)
            .unwrap_or_else(|_| panic!("candidate {first:?} outside entry {entry:?}"));
        if below.as_os_str().is_empty() {
            // The entry names the file itself.
            assert_eq!(first, p);
            continue;
        }
        assert_eq!(below, Path::new(&file));
        let second = it.next().expect("two candidates for a directory entry");
        let below = second
            .strip_prefix(p)
            .unwrap_or_else(|_| panic!("candidate {second:?} outside entry {entry:?}"));
        let parts: Vec<Component<'_>> = below.components().collect();
        let sub = format!("blosc2_{name}");
        assert_eq!(
            parts,
            [
                Component::Normal(sub.as_ref()),
                Component::Normal(file.as_ref())
            ],
            "second candidate {second:?} of entry {entry:?}"
        );
    }
    assert!(it.next().is_none(), "candidates beyond the listed entries");
}

fn check_libpath(output: &[u8]) {
    let got = dynamic::parse_libpath(output);
    let want = std::str::from_utf8(output).ok().and_then(|t| {
        t.split('\n')
            .map(str::trim)
            .find(|l| !l.is_empty())
            .map(PathBuf::from)
    });
    assert_eq!(got, want, "parse_libpath({output:?})");
    if let Some(p) = got {
        let s = p.to_str().expect("UTF-8 path");
        assert!(!s.is_empty() && !s.contains('\n') && s.trim() == s);
    }
}

fn kind_of(b: u8) -> Kind {
    match b & 3 {
        1 => Kind::Filter,
        2 => Kind::Tuner,
        _ => Kind::Codec,
    }
}

/// Runs one input; panics on a violated property. Returns how many test plugins loaded.
pub fn run(data: &[u8]) -> usize {
    let Some((&flags, rest)) = data.split_first() else {
        return 0;
    };
    let take = |r: &[u8]| -> (Vec<u8>, Vec<u8>) {
        match r.split_first() {
            Some((&n, r)) => {
                let (a, b) = r.split_at((n as usize).min(r.len()));
                (a.to_vec(), b.to_vec())
            }
            None => (Vec::new(), Vec::new()),
        }
    };
    let (name, rest) = take(rest);
    let (path, rest) = take(&rest);
    let name = String::from_utf8_lossy(&name).into_owned();
    let listed = String::from_utf8_lossy(&path).into_owned();
    let kind = kind_of(flags);

    check_names(&name, &listed);
    check_libpath(&rest);
    if !model_valid(&name) {
        assert_eq!(dynamic::load(&name, kind), Err(kind.load_error()));
        assert_eq!(dynamic::load(&name, kind), Err(kind.load_error()), "cached");
        dynamic::forget();
    }

    let dir = scratch_dir();
    let _ = std::fs::remove_dir_all(&dir);
    if std::fs::create_dir_all(&dir).is_err() {
        return 0;
    }
    let loaded = check_files(&dir, flags, kind, &name, &listed, &rest);
    let _ = std::fs::remove_dir_all(&dir);
    loaded
}

fn check_files(dir: &Path, flags: u8, kind: Kind, name: &str, listed: &str, bytes: &[u8]) -> usize {
    // An arbitrary file: never an ELF object (its first byte is not 0x7f).
    let junk = dir.join("junk.so");
    let first = if flags == 0x7f { 0 } else { flags };
    let mut content = vec![first];
    content.extend_from_slice(bytes);
    std::fs::write(&junk, &content).expect("write junk");
    assert_eq!(
        dynamic::load_from(&junk, kind),
        Err(kind.load_error()),
        "junk file"
    );
    assert_eq!(
        dynamic::load_from(&dir.join("absent.so"), kind),
        Err(kind.load_error())
    );
    assert_eq!(
        dynamic::load_from(dir, kind),
        Err(kind.load_error()),
        "a directory"
    );

    let libs = libs();
    let k = ((flags >> 2) & 7) as usize % libs.len();
    let lib = &libs[k];
    // The library under the input's name, found as the first candidate of a path listing a
    // directory of the scratch directory. One directory per library: dlopen matches a path it
    // has loaded before by name, so a path once loaded (and kept) stays that library.
    let name = if model_valid(name) && name.len() < 100 {
        name
    } else {
        "x"
    };
    let dir = dir.join(format!("lib{k}"));
    std::fs::create_dir_all(&dir).expect("library dir");
    let link = dir.join(dynamic::file_name(name));
    let path = if lib.path.is_absolute() && std::fs::hard_link(&lib.path, &link).is_ok() {
        if flags & 0x20 != 0 {
            let sep = if cfg!(windows) { ";" } else { ":" };
            let list = format!("{}{sep}{listed}", dir.display());
            let c = dynamic::candidates(name, &list).expect("candidates");
            assert_eq!(c.first(), Some(&link), "the listed directory comes first");
        }
        link
    } else {
        lib.path.clone()
    };
    let n = nfunctions(kind);
    let r = dynamic::load_from(&path, kind);
    if lib.defined < n {
        assert_eq!(r, Err(kind.load_error()), "{path:?} lacks a function");
        return 0;
    }
    let p = r.unwrap_or_else(|e| panic!("{path:?} as {kind:?}: {e:?}"));
    assert_eq!(p.path, path);
    let names: Vec<&str> = p.functions.iter().map(|f| f.0.as_str()).collect();
    assert_eq!(names, NAMES[..n], "the table's names");
    for i in 0..n {
        assert!(p.function(i).is_some_and(|s| !s.addr().is_null()));
    }
    assert!(p.function(n).is_none());
    // The same library again: the same addresses.
    let again = dynamic::load_from(&path, kind).expect("second load");
    assert_eq!(again.functions, p.functions);
    1
}
