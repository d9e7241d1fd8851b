//! The super-chunk behind an array and the views made from it ([`Shared`]), and the two
//! [`ChunkStore`]s through which the array algorithms reach it: [`Reading`] (a read lock held
//! for a whole read, so many threads read at once) and [`Writing`] (mutations one at a time,
//! each chunk compressed without a lock and committed under the write lock, so readers keep
//! going while a slice is compressed).
//!
//! Decompression goes through the super-chunk's own `&self` reads (their decoders are pooled
//! per super-chunk and their block masks belong to one call); compression through a
//! [`Compressor`] of the mutation.

#![forbid(unsafe_code)]

use super::array::ChunkStore;
use crate::chunk::{plugins::env_hooks, special, Compressor};
use crate::error::{Error, Result};
use crate::schunk::SChunk;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Locks a mutex, ignoring poisoning: every operation leaves the super-chunk consistent
/// (failed mutations change nothing), so a panic elsewhere does not make it unusable.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A super-chunk shared by an array and its views.
#[derive(Debug)]
pub(crate) struct Shared {
    sc: RwLock<SChunk>,
    /// Serialises mutations (a slice write reads, patches and writes back whole chunks).
    writer: Mutex<()>,
    /// Bumped by every shape change: a view made before one no longer matches the chunks.
    generation: AtomicU64,
}

impl Shared {
    pub(crate) fn new(sc: SChunk) -> Shared {
        Shared {
            sc: RwLock::new(sc),
            writer: Mutex::new(()),
            generation: AtomicU64::new(0),
        }
    }

    /// The super-chunk, taken out.
    pub(crate) fn into_schunk(self) -> SChunk {
        self.sc.into_inner().unwrap_or_else(|e| e.into_inner())
    }

    /// The super-chunk, read-locked.
    pub(crate) fn read(&self) -> RwLockReadGuard<'_, SChunk> {
        self.sc.read().unwrap_or_else(|e| e.into_inner())
    }

    /// The super-chunk, write-locked. Callers that change chunks hold [`Shared::writing`].
    pub(crate) fn write(&self) -> RwLockWriteGuard<'_, SChunk> {
        self.sc.write().unwrap_or_else(|e| e.into_inner())
    }

    /// The current shape generation.
    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// Records a shape change; returns the new generation.
    pub(crate) fn bump(&self) -> u64 {
        self.generation.fetch_add(1, Ordering::AcqRel) + 1
    }

    /// A store for reading: the read lock, held until the store is dropped.
    pub(crate) fn reading(&self) -> Result<Reading<'_>> {
        Ok(Reading { sc: self.read() })
    }

    /// A store for a mutation: the mutation lock, held until the store is dropped.
    pub(crate) fn writing(&self) -> Result<Writing<'_>> {
        let guard = lock(&self.writer);
        let comp = {
            let sc = self.read();
            let mut cp = *sc.cparams();
            cp.nthreads = cp.nthreads.max(1);
            Compressor::new(cp, env_hooks(sc.plugin_env()))?
        };
        Ok(Writing {
            shared: self,
            _guard: guard,
            comp,
        })
    }
}

/// Maps the errors of a block read of a chunk that is not what the geometry says to `Data`.
fn block_err(e: Error) -> Error {
    match e {
        Error::InvalidParam | Error::ReadBuffer | Error::InvalidHeader => Error::Data,
        e => e,
    }
}

fn read_blocks(
    sc: &SChunk,
    nchunk: i64,
    chunk_bytes: usize,
    nblocks: &[i64],
    scratch: &mut [u8],
    f: &mut dyn FnMut(usize, &[u8]) -> Result<()>,
) -> Result<bool> {
    sc.decode_blocks(nchunk, chunk_bytes, nblocks, scratch, f)
        .map_err(block_err)?;
    Ok(true)
}

/// Reads under the super-chunk's read lock.
pub(crate) struct Reading<'a> {
    sc: RwLockReadGuard<'a, SChunk>,
}

impl Reading<'_> {
    /// Gathers the items at the storage positions `coords` into `dst`.
    pub(crate) fn sparse(&self, coords: &[i64], dst: &mut [u8]) -> Result<()> {
        self.sc.get_sparse(coords, dst)
    }
}

