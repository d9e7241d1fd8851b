//! Pieces the chunk and super-chunk checks share. Whatever includes a check declares this file
//! as its `shared` module next to it (the checks use `super::shared`).
#![allow(dead_code)]
use b2frame::codecs;

/// One shared 2-thread pool: a pool per input would leave exiting worker threads behind each
/// iteration (LeakSanitizer reports their thread-locals) and spend the time starting threads.
pub fn pool2() -> std::sync::Arc<b2frame::pool::Pool> {
    static P: std::sync::OnceLock<std::sync::Arc<b2frame::pool::Pool>> = std::sync::OnceLock::new();
    P.get_or_init(|| b2frame::pool::Pool::new(2).expect("pool"))
        .clone()
}

/// The built-in codecs, which a parameter byte picks from.
pub const CODECS: [u8; 5] = [
    codecs::BLOSCLZ,
    codecs::LZ4,
    codecs::LZ4HC,
    codecs::ZLIB,
    codecs::ZSTD,
];
