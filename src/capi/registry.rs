//! `blosc2_register_codec`, `_filter` and `_tuner`, and the name lookups of the C API, over
//! the core's one table of codecs, filters and tuners ([`crate::registry`]): the rules
//! (ids, names, conflicts, when registrations are forgotten) live there. Here the C structs
//! are copied into the core's entries as their [`Foreign`] part, and names are handed back as
//! C strings: the table's own, NUL-terminated once, or the registrant's pointer (the reference
//! hands that back from `blosc2_compcode_to_compname`).

use super::boundary::{guard, non_null};
use super::globals;
use super::types::{
    blosc2_codec, blosc2_codec_decoder_cb, blosc2_codec_encoder_cb, blosc2_filter,
    blosc2_filter_backward_cb, blosc2_filter_forward_cb, blosc2_tuner,
};
use crate::error::{Error, Result};
use crate::registry::{self as table, Foreign, Registration};
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::{Arc, Mutex, OnceLock};

/// A registered codec: the C struct as given.
#[derive(Clone, Copy)]
pub(crate) struct CodecEntry {
    pub codec: blosc2_codec,
}

/// A registered filter: the C struct as given.
#[derive(Clone, Copy)]
pub(crate) struct FilterEntry {
    pub filter: blosc2_filter,
}

/// A registered tuner: the C struct as given.
#[derive(Clone, Copy)]
struct TunerEntry {
    #[allow(dead_code)]
    tuner: blosc2_tuner,
}

// SAFETY: the entries hold C function pointers and name pointers that the C contract makes
// valid process-wide while registered; they are only passed back to C.
unsafe impl Send for CodecEntry {}
// SAFETY: as above; entries are never mutated after registration.
unsafe impl Sync for CodecEntry {}
// SAFETY: as for `CodecEntry`.
unsafe impl Send for FilterEntry {}
// SAFETY: as for `CodecEntry`.
unsafe impl Sync for FilterEntry {}
// SAFETY: as for `CodecEntry`.
unsafe impl Send for TunerEntry {}
// SAFETY: as for `CodecEntry`.
unsafe impl Sync for TunerEntry {}

/// The table's name `s` as a static C string (made once per name; the table is finite).
fn static_cstr(s: &str) -> &'static CStr {
    static NAMES: OnceLock<Mutex<HashMap<String, &'static CStr>>> = OnceLock::new();
    let mut m = NAMES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(c) = m.get(s) {
        return c;
    }
    let c: &'static CStr = Box::leak(CString::new(s).unwrap_or_default().into_boxed_c_str());
    m.insert(s.to_string(), c);
    c
}

/// Copies a C name for the table (NULL → `None`).
///
/// # Safety
/// `p` must be NULL or NUL-terminated.
unsafe fn own_name(p: *const c_char) -> Option<Vec<u8>> {
    if p.is_null() {
        None
    } else {
        // SAFETY: non-null and NUL-terminated by this function's contract.
        Some(unsafe { CStr::from_ptr(p) }.to_bytes().to_vec())
    }
}

/// The registered codec with `compcode`, if any.
pub(crate) fn codec(compcode: u8) -> Option<CodecEntry> {
    let r = table::registered_codec(compcode)?;
    r.foreign.downcast_ref::<CodecEntry>().copied()
}

/// The registered filter with `id`, if any.
pub(crate) fn filter(id: u8) -> Option<FilterEntry> {
    let r = table::registered_filter(id)?;
    r.foreign.downcast_ref::<FilterEntry>().copied()
}

