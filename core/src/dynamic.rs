//! Dynamically loaded plugins: codecs, filters and tuners whose code lives in a separately
//! installed library, `libblosc2_<name>.so`, shipped by the `blosc2_<name>` Python packages
//! (`blosc2-htj2k`, `blosc2-j2k`, `blosc2-openzl`, `blosc2-grok`, `blosc2-openhtj2k`,
//! `blosc2-btune` on PyPI).
//!
//! c-blosc2 3.3.5 registers such codecs and tuners by name (OpenHTJ2K 36 ... HTJ2K 40, Btune
//! 32), and a program can register others with NULL functions; on first use it loads the
//! library and takes the functions from the library's `info` symbol, a struct of `char *`
//! naming them (`encoder`, `decoder`; `forward`, `backward`; `init`, `next_blocksize`,
//! `next_cparams`, `update`, `free`). We look for the library in this order:
//!
//! 1. the directories and files listed in `B2FRAME_PLUGIN_PATH` (`:`-separated, `;` on
//!    Windows): a file named `libblosc2_<name>.so`, or in a listed directory
//!    `libblosc2_<name>.so` or `blosc2_<name>/libblosc2_<name>.so` (so a `site-packages`
//!    directory can be listed as it is). This needs no Python process; it is ours.
//! 2. `libblosc2_<name>.so` on the system's library search path (c-blosc2's first try);
//! 3. what `python -c "import blosc2_<name>; blosc2_<name>.print_libpath()"` prints, then the
//!    same with `python3` (c-blosc2's fallback; run without a shell).
//!
//! A library that cannot be found or lacks a function gives an error (`CodecSupport` for
//! codecs, `FilterPipeline` for filters, `Failure` for tuners, as in c-blosc2) and a trace line
//! on stderr under `BLOSC_TRACE`, never a crash. The result is kept per name until
//! [`forget`] (the C API calls it with [`crate::registry::forget_registered`]): c-blosc2 tries
//! again at every block, which costs two Python processes per block when a plugin is missing.
//!
//! [`candidates`] and [`parse_libpath`] are pure functions of their inputs, for tests and
//! fuzzing; [`load_from`] loads one given file.

#![forbid(unsafe_code)]

use crate::env;
use crate::error::{Error, Result};
use crate::sys::dl::{Library, Symbol};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// The environment variable listing plugin libraries and the directories holding them.
pub const PLUGIN_PATH: &str = "B2FRAME_PLUGIN_PATH";

/// What kind of plugin: which functions its `info` table names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `encoder`, `decoder`.
    Codec,
    /// `forward`, `backward`.
    Filter,
    /// `init`, `next_blocksize`, `next_cparams`, `update`, `free`.
    Tuner,
}

impl Kind {
    /// How many function names the `info` table holds.
    fn nfunctions(self) -> usize {
        match self {
            Kind::Codec | Kind::Filter => 2,
            Kind::Tuner => 5,
        }
    }

    /// The error c-blosc2 returns when such a plugin cannot be loaded.
    pub fn load_error(self) -> Error {
        match self {
            Kind::Codec => Error::CodecSupport,
            Kind::Filter => Error::FilterPipeline,
            Kind::Tuner => Error::Failure,
        }
    }
}

/// A loaded plugin: the library file and the functions of its `info` table, in the table's
/// order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plugin {
    /// Where it was loaded from.
    pub path: PathBuf,
    /// The functions, named as in the table.
    pub functions: Vec<(String, Symbol)>,
}

impl Plugin {
    /// The `i`-th function of the table.
    pub fn function(&self, i: usize) -> Option<Symbol> {
        self.functions.get(i).map(|f| f.1)
    }
}

/// Whether `name` may name a plugin (letters, digits and `_`, not empty), as c-blosc2
/// requires: the name ends up in a file name and a Python command.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// The file name of plugin `name`'s library.
pub fn file_name(name: &str) -> String {
    if cfg!(windows) {
        format!("blosc2_{name}.dll")
    } else {
        format!("libblosc2_{name}.so")
    }
}

/// The files `B2FRAME_PLUGIN_PATH` (its value `plugin_path`) offers for plugin `name`, in
/// order (whether they exist is not checked). `InvalidParam` for a name that is not a plugin
/// name.
pub fn candidates(name: &str, plugin_path: &str) -> Result<Vec<PathBuf>> {
    if !valid_name(name) {
        return Err(Error::InvalidParam);
    }
    let sep = if cfg!(windows) { ';' } else { ':' };
    let file = file_name(name);
    let mut out = Vec::new();
    for entry in plugin_path.split(sep).filter(|e| !e.is_empty()) {
        let p = Path::new(entry);
        if p.file_name().and_then(|f| f.to_str()) == Some(file.as_str()) {
            out.push(p.to_path_buf());
        } else {
            out.push(p.join(&file));
            out.push(p.join(format!("blosc2_{name}")).join(&file));
        }
    }
    Ok(out)
}

/// The library path in the output of `print_libpath()` (the first non-empty line, without
/// surrounding blanks); `None` when there is none.
pub fn parse_libpath(output: &[u8]) -> Option<PathBuf> {
    let text = std::str::from_utf8(output).ok()?;
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    Some(PathBuf::from(line))
}

