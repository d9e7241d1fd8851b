//! The C facade: the only FFI layer. It converts and checks C arguments, calls the safe core,
//! and mirrors results into the C structs callers read. Every `unsafe` block of the crate outside
//! the SIMD kernels lives here, each with a `// SAFETY:` line.

pub mod b2nd;
/// cbindgen:ignore
pub mod b2nd_array;
pub mod blosc1;
pub mod boundary;
pub mod chunk;
pub mod filters;
pub mod fingerprint;
pub mod globals;
pub(crate) mod handle;
pub mod info;
pub mod io;
pub mod meta;
pub mod registry;
pub mod schunk;
pub mod types;
