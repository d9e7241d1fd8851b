//! `convert` (cframe ⇄ sframe, optional recompression) and `compact` (drop dead space).

use crate::{names, open, progress::Progress, CliResult, Failure};
use b2frame::chunk::{compress_vec, CParams};
use b2frame::frame::offsets::ChunkLoc;
use b2frame::frame::{Backing, Frame, Target};
use clap::Args;
use std::path::{Path, PathBuf};

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
    /// Recompress with these filters (comma-separated: shuffle, bitshuffle, delta, trunc_prec, nofilter)
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
    if h.vl_blocks {
        return Err(Failure::new(
            &a.src,
            "frames of VL-block chunks cannot be recompressed",
        ));
    }
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
        let ids = list
            .split(',')
            .map(|n| {
                names::filter_code(n.trim())
                    .ok_or_else(|| Failure::new(&a.src, format!("unknown filter {n:?}")))
            })
            .collect::<CliResult<Vec<u8>>>()?;
        if ids.len() > 6 {
            return Err(Failure::new(&a.src, "at most 6 filters"));
        }
        c.filters = [0; 6];
        c.filters_meta = [0; 6];
        // Filters run in slot order; the user's last filter goes to slot 5 like c-blosc2's default.
        let start = 6 - ids.len();
        c.filters[start..].copy_from_slice(&ids);
    }
    Ok(Some(c))
}

fn copy_into(src: &Frame, out: &mut Frame, cp: Option<&CParams>, spath: &Path) -> CliResult<()> {
    let h = src.header();
    if h.chunksize >= 0 {
        out.set_chunksize(h.chunksize)
            .map_err(|e| Failure::new(spath, format!("cannot set chunksize: {e}")))?;
    }
    let mut bar = Progress::new("convert", src.nchunks());
    for i in 0..src.nchunks() {
        let err = |e: b2frame::Error| Failure::new(spath, format!("chunk {i}: {e}"));
        let chunk = src.chunk(i).map_err(err)?;
        let special = matches!(src.locs()[i as usize], ChunkLoc::Special(_));
        match cp {
            Some(c) if !special => {
                let data = src.decompress_chunk(i).map_err(err)?;
                let new = compress_vec(c, &data).map_err(err)?;
                out.append_chunk(&new).map_err(err)?;
            }
            _ => {
                out.append_chunk(&chunk).map_err(err)?;
            }
        }
        bar.tick();
    }
    for (name, stored) in src.vlmetalayers() {
        out.add_vlmetalayer_raw(name, stored)
            .map_err(|e| Failure::new(spath, format!("vlmetalayer {name:?}: {e}")))?;
    }
    Ok(())
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
    let target = if a.sparse {
        Target::Sparse(&a.dst)
    } else {
        Target::File(&a.dst)
    };
    let result = Frame::new_like(&header, target)
        .map_err(|e| Failure::new(&a.dst, format!("cannot create: {e}")))
        .and_then(|mut out| copy_into(&src, &mut out, cp.as_ref(), &a.src));
    if result.is_err() {
        // Leave nothing half-written behind.
        let _ = if a.sparse {
            std::fs::remove_dir_all(&a.dst)
        } else {
            std::fs::remove_file(&a.dst)
        };
    }
    result
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
    let bytes = f
        .compacted()
        .map_err(|e| Failure::new(path, format!("cannot compact: {e}")))?;
    drop(f);
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".b2frame-compact.tmp");
    let tmp = PathBuf::from(tmp);
    let write = || -> std::io::Result<()> {
        use std::io::Write;
        let mut file = std::fs::File::create(&tmp)?;
        file.write_all(&bytes)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    };
    if let Err(e) = write() {
        let _ = std::fs::remove_file(&tmp);
        return Err(Failure::new(
            path,
            format!("cannot write compacted frame: {e}"),
        ));
    }
    println!("{}: {} -> {} bytes", path.display(), before, bytes.len());
    Ok(())
}
