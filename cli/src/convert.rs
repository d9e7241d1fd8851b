//! `convert` (cframe ⇄ sframe, optional recompression) and `compact` (drop dead space).

use crate::{emit, names, open, progress::Progress, CliResult, Failure};
use blosc2_frame::chunk::header::ChunkHeader;
use blosc2_frame::chunk::plugins::env_hooks;
use blosc2_frame::chunk::{CParams, Compressor, Hooks};
use blosc2_frame::chunk::{DParams, Decompressor};
use blosc2_frame::frame::{Backing, Frame, Target};
use clap::Args;
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Args)]
pub struct ConvertArgs {
    /// Source frame (cframe file or sframe directory)
    src: PathBuf,
    /// Destination (must not exist)
    dst: PathBuf,
    /// Byte offset of the source cframe inside its file
    #[arg(long, default_value_t = 0)]
    offset: u64,
    /// Write an sframe directory
    #[arg(long, conflicts_with = "contiguous")]
    sparse: bool,
    /// Write a cframe file (the default)
    #[arg(long)]
    contiguous: bool,
    /// Recompress with this codec (blosclz, lz4, lz4hc, zlib, zstd)
    #[arg(long)]
    codec: Option<String>,
    /// Recompress with this level (0-9)
    #[arg(long, value_parser = clap::value_parser!(u8).range(0..=9))]
    clevel: Option<u8>,
    /// Recompress with these filters, in pipeline order (comma-separated NAME or NAME:META:
    /// shuffle, bitshuffle, delta, trunc_prec:BITS, nofilter)
    #[arg(long)]
    filter: Option<String>,
}

/// The source's compression parameters with the requested overrides, or `None` when chunks
/// are to be copied unchanged.
fn recompression(a: &ConvertArgs, f: &Frame) -> CliResult<Option<CParams>> {
    if a.codec.is_none() && a.clevel.is_none() && a.filter.is_none() {
        return Ok(None);
    }
    let h = f.header();
    let mut c = CParams {
        compcode: h.compcode,
        compcode_meta: h.compcode_meta,
        clevel: h.clevel,
        use_dict: false,
        typesize: h.typesize,
        nthreads: 1,
        blocksize: h.blocksize,
        splitmode: i32::from(h.splitmode),
        filters: h.filters,
        filters_meta: h.filters_meta,
    };
    if let Some(name) = &a.codec {
        c.compcode = names::codec_code(name)
            .ok_or_else(|| Failure::new(&a.src, format!("unknown codec {name:?}")))?;
        c.compcode_meta = 0;
    }
    if let Some(l) = a.clevel {
        c.clevel = l;
    }
    if let Some(list) = &a.filter {
        let specs = list
            .split(',')
            .map(|n| {
                names::filter_spec(n.trim())
                    .ok_or_else(|| Failure::new(&a.src, format!("unknown filter {n:?}")))
            })
            .collect::<CliResult<Vec<(u8, u8)>>>()?;
        if specs.len() > 6 {
            return Err(Failure::new(&a.src, "at most 6 filters"));
        }
        c.filters = [0; 6];
        c.filters_meta = [0; 6];
        // Filters run in slot order; the user's last filter goes to slot 5 like c-blosc2's default.
        let start = 6 - specs.len();
        for (k, (id, meta)) in specs.into_iter().enumerate() {
            c.filters[start + k] = id;
            c.filters_meta[start + k] = meta;
        }
    }
    if c.filters.contains(&TRUNC_PREC) && c.typesize != 4 && c.typesize != 8 {
        return Err(Failure::new(
            &a.src,
            format!(
                "trunc_prec works on 4- or 8-byte floats; the frame's typesize is {}",
                c.typesize
            ),
        ));
    }
    Ok(Some(c))
}

const DELTA: u8 = 3;
const TRUNC_PREC: u8 = 4;

/// Worst-case size of a VL-block chunk over `blocks`: the extended header, one bstart and one
/// block-size word per block, every block stored raw, plus slack for a codec's framing.
fn vl_bound(blocks: &[Vec<u8>]) -> usize {
    let data: usize = blocks.iter().map(Vec::len).sum();
    data + 32 * (blocks.len() + 2) + 64
}