impl ChunkStore for Reading<'_> {
    fn typesize(&self) -> i32 {
        self.sc.cparams().typesize
    }
    fn nchunks(&self) -> i64 {
        self.sc.nchunks()
    }
    fn nthreads(&self) -> i32 {
        i32::from(self.sc.dparams().nthreads)
    }
    fn read_chunk(&self, nchunk: i64, dst: &mut [u8]) -> Result<usize> {
        self.sc.decompress_chunk_into(nchunk, dst)
    }
    fn read_chunk_blocks(&self, nchunk: i64, skip: &[bool], dst: &mut [u8]) -> Result<usize> {
        self.sc.decompress_chunk_masked_into(nchunk, skip, dst)
    }
    fn read_blocks(
        &self,
        nchunk: i64,
        chunk_bytes: usize,
        nblocks: &[i64],
        scratch: &mut [u8],
        f: &mut dyn FnMut(usize, &[u8]) -> Result<()>,
    ) -> Result<bool> {
        read_blocks(&self.sc, nchunk, chunk_bytes, nblocks, scratch, f)
    }
    fn write_chunk(&mut self, _nchunk: i64, _src: &[u8]) -> Result<()> {
        Err(Error::Failure)
    }
    fn insert_zero_chunk(&mut self, _nchunk: i64, _nbytes: i32) -> Result<()> {
        Err(Error::Failure)
    }
    fn delete_chunk(&mut self, _nchunk: i64) -> Result<()> {
        Err(Error::Failure)
    }
}

/// A mutation: holds the mutation lock; reads take the read lock per chunk, commits the write
/// lock.
pub(crate) struct Writing<'a> {
    shared: &'a Shared,
    _guard: MutexGuard<'a, ()>,
    comp: Compressor,
}

impl Writing<'_> {
    /// The super-chunk, write-locked (metalayer updates; the mutation lock is held).
    pub(crate) fn schunk_mut(&self) -> RwLockWriteGuard<'_, SChunk> {
        self.shared.write()
    }

    /// Stores an already compressed chunk as chunk `nchunk`.
    pub(crate) fn update_raw(&mut self, nchunk: i64, chunk: &[u8]) -> Result<()> {
        self.shared.write().update_chunk(nchunk, chunk).map(|_| ())
    }
}

impl ChunkStore for Writing<'_> {
    fn typesize(&self) -> i32 {
        self.shared.read().cparams().typesize
    }
    fn nchunks(&self) -> i64 {
        self.shared.read().nchunks()
    }
    fn read_chunk(&self, nchunk: i64, dst: &mut [u8]) -> Result<usize> {
        self.shared.read().decompress_chunk_into(nchunk, dst)
    }
    fn write_chunk(&mut self, nchunk: i64, src: &[u8]) -> Result<()> {
        let room = src.len() + crate::chunk::header::EXTENDED_HEADER_LEN;
        let c = self.comp.compress_to_vec(src, room)?;
        if c.is_empty() {
            return Err(Error::WriteBuffer);
        }
        self.update_raw(nchunk, &c)
    }
    fn insert_zero_chunk(&mut self, nchunk: i64, nbytes: i32) -> Result<()> {
        let mut sc = self.shared.write();
        let mut c = [0u8; crate::chunk::header::EXTENDED_HEADER_LEN];
        let n = special::zeros(sc.cparams(), nbytes, &mut c)?;
        sc.insert_chunk(nchunk, &c[..n]).map(|_| ())
    }
    fn delete_chunk(&mut self, nchunk: i64) -> Result<()> {
        self.shared.write().delete_chunk(nchunk).map(|_| ())
    }
    fn commit_shape(&mut self, shape: &[i64]) -> Result<()> {
        let mut sc = self.shared.write();
        let Some((_, m)) = sc.metalayers().iter().find(|(n, _)| n == "b2nd") else {
            return Ok(());
        };
        let m = crate::b2nd_meta::with_shape(m, shape)?;
        sc.update_metalayer("b2nd", &m).map(|_| ())
    }
}
