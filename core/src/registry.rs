//! The run-time part of the one table of codecs, filters and tuners: the entries a program
//! registers (`blosc2_register_codec`, `_filter`, `_tuner` in the C API), and the rules they
//! follow. The static rows of this build are in [`crate::codecs::table`] and
//! [`crate::filters::table`] (with the lookups by id and by name, which read both parts) and,
//! for tuners, below. This module is at the bottom: the tables name it, it names none of them.
//!
//! Registration rules are c-blosc2 3.3.5's (verified against it): codecs need a compcode >=
//! 160 (else `CodecParam`), filters and tuners an id >= 160 (else `Failure`); registering an
//! id again under the same name succeeds and changes nothing, under another name fails
//! (`CodecParam` for codecs, `Failure` for the others); each table holds at most 255 entries.
//! [`forget_registered`] empties the run-time entries (the C API calls it when an init follows
//! a destroy, which is when c-blosc2 forgets them).
//!
//! A registered entry carries what its registrant needs to run it as an opaque
//! [`Foreign`] value (the C facade keeps the C struct there): the core never calls it itself.

#![forbid(unsafe_code)]

use crate::error::{Error, Result};
use std::any::Any;
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Where the code of a codec, filter or tuner comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Origin {
    /// Part of the format and compiled in (BloscLZ ... Zstd; shuffle ... trunc_prec; the
    /// built-in block-size tuner).
    BuiltIn,
    /// One of the plugins c-blosc2 registers at init, compiled in here (NDLZ, ZFP, NDCELL,
    /// NDMEAN, BYTEDELTA, INT_TRUNC).
    Plugin,
    /// Registered by name at init, its code in a separately installed library that is loaded
    /// on first use (the `blosc2_<name>` Python packages: OpenHTJ2K, Grok, OpenZL, J2K, HTJ2K,
    /// Btune).
    Dynamic,
    /// Registered at run time by the program (ids 160..=255).
    Registered,
}

/// What a registrant keeps with its entry (the C facade: the registered C struct).
pub type Foreign = Arc<dyn Any + Send + Sync>;

/// A codec, filter or tuner registered at run time.
#[derive(Clone)]
pub struct Registration {
    /// Its id (a compcode for codecs).
    pub id: i32,
    /// Its name as registered (bytes: C names need not be UTF-8); `None` for a NULL name.
    pub name: Option<Vec<u8>>,
    /// Codecs: the library code (`complib`); 0 for the others.
    pub complib: u8,
    /// Codecs: the format version written in chunk headers; filters: their version.
    pub version: u8,
    /// What the registrant needs to run it.
    pub foreign: Foreign,
}

impl std::fmt::Debug for Registration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registration")
            .field("id", &self.id)
            .field("name", &self.name.as_deref().map(String::from_utf8_lossy))
            .field("complib", &self.complib)
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

impl Registration {
    /// The name for display (empty for a NULL name, lossy for bytes that are not UTF-8).
    pub fn display_name(&self) -> String {
        self.name
            .as_deref()
            .map_or_else(String::new, |n| String::from_utf8_lossy(n).into_owned())
    }
}

/// First id a program may register (`BLOSC2_USER_REGISTERED_*_START`).
pub const USER_START: i32 = 160;
/// Entries each run-time table holds at most (c-blosc2's `UINT8_MAX`).
const CAPACITY: usize = 255;

#[derive(Default)]
struct Tables {
    codecs: Vec<Registration>,
    filters: Vec<Registration>,
    tuners: Vec<Registration>,
}

static TABLES: RwLock<Tables> = RwLock::new(Tables {
    codecs: Vec::new(),
    filters: Vec::new(),
    tuners: Vec::new(),
});

fn read() -> RwLockReadGuard<'static, Tables> {
    TABLES.read().unwrap_or_else(|e| e.into_inner())
}

fn write() -> RwLockWriteGuard<'static, Tables> {
    TABLES.write().unwrap_or_else(|e| e.into_inner())
}

/// Adds `r` to `list`, or confirms it when the id is there under the same name.
fn add(list: &mut Vec<Registration>, r: Registration, on_conflict: Error) -> Result<()> {
    if let Some(existing) = list.iter().find(|e| e.id == r.id) {
        return if existing.name == r.name {
            Ok(())
        } else {
            Err(on_conflict)
        };
    }
    if list.len() >= CAPACITY {
        return Err(Error::CodecSupport);
    }
    list.push(r);
    Ok(())
}

/// Registers a codec (compcode 160..=255; `CodecParam` below 160 or for an id taken under
/// another name).
pub fn register_codec(r: Registration) -> Result<()> {
    if r.id < USER_START || r.id > 255 {
        return Err(Error::CodecParam);
    }
    add(&mut write().codecs, r, Error::CodecParam)
}

/// Registers a filter (id 160..=255; `Failure` otherwise or for an id taken under another
/// name).
pub fn register_filter(r: Registration) -> Result<()> {
    if r.id < USER_START || r.id > 255 {
        return Err(Error::Failure);
    }
    add(&mut write().filters, r, Error::Failure)
}