/// Chunk `chunk` recompressed with `c`: a VL-block chunk block by block (each block is
/// decoded on its own and the new chunk has the same blocks, as `blosc2_vlcompress_ctx` makes
/// them), a regular chunk as a whole. c-blosc2's `blosc2_schunk_copy` copies VL-block chunks
/// unchanged instead; here the requested codec, level and filters apply to them too.
/// `hooks` describe the super-chunk to the plugin codecs and filters.
fn recompress(c: &CParams, chunk: &[u8], hooks: &Arc<dyn Hooks>) -> blosc2_frame::Result<Vec<u8>> {
    let h = ChunkHeader::parse(chunk)?;
    let mut d = Decompressor::new(DParams::default(), hooks.clone())?;
    let mut comp = Compressor::new(*c, hooks.clone())?;
    if !h.is_vl() {
        let mut buf = vec![0u8; h.nbytes.max(0) as usize];
        let n = d.decompress(chunk, &mut buf)?;
        buf.truncate(n);
        let mut dst = vec![0u8; buf.len() + blosc2_frame::chunk::header::EXTENDED_HEADER_LEN];
        let n = comp.compress(&buf, &mut dst)?;
        if n == 0 {
            return Err(blosc2_frame::Error::WriteBuffer);
        }
        dst.truncate(n);
        return Ok(dst);
    }
    let blocks = d.vldecompress(chunk)?;
    let srcs: Vec<&[u8]> = blocks.iter().map(Vec::as_slice).collect();
    let mut dst = vec![0u8; vl_bound(&blocks)];
    let n = comp.vlcompress(&srcs, &mut dst)?;
    if n == 0 {
        return Err(blosc2_frame::Error::WriteBuffer);
    }
    dst.truncate(n);
    Ok(dst)
}

/// Whether chunk `i` of `src` (as fetched: `chunk`) holds no compressed data: a special offset,
/// or a stored zeros/NaN/value/uninit chunk. Those are copied as they are.
fn is_special(src: &Frame, i: i64, chunk: &[u8]) -> blosc2_frame::Result<bool> {
    Ok(!src.locs().get(i as usize).is_some_and(|l| l.is_stored())
        || ChunkHeader::parse(chunk)?.special_code() != 0)
}

/// `src`'s chunks (recompressed with `cp` when given) and vlmetalayers appended to the empty
/// frame `out` (an sframe being built).
fn copy_into(src: &Frame, out: &mut Frame, cp: Option<&CParams>, spath: &Path) -> CliResult<()> {
    let h = src.header();
    if h.chunksize >= 0 {
        out.set_chunksize(h.chunksize)
            .map_err(|e| Failure::new(spath, format!("cannot set chunksize: {e}")))?;
    }
    let hooks = env_hooks(crate::verify::plugin_env(src));
    let mut bar = Progress::new("convert", src.nchunks());
    // One transaction: the new directory's index is written once, not after every chunk.
    let mut failed: Option<Failure> = None;
    // The chunk being appended when the frame refuses one.
    let mut at = 0;
    out.append_chunks(src.nchunks(), |i| {
        at = i;
        let err = |e: blosc2_frame::Error| Failure::new(spath, format!("chunk {i}: {e}"));
        let r = src.chunk(i).and_then(|chunk| match cp {
            Some(c) if !is_special(src, i, &chunk)? => {
                recompress(c, &chunk, &hooks).map(std::borrow::Cow::Owned)
            }
            _ => Ok(chunk),
        });
        bar.tick();
        r.inspect_err(|&e| {
            failed.get_or_insert(err(e));
        })
    })
    .map_err(|e| {
        failed
            .take()
            .unwrap_or_else(|| Failure::new(spath, format!("chunk {at}: {e}")))
    })?;
    for (name, stored) in src.vlmetalayers() {
        out.add_vlmetalayer_raw(name, stored)
            .map_err(|e| Failure::new(spath, format!("vlmetalayer {name:?}: {e}")))?;
    }
    Ok(())
}