/// What the chunk engine calls for a codec beyond the compiled-in ones: a registered codec's
/// functions, where it gave them, else those of the plugin library named like the codec
/// (loaded on first use, as c-blosc2's `fill_codec` does for the dynamically loaded codecs it
/// registers, OpenHTJ2K 36 ... HTJ2K 40, and for codecs registered without functions).
/// `None`: no such codec (`CodecSupport` upstream); `Some(Err)`: its library cannot be loaded.
pub(crate) fn codec_functions(
    compcode: u8,
) -> Option<Result<(blosc2_codec_encoder_cb, blosc2_codec_decoder_cb)>> {
    let (name, given) = match codec(compcode) {
        Some(e) if e.codec.encoder.is_some() && e.codec.decoder.is_some() => {
            return Some(Ok((e.codec.encoder, e.codec.decoder)));
        }
        Some(e) => (c_name(e.codec.compname), Some(e.codec)),
        None => {
            let info = crate::codecs::table::codec(compcode)?;
            if info.origin != table::Origin::Dynamic {
                return None;
            }
            (Some(info.name.to_string()), None)
        }
    };
    let loaded = name
        .ok_or(Error::CodecSupport)
        .and_then(|n| crate::dynamic::load(&n, crate::dynamic::Kind::Codec));
    let plugin = match loaded {
        Ok(p) => p,
        Err(e) => {
            crate::env::trace("error", &format!("Could not load codec {compcode}."));
            return Some(Err(e));
        }
    };
    let (Some(enc), Some(dec)) = (plugin.function(0), plugin.function(1)) else {
        return Some(Err(Error::CodecSupport));
    };
    // SAFETY: the plugin contract: `info` names the plugin's encoder and decoder, which have
    // the signatures of `blosc2_codec_encoder_cb` / `_decoder_cb` (c-blosc2 assigns them to
    // those fields the same way).
    let (enc, dec): (blosc2_codec_encoder_cb, blosc2_codec_decoder_cb) = unsafe {
        (
            std::mem::transmute::<*mut c_void, blosc2_codec_encoder_cb>(enc.addr()),
            std::mem::transmute::<*mut c_void, blosc2_codec_decoder_cb>(dec.addr()),
        )
    };
    let given_enc = given.and_then(|c| c.encoder);
    let given_dec = given.and_then(|c| c.decoder);
    Some(Ok((given_enc.or(enc), given_dec.or(dec))))
}

/// [`codec_functions`] for filters (`FilterPipeline` when the library cannot be loaded).
pub(crate) fn filter_functions(
    id: u8,
) -> Option<Result<(blosc2_filter_forward_cb, blosc2_filter_backward_cb)>> {
    let e = filter(id)?;
    if e.filter.forward.is_some() && e.filter.backward.is_some() {
        return Some(Ok((e.filter.forward, e.filter.backward)));
    }
    let loaded = c_name(e.filter.name)
        .ok_or(Error::FilterPipeline)
        .and_then(|n| crate::dynamic::load(&n, crate::dynamic::Kind::Filter));
    let plugin = match loaded {
        Ok(p) => p,
        Err(err) => {
            crate::env::trace("error", &format!("Could not load filter {id}."));
            return Some(Err(err));
        }
    };
    let (Some(fwd), Some(bwd)) = (plugin.function(0), plugin.function(1)) else {
        return Some(Err(Error::FilterPipeline));
    };
    // SAFETY: the plugin contract: `info` names the forward and backward functions, with the
    // signatures of `blosc2_filter_forward_cb` / `_backward_cb`.
    let (fwd, bwd): (blosc2_filter_forward_cb, blosc2_filter_backward_cb) = unsafe {
        (
            std::mem::transmute::<*mut c_void, blosc2_filter_forward_cb>(fwd.addr()),
            std::mem::transmute::<*mut c_void, blosc2_filter_backward_cb>(bwd.addr()),
        )
    };
    Some(Ok((e.filter.forward.or(fwd), e.filter.backward.or(bwd))))
}

/// A registered C name as a plugin name (`None` for NULL or a name that is not UTF-8).
fn c_name(p: *const c_char) -> Option<String> {
    if p.is_null() {
        return None;
    }
    // SAFETY: registered names are NUL-terminated and stay valid while registered (the
    // contract of `blosc2_register_codec` / `_filter`).
    let n = unsafe { CStr::from_ptr(p) };
    n.to_str().ok().map(str::to_string)
}

/// Whether a user tuner with `id` is registered.
pub(crate) fn has_tuner(id: i32) -> bool {
    table::registered_tuner(id).is_some()
}

/// The name of the table's codec `compcode` as a C string: this build's codecs by their
/// table name, registered ones by the registrant's pointer.
fn codec_cname(compcode: u8) -> Option<*const c_char> {
    if let Some(e) = codec(compcode) {
        return Some(e.codec.compname as *const c_char);
    }
    let info = crate::codecs::table::codec(compcode)?;
    Some(static_cstr(&info.name).as_ptr())
}

