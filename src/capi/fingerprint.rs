//! `b2frame_*` functions for frame fingerprints (docs/format/fingerprint.md): switching them off
//! and on, verify-on-open, and verifying a super-chunk's frame on demand.

use super::boundary::guard;
use super::handle::{read_op, Reader};
use super::types::blosc2_schunk;
use crate::error::Error;
use crate::frame::fingerprint::{self, Verdict};
use std::ffi::c_int;

/// `int b2frame_set_fingerprint(int on)`: whether frames written from now on carry a CRC-32
/// fingerprint (`fpt = 1`; default on, or `B2FRAME_FINGERPRINT`). Returns the previous setting
/// (1 on, 0 off).
#[no_mangle]
pub extern "C" fn b2frame_set_fingerprint(on: c_int) -> c_int {
    guard(|| Ok(i32::from(fingerprint::set_writes_enabled(on != 0))))
}

/// `int b2frame_set_verify_on_open(int on)`: whether every open (`blosc2_schunk_open`,
/// `blosc2_schunk_open_offset`, `blosc2_schunk_from_buffer`, ...) checks the frame's
/// fingerprint and fails with `BLOSC2_ERROR_INVALID_HEADER` on a mismatch (default off, or
/// `B2FRAME_VERIFY_ON_OPEN`). Returns the previous setting (1 on, 0 off).
#[no_mangle]
pub extern "C" fn b2frame_set_verify_on_open(on: c_int) -> c_int {
    guard(|| Ok(i32::from(fingerprint::set_verify_on_open(on != 0))))
}

/// `int b2frame_schunk_verify(blosc2_schunk *schunk)`: checks the fingerprint of the frame
/// behind `schunk` against its stored bytes (reads the whole frame). Returns 1 when it
/// matches, 0 when the frame has none (`fpt = 0`, as c-blosc2 writes),
/// `BLOSC2_ERROR_INVALID_HEADER` when it does not match (or the slot is damaged or of a type
/// b2frame cannot check), `BLOSC2_ERROR_FRAME_TYPE` for a super-chunk without a frame,
/// `BLOSC2_ERROR_NULL_POINTER` for NULL.
///
/// # Safety
/// `schunk` NULL or a live super-chunk.
#[no_mangle]
pub unsafe extern "C" fn b2frame_schunk_verify(schunk: *mut blosc2_schunk) -> c_int {
    guard(|| {
        let op = |r: &Reader<'_>| {
            let frame = r.h.core.frame().ok_or(Error::FrameType)?;
            match frame.verify_fingerprint()? {
                Verdict::Match => Ok(1),
                Verdict::Unfingerprinted => Ok(0),
                _ => Err(Error::InvalidHeader),
            }
        };
        // SAFETY: forwarded contract.
        unsafe { read_op(schunk, false, op) }
    })
}