/// Registers a tuner (id >= 160; `Failure` otherwise or for an id taken under another name).
pub fn register_tuner(r: Registration) -> Result<()> {
    if r.id < USER_START {
        return Err(Error::Failure);
    }
    add(&mut write().tuners, r, Error::Failure)
}

/// Forgets every run-time registration (a new initialised period of the C API).
pub fn forget_registered() {
    let mut t = write();
    t.codecs.clear();
    t.filters.clear();
    t.tuners.clear();
}

/// The registration of codec `id`, if a program registered one.
pub fn registered_codec(id: u8) -> Option<Registration> {
    read()
        .codecs
        .iter()
        .find(|r| r.id == i32::from(id))
        .cloned()
}

/// The codecs registered by the program, in registration order.
pub fn registered_codecs() -> Vec<Registration> {
    read().codecs.clone()
}

/// The registration of filter `id`, if a program registered one.
pub fn registered_filter(id: u8) -> Option<Registration> {
    read()
        .filters
        .iter()
        .find(|r| r.id == i32::from(id))
        .cloned()
}

/// The filters registered by the program, in registration order.
pub fn registered_filters() -> Vec<Registration> {
    read().filters.clone()
}

/// The first registered codec named exactly `name`.
pub fn registered_codec_named(name: &[u8]) -> Option<Registration> {
    let t = read();
    t.codecs
        .iter()
        .find(|r| r.name.as_deref() == Some(name))
        .cloned()
}

/// The first registered filter named exactly `name`.
pub fn registered_filter_named(name: &[u8]) -> Option<Registration> {
    let t = read();
    t.filters
        .iter()
        .find(|r| r.name.as_deref() == Some(name))
        .cloned()
}

/// The tuner with `id`: the built-in one (0), Btune (32, dynamic) or a registered one.
pub fn tuner(id: i32) -> Option<TunerInfo> {
    if let Some(t) = TUNERS.iter().find(|t| t.id == id) {
        return Some(t.clone());
    }
    read()
        .tuners
        .iter()
        .find(|r| r.id == id)
        .map(|r| TunerInfo {
            id,
            name: r.display_name().into(),
            origin: Origin::Registered,
        })
}

/// The registration of tuner `id`, if a program registered one.
pub fn registered_tuner(id: i32) -> Option<Registration> {
    read().tuners.iter().find(|r| r.id == id).cloned()
}

/// A block-size tuner of the table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TunerInfo {
    /// Its id (`BLOSC_STUNE` 0, `BLOSC_BTUNE` 32, 160.. registered).
    pub id: i32,
    /// Its name.
    pub name: std::borrow::Cow<'static, str>,
    /// Where its code comes from.
    pub origin: Origin,
}

/// This build's tuners: the built-in one, and Btune, which c-blosc2 registers by name and
/// loads from the `blosc2_btune` package.
const TUNERS: &[TunerInfo] = &[
    TunerInfo {
        id: 0,
        name: std::borrow::Cow::Borrowed("stune"),
        origin: Origin::BuiltIn,
    },
    TunerInfo {
        id: 32,
        name: std::borrow::Cow::Borrowed("btune"),
        origin: Origin::Dynamic,
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    /// One test owns the process-wide tables (tests run in parallel; no other core test
    /// registers anything).
    #[test]
    fn registration_rules() {
        let reg = |id: i32, name: &str| Registration {
            id,
            name: Some(name.as_bytes().to_vec()),
            complib: 200,
            version: 3,
            foreign: Arc::new(()),
        };
        assert_eq!(register_codec(reg(150, "x")), Err(Error::CodecParam));
        assert_eq!(register_codec(reg(201, "regtest")), Ok(()));
        assert_eq!(register_codec(reg(201, "regtest")), Ok(()));
        assert_eq!(register_codec(reg(201, "other")), Err(Error::CodecParam));
        assert_eq!(registered_codec_named(b"regtest").map(|r| r.id), Some(201));
        assert_eq!(registered_codec(201).map(|r| r.version), Some(3));
        let info = crate::codecs::Codec::Other(201).info().unwrap();
        assert_eq!(
            (info.name.as_ref(), info.version, info.origin),
            ("regtest", 3, Origin::Registered)
        );
        assert_eq!(
            crate::codecs::table::complib_name(200).as_deref(),
            Some("regtest")
        );
        assert_eq!("regtest".parse(), Ok(crate::codecs::Codec::Other(201)));
        assert_eq!(register_filter(reg(20, "f")), Err(Error::Failure));
        assert_eq!(register_filter(reg(222, "f")), Ok(()));
        assert_eq!(
            crate::filters::Filter::Other(222).info().map(|f| f.origin),
            Some(Origin::Registered)
        );
        assert_eq!(crate::filters::Filter::Other(223).info(), None);
        assert_eq!(register_tuner(reg(159, "t")), Err(Error::Failure));
        assert_eq!(register_tuner(reg(300, "t")), Ok(()));
        assert_eq!(tuner(300).map(|t| t.origin), Some(Origin::Registered));
        assert_eq!(tuner(32).map(|t| t.origin), Some(Origin::Dynamic));
        forget_registered();
        assert_eq!(registered_codec_named(b"regtest").map(|r| r.id), None);
        assert_eq!(crate::filters::Filter::Other(222).info(), None);
        assert_eq!(tuner(300), None);
    }
}
