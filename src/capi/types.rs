//! `#[repr(C)]` mirrors of c-blosc2 3.3's public types and constants, byte-identical to
//! `blosc2.h` (checked by the ABI test against the reference header).
#![allow(non_camel_case_types)]

use std::ffi::c_void;

/// Opaque `blosc2_context` (a compression or decompression context).
#[repr(C)]
pub struct blosc2_context {
    _private: [u8; 0],
}

/// Opaque `blosc2_prefilter_params` (full definition: being implemented).
#[repr(C)]
pub struct blosc2_prefilter_params {
    _private: [u8; 0],
}

/// Opaque `blosc2_postfilter_params` (full definition: being implemented).
#[repr(C)]
pub struct blosc2_postfilter_params {
    _private: [u8; 0],
}

/// `blosc2_prefilter_fn`.
pub type blosc2_prefilter_fn =
    Option<unsafe extern "C" fn(params: *mut blosc2_prefilter_params) -> i32>;
/// `blosc2_postfilter_fn`.
pub type blosc2_postfilter_fn =
    Option<unsafe extern "C" fn(params: *mut blosc2_postfilter_params) -> i32>;

/// `blosc2_cparams`: compression parameters (136 bytes on x86-64).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct blosc2_cparams {
    pub compcode: u8,
    pub compcode_meta: u8,
    pub clevel: u8,
    pub use_dict: i32,
    pub typesize: i32,
    pub nthreads: i16,
    pub blocksize: i32,
    pub splitmode: i32,
    pub schunk: *mut c_void,
    pub filters: [u8; 6],
    pub filters_meta: [u8; 6],
    pub prefilter: blosc2_prefilter_fn,
    pub preparams: *mut blosc2_prefilter_params,
    pub tuner_params: *mut c_void,
    pub tuner_id: i32,
    pub instr_codec: bool,
    pub codec_params: *mut c_void,
    pub filter_params: [*mut c_void; 6],
}

/// `blosc2_dparams`: decompression parameters (40 bytes on x86-64).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct blosc2_dparams {
    pub nthreads: i16,
    pub schunk: *mut c_void,
    pub postfilter: blosc2_postfilter_fn,
    pub postparams: *mut blosc2_postfilter_params,
    pub typesize: i32,
}

/// `BLOSC2_CPARAMS_DEFAULTS`.
pub const BLOSC2_CPARAMS_DEFAULTS: blosc2_cparams = blosc2_cparams {
    compcode: 0,
    compcode_meta: 0,
    clevel: 5,
    use_dict: 0,
    typesize: 8,
    nthreads: 1,
    blocksize: 0,
    splitmode: 4,
    schunk: std::ptr::null_mut(),
    filters: [0, 0, 0, 0, 0, 1],
    filters_meta: [0; 6],
    prefilter: None,
    preparams: std::ptr::null_mut(),
    tuner_params: std::ptr::null_mut(),
    tuner_id: 0,
    instr_codec: false,
    codec_params: std::ptr::null_mut(),
    filter_params: [std::ptr::null_mut(); 6],
};

/// `BLOSC2_DPARAMS_DEFAULTS`.
pub const BLOSC2_DPARAMS_DEFAULTS: blosc2_dparams = blosc2_dparams {
    nthreads: 1,
    schunk: std::ptr::null_mut(),
    postfilter: None,
    postparams: std::ptr::null_mut(),
    typesize: 8,
};

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    #[test]
    fn cparams_layout_matches_blosc2_h() {
        assert_eq!(size_of::<blosc2_cparams>(), 136);
        assert_eq!(offset_of!(blosc2_cparams, use_dict), 4);
        assert_eq!(offset_of!(blosc2_cparams, blocksize), 16);
        assert_eq!(offset_of!(blosc2_cparams, schunk), 24);
        assert_eq!(offset_of!(blosc2_cparams, filters), 32);
        assert_eq!(offset_of!(blosc2_cparams, prefilter), 48);
        assert_eq!(offset_of!(blosc2_cparams, tuner_id), 72);
        assert_eq!(offset_of!(blosc2_cparams, instr_codec), 76);
        assert_eq!(offset_of!(blosc2_cparams, filter_params), 88);
        assert_eq!(size_of::<blosc2_dparams>(), 40);
        assert_eq!(offset_of!(blosc2_dparams, typesize), 32);
    }
}