/// Asks Python where package `blosc2_<name>` keeps its library (`python`, then `python3`).
fn python_libpath(name: &str) -> Option<PathBuf> {
    for python in ["python", "python3"] {
        trace_info(&format!("Trying to get plugin path with {python}"));
        let code = format!("import blosc2_{name}; blosc2_{name}.print_libpath()");
        let out = std::process::Command::new(python)
            .args(["-c", &code])
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .output();
        match out {
            Ok(o) if o.status.success() => {
                if let Some(p) = parse_libpath(&o.stdout) {
                    return Some(p);
                }
            }
            _ => trace_info(&format!(
                "{python} could not give the path of blosc2_{name}"
            )),
        }
    }
    None
}

/// Loads the library at `path` as a plugin of `kind`: it must define `info` and every
/// function the table names.
pub fn load_from(path: &Path, kind: Kind) -> Result<Plugin> {
    let lib = Library::open(path).map_err(|e| {
        trace_error(&format!(
            "Attempt to load plugin in path '{}' failed: {e}",
            path.display()
        ));
        kind.load_error()
    })?;
    let Some(functions) = lib.info_functions(kind.nfunctions()) else {
        trace_error(&format!(
            "`info` or one of its functions cannot be loaded from plugin '{}'",
            path.display()
        ));
        return Err(kind.load_error());
    };
    lib.keep();
    Ok(Plugin {
        path: path.to_path_buf(),
        functions,
    })
}

/// Finds and loads plugin `name` of `kind` (see the module docs for where it is looked for).
fn locate_and_load(name: &str, kind: Kind) -> Result<Plugin> {
    if !valid_name(name) {
        trace_error(&format!("Invalid plugin name {name:?}"));
        return Err(kind.load_error());
    }
    let listed = std::env::var(PLUGIN_PATH).unwrap_or_default();
    for p in candidates(name, &listed)? {
        if p.is_file() {
            return load_from(&p, kind);
        }
    }
    let file = PathBuf::from(file_name(name));
    if let Ok(plugin) = Library::open(&file) {
        drop(plugin);
        trace_info(&format!("Found {} on the library path", file.display()));
        return load_from(&file, kind);
    }
    match python_libpath(name) {
        Some(p) => load_from(&p, kind),
        None => {
            trace_error(&format!(
                "Could not find plugin '{name}': not in {PLUGIN_PATH}, not on the library \
                 path, and python/python3 cannot import blosc2_{name}"
            ));
            Err(kind.load_error())
        }
    }
}

type Cache = HashMap<(Kind, String), Result<Plugin>>;

fn cache() -> &'static Mutex<Cache> {
    static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// Plugin `name` of `kind`, loaded on first use (and the result, success or failure, kept
/// until [`forget`]).
pub fn load(name: &str, kind: Kind) -> Result<Plugin> {
    let key = (kind, name.to_string());
    if let Some(r) = cache().lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return r.clone();
    }
    // Loaded outside the lock: a Python process may take a while, and a plugin's
    // initialisers must not wait for other threads' lookups.
    let r = locate_and_load(name, kind);
    let mut c = cache().lock().unwrap_or_else(|e| e.into_inner());
    c.entry(key).or_insert(r).clone()
}

/// Forgets the failed lookups, so the next use tries again (loaded libraries stay loaded:
/// their functions may be in use).
pub fn forget() {
    cache()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .retain(|_, r| r.is_ok());
}

fn trace_info(msg: &str) {
    env::trace("info", msg);
}

fn trace_error(msg: &str) {
    env::trace("error", msg);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_candidates() {
        assert!(valid_name("htj2k") && valid_name("open_zl2"));
        assert!(!valid_name("") && !valid_name("a/b") && !valid_name("x;rm") && !valid_name("é"));
        assert_eq!(candidates("../x", "/a"), Err(Error::InvalidParam));
        // The platform's list separator and library file name, so Windows checks its own.
        let (sep, file) = (if cfg!(windows) { ";" } else { ":" }, file_name("htj2k"));
        let list = format!("/site{sep}/opt/{file}{sep}{sep}");
        let c = candidates("htj2k", &list).unwrap();
        assert_eq!(
            c,
            [
                PathBuf::from("/site").join(&file),
                PathBuf::from("/site/blosc2_htj2k").join(&file),
                PathBuf::from(format!("/opt/{file}")),
            ]
        );
        assert!(candidates("j2k", "").unwrap().is_empty());
    }

    #[test]
    fn libpath_output() {
        assert_eq!(
            parse_libpath(b"/x/libblosc2_j2k.so"),
            Some(PathBuf::from("/x/libblosc2_j2k.so"))
        );
        assert_eq!(
            parse_libpath(b"\n  /y/l.so \nnoise\n"),
            Some(PathBuf::from("/y/l.so"))
        );
        assert_eq!(parse_libpath(b" \n"), None);
        assert_eq!(parse_libpath(&[0xff, 0xfe]), None);
    }

    #[test]
    fn a_missing_or_wrong_library_is_an_error() {
        let dir = crate::test_util::temp_dir("b2frame-dynamic-");
        let bogus = dir.path().join("libblosc2_bogus.so");
        std::fs::write(&bogus, b"not an ELF file").unwrap();
        assert_eq!(load_from(&bogus, Kind::Codec), Err(Error::CodecSupport));
        assert_eq!(
            load_from(&dir.path().join("none.so"), Kind::Filter),
            Err(Error::FilterPipeline)
        );
        // A real library without an `info` symbol: libc.
        #[cfg(target_os = "linux")]
        assert_eq!(
            load_from(Path::new("libc.so.6"), Kind::Tuner),
            Err(Error::Failure)
        );
        assert_eq!(load("no/such", Kind::Codec), Err(Error::CodecSupport));
    }
}