/// `src` (chunks recompressed with `cp` when given) as a new cframe file `dst` with `header`:
/// streamed chunk by chunk into a temporary file next to `dst` (a frame larger than memory
/// converts too; the header is written last), renamed into place once complete (synced first
/// in durable mode): a crash leaves no file or the complete one. The bytes are those of a
/// frame made by `Frame::new_like(header)` filled with the same chunks and vlmetalayers.
fn stream_into_file(
    src: &Frame,
    header: &blosc2_frame::frame::header::FrameHeader,
    cp: Option<&CParams>,
    spath: &Path,
    dst: &Path,
) -> CliResult<()> {
    let hooks = env_hooks(crate::verify::plugin_env(src));
    let mut bar = Progress::new("convert", src.nchunks());
    let mut header = header.clone();
    header.chunksize = header.chunksize.max(-1);
    // The first failure, with its message; the library's own error otherwise.
    let mut failed: Option<Failure> = None;
    let mut lib_err = None;
    let r = blosc2_frame::frame::record::publish_seekable(dst, true, false, |w| {
        src.write_converted(&header, w, |i, chunk| {
            let err = |e: blosc2_frame::Error| Failure::new(spath, format!("chunk {i}: {e}"));
            let new = match cp {
                Some(c) => {
                    let special = is_special(src, i, chunk).inspect_err(|&e| {
                        failed.get_or_insert(err(e));
                    })?;
                    if special {
                        None
                    } else {
                        Some(recompress(c, chunk, &hooks).inspect_err(|&e| {
                            failed.get_or_insert(err(e));
                        })?)
                    }
                }
                None => None,
            };
            bar.tick();
            Ok(new)
        })
        .map(drop)
        .map_err(|e| {
            lib_err = Some(e);
            std::io::Error::other("conversion failed")
        })
    });
    r.map_err(|e| match (failed, lib_err) {
        (Some(f), _) => f,
        (None, Some(le)) => Failure::new(dst, format!("cannot write: {le}")),
        (None, None) => Failure::new(dst, format!("cannot write: {e}")),
    })
}

pub fn convert(a: &ConvertArgs) -> CliResult<()> {
    let src = open(&a.src, a.offset)?;
    if a.dst.exists() {
        return Err(Failure::new(
            &a.dst,
            "destination exists; refusing to overwrite",
        ));
    }
    let cp = recompression(a, &src)?;
    if cp.is_some_and(|c| c.filters.contains(&DELTA)) && src.header().vl_blocks {
        // Our VL-block chunks with DELTA are byte-identical to c-blosc2's, but c-blosc2 3.3.5
        // itself decodes them wrongly except in single-threaded blosc2_vldecompress_ctx.
        eprintln!(
            "b2frame: {}: warning: c-blosc2 3.3.5 misreads VL blocks filtered with delta \
             (blosc2_schunk_get_vlblock, multi-threaded vldecompress)",
            a.dst.display()
        );
    }
    let mut header = src.header().clone();
    if let Some(c) = &cp {
        header.compcode = c.compcode;
        header.udcodec = c.compcode;
        header.compcode_meta = c.compcode_meta;
        header.clevel = c.clevel;
        header.filters = c.filters;
        header.filters_meta = c.filters_meta;
        header.use_dict = false;
    }
    probe_create(&a.dst, a.sparse)?;
    if !a.sparse {
        return stream_into_file(&src, &header, cp.as_ref(), &a.src, &a.dst);
    }
    // Built in a temporary directory renamed into place: a crash leaves no directory or the
    // complete sframe; nothing half-written is left behind on failure either.
    blosc2_frame::frame::record::publish_dir(
        &a.dst,
        |tmp| {
            let mut out = Frame::new_like(&header, Target::Sparse(tmp))
                .map_err(|e| Failure::new(&a.dst, format!("cannot create: {e}")))?;
            copy_into(&src, &mut out, cp.as_ref(), &a.src)
        },
        |e| Failure::new(&a.dst, format!("cannot write: {e}")),
    )
}

