//! The C facade: the inbound FFI layer. It converts and checks C arguments, calls the safe core
//! (`blosc2-frame`), and mirrors results into the C structs callers read. Every `unsafe` block
//! of this crate lives here. The core has `unsafe` in three places only: its outbound calls
//! into the C codecs (`codecs::zstd`, `codecs::lz4`, `codecs::zfp`), the SIMD kernels of
//! `filters` and the operating-system calls of `sys`; its other modules forbid it. Every unsafe
//! block carries a `// SAFETY:` comment (clippy `undocumented_unsafe_blocks`, denied in
//! Cargo.toml).

pub mod b2nd;
/// cbindgen:ignore
pub mod b2nd_array;
pub mod blosc1;
pub mod boundary;
pub mod chunk;
pub mod codec;
pub mod filters;
pub mod fingerprint;
pub mod globals;
pub(crate) mod handle;
pub mod info;
pub mod io;
pub mod meta;
pub mod platform;
pub mod registry;
pub mod schunk;
pub mod types;
