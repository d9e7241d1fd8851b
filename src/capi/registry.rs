//! Registries of user-defined codecs, filters and tuners (`blosc2_register_*`), and the
//! compcode/compname tables that consult them.
//!
//! The reference validates ids and names like this (verified against 3.3.5): codecs need a
//! compcode >= 160 (`BLOSC2_USER_REGISTERED_CODECS_START`, else `CODEC_PARAM`), filters and
//! tuners an id >= 160 (else `FAILURE`); re-registering an id under the same name succeeds and
//! changes nothing, under another name fails (`CODEC_PARAM` for codecs, `FAILURE` otherwise).
//! Registrations last until the next `blosc2_init` after a `blosc2_destroy`: the registry keeps
//! the initialised period (`globals::period`) its entries belong to, and one of an earlier
//! period is emptied before it is read or written.
//!
//! The C structs are copied; the name pointers are kept as given (the reference hands them back
//! from `blosc2_compcode_to_compname`), with an owned copy for comparisons.

use super::boundary::{guard_int, non_null};
use super::globals;
use super::types::{blosc2_codec, blosc2_filter, blosc2_tuner};
use crate::error::{Error, Result};
use std::ffi::{c_char, c_int, CStr, CString};
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

/// First id available to users (`BLOSC2_USER_REGISTERED_*_START`).
pub const USER_START: i32 = 160;
/// Entries each registry holds at most (the reference's `UINT8_MAX`).
const CAPACITY: usize = 255;

/// A registered codec.
#[derive(Clone, Copy)]
pub(crate) struct CodecEntry {
    pub codec: blosc2_codec,
}

/// A registered filter.
#[derive(Clone, Copy)]
pub(crate) struct FilterEntry {
    pub filter: blosc2_filter,
}

struct Named<T> {
    item: T,
    name: Option<CString>,
}

#[derive(Default)]
struct Registry {
    /// The initialised period the entries were registered in.
    period: u64,
    codecs: Vec<Named<CodecEntry>>,
    filters: Vec<Named<FilterEntry>>,
    tuners: Vec<Named<blosc2_tuner>>,
}

// SAFETY: the registry stores C function pointers and name pointers that the C contract makes
// valid process-wide; they are only passed back to C or read under the lock.
unsafe impl Send for Registry {}
// SAFETY: as above; all mutation goes through the RwLock.
unsafe impl Sync for Registry {}

static REGISTRY: RwLock<Registry> = RwLock::new(Registry {
    period: 0,
    codecs: Vec::new(),
    filters: Vec::new(),
    tuners: Vec::new(),
});

/// The registry of the current initialised period, for reading.
fn read() -> RwLockReadGuard<'static, Registry> {
    loop {
        let r = REGISTRY.read().unwrap_or_else(|e| e.into_inner());
        if r.period == globals::period() {
            return r;
        }
        // Registered in an earlier period: emptied by `write`, then read again (an init between
        // the two only makes it go round once more).
        drop(r);
        drop(write());
    }
}

/// The registry of the current initialised period, for writing: a registry of an earlier period
/// is emptied first (what c-blosc2 does when an init follows a destroy).
fn write() -> RwLockWriteGuard<'static, Registry> {
    let mut r = REGISTRY.write().unwrap_or_else(|e| e.into_inner());
    let now = globals::period();
    if r.period != now {
        r.codecs.clear();
        r.filters.clear();
        r.tuners.clear();
        r.period = now;
    }
    r
}

/// Copies a C name for comparisons (NULL → `None`).
///
/// # Safety
/// `p` must be NULL or NUL-terminated.
unsafe fn own_name(p: *const c_char) -> Option<CString> {
    if p.is_null() {
        None
    } else {
        // SAFETY: non-null and NUL-terminated by this function's contract.
        Some(unsafe { CStr::from_ptr(p) }.to_owned())
    }
}

/// Shared add-or-confirm logic: `Ok(true)` if added, `Ok(false)` if already there with the
/// same name, `Err(on_conflict)` if the id is taken under another name.
fn add<T>(
    list: &mut Vec<Named<T>>,
    id_of: impl Fn(&T) -> i32,
    item: T,
    name: Option<CString>,
    on_conflict: Error,
) -> Result<bool> {
    let id = id_of(&item);
    if let Some(existing) = list.iter().find(|e| id_of(&e.item) == id) {
        return if existing.name == name {
            Ok(false)
        } else {
            Err(on_conflict)
        };
    }
    if list.len() >= CAPACITY {
        return Err(Error::CodecSupport);
    }
    list.push(Named { item, name });
    Ok(true)
}