/// Creates and removes `dst` once, so that a destination that cannot be created is reported
/// with the operating system's reason (the library only says "File open failure").
fn probe_create(dst: &Path, dir: bool) -> CliResult<()> {
    let r = if dir {
        std::fs::create_dir(dst).and_then(|_| std::fs::remove_dir(dst))
    } else {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(dst)
            .and_then(|_| std::fs::remove_file(dst))
    };
    r.map_err(|e| Failure::new(dst, format!("cannot create: {e}")))
}

pub fn compact(path: &Path) -> CliResult<()> {
    let f = open(path, 0)?;
    if matches!(f.backing(), Backing::Sparse(_)) {
        return Err(Failure::new(
            path,
            "compact rewrites cframe files; an sframe has no dead space (use convert to make a cframe)",
        ));
    }
    let before = f.header().frame_len;
    // Streamed into a temporary file next to it chunk by chunk (a frame larger than memory
    // compacts too), synced, then renamed over the original: a crash leaves the old file or
    // the compacted one (docs/durability.md, "Whole-file calls").
    // The source is closed before the rename: Windows refuses to rename over a file that is
    // open without FILE_SHARE_DELETE semantics for renames (wine always, older Windows too).
    let mut failed = None;
    let mut after = 0;
    let mut src = Some(f);
    blosc2_frame::frame::record::publish_with(path, false, true, |w| {
        let f = src
            .take()
            .ok_or_else(|| std::io::Error::other("no source"))?;
        after = f.write_compacted(w).map_err(|e| {
            failed = Some(format!("cannot compact: {e}"));
            std::io::Error::other("compaction failed")
        })?;
        drop(f);
        Ok(())
    })
    .map_err(|e| {
        Failure::new(
            path,
            failed.unwrap_or_else(|| format!("cannot write compacted frame: {e}")),
        )
    })?;
    emit(&format!(
        "{}: {} -> {} bytes\n",
        path.display(),
        before,
        after
    ))
}

/// `recover SRC DST`: salvages the cframe at `offset` of `src` into the new file `dst` and says
/// how, and what could not be kept.
pub fn recover(src: &Path, offset: u64, dst: &Path) -> CliResult<()> {
    use blosc2_frame::frame::recover::recover_cframe;
    if dst.exists() {
        return Err(Failure::new(
            dst,
            "destination exists; refusing to overwrite",
        ));
    }
    if src.is_dir() {
        let (method, notes) = blosc2_frame::frame::recover::recover_sframe(src, dst)
            .map_err(|e| Failure::new(dst, format!("cannot salvage: {e}")))?;
        return emit(&recovered(dst, method, &notes));
    }
    let bytes = std::fs::read(src).map_err(|e| Failure::new(src, format!("cannot read: {e}")))?;
    let from = usize::try_from(offset)
        .ok()
        .filter(|&o| o <= bytes.len())
        .ok_or_else(|| Failure::new(src, "offset past the end of the file"))?;
    let r = recover_cframe(&bytes[from..])
        .map_err(|e| Failure::new(src, format!("nothing to salvage: {e}")))?;
    blosc2_frame::frame::record::publish_file(dst, &r.cframe, true)
        .map_err(|e| Failure::new(dst, format!("cannot write: {e}")))?;
    emit(&recovered(dst, r.method, &r.notes))
}

/// What `recover` reports: how the frame was salvaged, then one line per note.
fn recovered(dst: &Path, method: blosc2_frame::frame::recover::Method, notes: &[String]) -> String {
    use blosc2_frame::frame::recover::Method;
    let how = match method {
        Method::Intact => "the frame opens as it is; copied".to_string(),
        Method::Earlier(len) => format!("kept the last consistent state on disk (frame_len {len})"),
        Method::Rebuilt => "rebuilt from the intact chunks".to_string(),
        Method::IndexKept => {
            "kept the offsets index of the torn index file (header and trailer rebuilt)".to_string()
        }
    };
    let mut text = format!("{}: {how}\n", dst.display());
    for n in notes {
        text.push_str(&format!("  {n}\n"));
    }
    text
}