/// `blosc2_compname_to_compcode`: -1 if unknown.
pub(crate) fn compname_to_compcode(name: &str) -> i32 {
    compname_bytes_to_compcode(name.as_bytes())
}

/// [`compname_to_compcode`] for a name given as bytes.
pub(crate) fn compname_bytes_to_compcode(name: &[u8]) -> i32 {
    crate::codecs::table::codec_id_by_name(name).map_or(-1, i32::from)
}

/// `blosc2_compcode_to_compname`: `(code, name)` with `(-1, NULL)` for an unknown compcode.
pub(crate) fn compcode_to_compname(compcode: i32) -> (i32, *const c_char) {
    u8::try_from(compcode)
        .ok()
        .and_then(codec_cname)
        .map_or((-1, std::ptr::null()), |p| (compcode, p))
}

/// The library name for a chunk's codec format code (flags bits 5-7), as
/// `blosc2_cbuffer_complib` reports it; registered codecs are matched by their `complib`.
pub(crate) fn complib_name(format: u8) -> *const c_char {
    if let Some(lib) = crate::codecs::table::format_library(format) {
        return static_cstr(lib).as_ptr();
    }
    let plugin = |i: &crate::codecs::CodecInfo| {
        matches!(i.origin, table::Origin::Plugin | table::Origin::Dynamic)
    };
    if let Some(info) = crate::codecs::table::codec(format).filter(plugin) {
        return static_cstr(&info.name).as_ptr();
    }
    table::registered_codecs()
        .into_iter()
        .filter_map(|r| r.foreign.downcast_ref::<CodecEntry>().copied())
        .find(|e| e.codec.complib == format)
        .map_or(std::ptr::null(), |e| e.codec.compname as *const c_char)
}

/// Registers a user codec (compcode 160..=255). 0 on success.
///
/// # Safety
/// `codec` must be NULL or point to a valid `blosc2_codec` whose `compname` is NUL-terminated
/// and, like the callbacks, stays valid while registered.
#[no_mangle]
pub unsafe extern "C" fn blosc2_register_codec(codec: *mut blosc2_codec) -> c_int {
    guard(|| {
        non_null(codec).map_err(|_| Error::InvalidParam)?;
        // SAFETY: non-null and valid by this function's contract.
        let c = unsafe { *codec };
        if i32::from(c.compcode) < table::USER_START {
            return Err(Error::CodecParam);
        }
        globals::ensure_init();
        table::register_codec(Registration {
            id: i32::from(c.compcode),
            // SAFETY: `compname` is NULL or NUL-terminated by this function's contract.
            name: unsafe { own_name(c.compname) },
            complib: c.complib,
            version: c.version,
            foreign: Arc::new(CodecEntry { codec: c }) as Foreign,
        })?;
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
    guard(|| {
        non_null(filter).map_err(|_| Error::InvalidParam)?;
        // SAFETY: non-null and valid by this function's contract.
        let f = unsafe { *filter };
        if i32::from(f.id) < table::USER_START {
            return Err(Error::Failure);
        }
        globals::ensure_init();
        table::register_filter(Registration {
            id: i32::from(f.id),
            // SAFETY: `name` is NULL or NUL-terminated by this function's contract.
            name: unsafe { own_name(f.name) },
            complib: 0,
            version: f.version,
            foreign: Arc::new(FilterEntry { filter: f }) as Foreign,
        })?;
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
    guard(|| {
        non_null(tuner).map_err(|_| Error::InvalidParam)?;
        // SAFETY: non-null and valid by this function's contract.
        let t = unsafe { *tuner };
        if t.id < table::USER_START {
            return Err(Error::Failure);
        }
        globals::ensure_init();
        table::register_tuner(Registration {
            id: t.id,
            // SAFETY: `name` is NULL or NUL-terminated by this function's contract.
            name: unsafe { own_name(t.name) },
            complib: 0,
            version: 0,
            foreign: Arc::new(TunerEntry { tuner: t }) as Foreign,
        })?;
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