/// The registered codec with `compcode`, if any.
pub(crate) fn codec(compcode: u8) -> Option<CodecEntry> {
    read()
        .codecs
        .iter()
        .find(|c| c.item.codec.compcode == compcode)
        .map(|c| c.item)
}

/// The registered filter with `id`, if any.
pub(crate) fn filter(id: u8) -> Option<FilterEntry> {
    read()
        .filters
        .iter()
        .find(|f| f.item.filter.id == id)
        .map(|f| f.item)
}

/// Whether a user tuner with `id` is registered.
pub(crate) fn has_tuner(id: i32) -> bool {
    read().tuners.iter().any(|t| t.item.id == id)
}

/// Built-in codec names, NUL-terminated for C.
const BUILTIN_NAMES: [(i32, &CStr); 5] = [
    (0, c"blosclz"),
    (1, c"lz4"),
    (2, c"lz4hc"),
    (4, c"zlib"),
    (5, c"zstd"),
];

/// The plugin codecs c-blosc2 registers in `blosc2_init` (see `chunk::plugins::codecs`):
/// their names, NUL-terminated for C. Their complib is their compcode.
const PLUGIN_NAMES: [(i32, &CStr); 9] = [
    (32, c"ndlz"),
    (33, c"zfp_acc"),
    (34, c"zfp_prec"),
    (35, c"zfp_rate"),
    (36, c"openhtj2k"),
    (37, c"grok"),
    (38, c"openzl"),
    (39, c"j2k"),
    (40, c"htj2k"),
];

/// The registered plugin codecs of this build (the ZFP ones only with the `zfp` feature).
fn plugin_names() -> impl Iterator<Item = &'static (i32, &'static CStr)> {
    PLUGIN_NAMES
        .iter()
        .filter(|(c, _)| crate::chunk::plugins::is_plugin_codec(*c as u8))
}

/// The name of plugin codec `compcode`, if it is one this build registers.
pub(crate) fn plugin_codec_name(compcode: i32) -> Option<&'static CStr> {
    plugin_names()
        .find(|(c, _)| *c == compcode)
        .map(|(_, n)| *n)
}

/// `blosc2_compname_to_compcode`: built-in names, then the plugin codecs, then registered
/// codecs; -1 if unknown.
pub(crate) fn compname_to_compcode(name: &str) -> i32 {
    if let Some((code, _)) = BUILTIN_NAMES
        .iter()
        .chain(plugin_names())
        .find(|(_, n)| n.to_bytes() == name.as_bytes())
    {
        return *code;
    }
    read()
        .codecs
        .iter()
        .find(|c| c.name.as_deref().map(CStr::to_bytes) == Some(name.as_bytes()))
        .map_or(-1, |c| i32::from(c.item.codec.compcode))
}

/// `blosc2_compcode_to_compname`: `(code, name)` with `(-1, NULL)` for an unknown compcode.
pub(crate) fn compcode_to_compname(compcode: i32) -> (i32, *const c_char) {
    if let Some((code, name)) = BUILTIN_NAMES
        .iter()
        .chain(plugin_names())
        .find(|(c, _)| *c == compcode)
    {
        return (*code, name.as_ptr());
    }
    read()
        .codecs
        .iter()
        .find(|c| i32::from(c.item.codec.compcode) == compcode)
        .map_or((-1, std::ptr::null()), |c| {
            (compcode, c.item.codec.compname as *const c_char)
        })
}

/// The library name for a chunk's codec format code (flags bits 5-7), as
/// `blosc2_cbuffer_complib` reports it; registered codecs are matched by their `complib`.
pub(crate) fn complib_name(format: u8) -> *const c_char {
    let builtin: Option<&'static CStr> = match format {
        0 => Some(c"BloscLZ"),
        1 => Some(c"LZ4"),
        3 => Some(c"Zlib"),
        4 => Some(c"Zstd"),
        _ => None,
    };
    if let Some(n) = builtin.or_else(|| plugin_codec_name(i32::from(format))) {
        return n.as_ptr();
    }
    read()
        .codecs
        .iter()
        .find(|c| c.item.codec.complib == format)
        .map_or(std::ptr::null(), |c| c.item.codec.compname as *const c_char)
}

/// Registers a user codec (compcode 160..=255). 0 on success.
///
/// # Safety
/// `codec` must be NULL or point to a valid `blosc2_codec` whose `compname` is NUL-terminated
/// and, like the callbacks, stays valid while registered.
#[no_mangle]
pub unsafe extern "C" fn blosc2_register_codec(codec: *mut blosc2_codec) -> c_int {
    guard_int(|| {
        non_null(codec).map_err(|_| Error::InvalidParam)?;
        // SAFETY: non-null and valid by this function's contract.
        let c = unsafe { *codec };
        if i32::from(c.compcode) < USER_START {
            return Err(Error::CodecParam);
        }
        globals::ensure_init();
        // SAFETY: `compname` is NULL or NUL-terminated by this function's contract.
        let name = unsafe { own_name(c.compname) };
        let mut r = write();
        add(
            &mut r.codecs,
            |e: &CodecEntry| i32::from(e.codec.compcode),
            CodecEntry { codec: c },
            name,
            Error::CodecParam,
        )?;
        Ok(0)
    })
}

/// Registers a user filter (id 160..=255). 0 on success.
///
/// # Safety
/// `filter` must be NULL or point to a valid `blosc2_filter` whose `name` is NUL-terminated and,
/// like the callbacks, stays valid while registered.
#[no_mangle]
pub unsafe extern "C" fn blosc2_register_filter(filter: *mut blosc2_filter) -> c_int {
    guard_int(|| {
        non_null(filter).map_err(|_| Error::InvalidParam)?;
        // SAFETY: non-null and valid by this function's contract.
        let f = unsafe { *filter };
        if i32::from(f.id) < USER_START {
            return Err(Error::Failure);
        }
        globals::ensure_init();
        // SAFETY: `name` is NULL or NUL-terminated by this function's contract.
        let name = unsafe { own_name(f.name) };
        let mut r = write();
        add(
            &mut r.filters,
            |e: &FilterEntry| i32::from(e.filter.id),
            FilterEntry { filter: f },
            name,
            Error::Failure,
        )?;
        Ok(0)
    })
}

/// Registers a user tuner (id >= 160). Accepted and stored; b2frame's compressor keeps using
/// its built-in blocksize tuner.
///
/// # Safety
/// `tuner` must be NULL or point to a valid `blosc2_tuner` whose `name` is NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn blosc2_register_tuner(tuner: *mut blosc2_tuner) -> c_int {
    guard_int(|| {
        non_null(tuner).map_err(|_| Error::InvalidParam)?;
        // SAFETY: non-null and valid by this function's contract.
        let t = unsafe { *tuner };
        if t.id < USER_START {
            return Err(Error::Failure);
        }
        globals::ensure_init();
        // SAFETY: `name` is NULL or NUL-terminated by this function's contract.
        let name = unsafe { own_name(t.name) };
        let mut r = write();
        add(
            &mut r.tuners,
            |e: &blosc2_tuner| e.id,
            t,
            name,
            Error::Failure,
        )?;
        Ok(0)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registration_rules() {
        let _t = globals::tests::TEST_LOCK
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let mut c = blosc2_codec {
            compcode: 150,
            compname: c"regtest".as_ptr() as *mut c_char,
            complib: 200,
            version: 1,
            encoder: None,
            decoder: None,
        };
        // SAFETY: `c` is a valid codec with a static name.
        unsafe {
            assert_eq!(blosc2_register_codec(&mut c), -8);
            c.compcode = 201;
            assert_eq!(blosc2_register_codec(&mut c), 0);
            assert_eq!(blosc2_register_codec(&mut c), 0);
            c.compname = c"other".as_ptr() as *mut c_char;
            assert_eq!(blosc2_register_codec(&mut c), -8);
            assert_eq!(blosc2_register_codec(std::ptr::null_mut()), -12);
        }
        assert_eq!(compname_to_compcode("regtest"), 201);
        assert_eq!(compcode_to_compname(201).0, 201);
        assert_eq!(compcode_to_compname(3), (-1, std::ptr::null()));
        assert_eq!(compname_to_compcode("zstd"), 5);
        let mut f = blosc2_filter {
            id: 20,
            name: c"f".as_ptr() as *mut c_char,
            version: 1,
            forward: None,
            backward: None,
        };
        // SAFETY: `f` is a valid filter with a static name.
        unsafe {
            assert_eq!(blosc2_register_filter(&mut f), -1);
            f.id = 222;
            assert_eq!(blosc2_register_filter(&mut f), 0);
        }
        assert!(filter(222).is_some());
        assert!(filter(223).is_none());
        // A destroy keeps the registrations; the init after it starts with none, as in c-blosc2.
        globals::blosc2_destroy();
        assert_eq!(compname_to_compcode("regtest"), 201);
        assert!(filter(222).is_some());
        globals::blosc2_init();
        assert_eq!(compname_to_compcode("regtest"), -1);
        assert!(filter(222).is_none());
    }
}
