//! `info` and `chunks`: what a frame holds, from its header, index, trailer and chunk headers.

use crate::{emit, msgpack_json, names, open, CliResult, Failure};
use blosc2_frame::chunk::header::ChunkHeader;
use blosc2_frame::frame::fingerprint::Verdict;
use blosc2_frame::frame::header::FrameType;
use blosc2_frame::frame::offsets::{Loc, SpecialKind};
use blosc2_frame::frame::{Backing, Frame};
use serde_json::{json, Value};
use std::path::Path;

/// Name of a special offset kind.
pub fn special_offset_name(k: SpecialKind) -> &'static str {
    match k {
        SpecialKind::Zeros => "zeros",
        SpecialKind::Nan => "nan",
        SpecialKind::Uninit => "uninit",
    }
}

/// A metalayer's content shown as structured data: b2nd/caterva decoded by the library, other
/// msgpack generically, anything else as hex.
fn metalayer_value(name: &str, content: &[u8]) -> Value {
    if name == "b2nd" || name == "caterva" {
        // caterva (the predecessor) metalayers end after the block shape.
        if let Ok((m, _)) = blosc2_frame::b2nd_meta::deserialize(content, name == "b2nd") {
            return json!({
                "ndim": m.ndim(),
                "shape": m.shape,
                "chunkshape": m.chunkshape,
                "blockshape": m.blockshape,
                "dtype_format": m.dtype_format,
                "dtype": m.dtype.as_ref().map(|d| String::from_utf8_lossy(d).into_owned()),
            });
        }
    }
    msgpack_json::decode(content).unwrap_or_else(|| json!({ "bin": msgpack_json::hex(content) }))
}

/// The whole `info` report as JSON (the text form is rendered from it).
pub fn report(f: &Frame, path: &Path, offset: u64) -> CliResult<Value> {
    let h = f.header();
    let sparse = matches!(f.backing(), Backing::Sparse(_));
    let mut specials = 0i64;
    let mut stored_cbytes = 0i64;
    let mut chunk_version = None;
    // A damaged chunk does not hide the rest of the report; `verify` says what is wrong.
    let mut unreadable = Vec::new();
    for (i, loc) in f.locs().iter().enumerate() {
        match loc.get() {
            Loc::Special(_) => specials += 1,
            Loc::Stored(_) => match f.chunk_info(i as i64) {
                Ok(ci) => {
                    stored_cbytes += i64::from(ci.cbytes);
                    if chunk_version.is_none() {
                        chunk_version = f.chunk(i as i64).ok().and_then(|c| c.first().copied());
                    }
                }
                Err(_) => unreadable.push(i),
            },
        }
    }
    let dead = if sparse {
        json!(0)
    } else if unreadable.is_empty() {
        json!(h.cbytes - stored_cbytes)
    } else {
        Value::Null
    };
    let metas: Vec<Value> = f
        .metalayers()
        .iter()
        .map(|(n, c)| json!({ "name": n, "size": c.len(), "content": metalayer_value(n, c) }))
        .collect();
    let mut vlmetas = Vec::new();
    for (n, stored) in f.vlmetalayers() {
        let mut v = json!({ "name": n, "stored_size": stored.len() });
        match f.vlmetalayer(n) {
            Ok(content) => {
                v["size"] = json!(content.len());
                if let Some(x) = msgpack_json::decode(&content) {
                    v["content"] = x;
                }
            }
            Err(e) => v["error"] = json!(e.to_string()),
        }
        vlmetas.push(v);
    }
    // The fingerprint's type and whether it matches (reads the whole frame).
    let fingerprint = match (f.fingerprint_slot(), f.verify_fingerprint()) {
        (Ok(slot), Ok(v)) => json!({
            "type": slot.fpt,
            "name": match slot.fpt { 0 => "none", 1 => "crc32", _ => "unknown" },
            "matches": match &v { Verdict::Unfingerprinted => Value::Null, v => json!(v.is_sound()) },
            "status": v.describe(),
        }),
        (_, Err(e)) | (Err(e), _) => json!({ "error": e.to_string() }),
    };
    let ratio = if h.cbytes > 0 {
        h.nbytes as f64 / h.cbytes as f64
    } else {
        0.0
    };
    Ok(json!({
        "path": path.display().to_string(),
        "kind": if sparse { "sframe" } else { "cframe" },
        "offset": offset,
        "frame_type": match h.frame_type { FrameType::Contiguous => "contiguous", FrameType::Sparse => "sparse" },
        "frame_format_version": h.version,
        "chunk_format_version": chunk_version,
        "variable_chunks": h.variable_chunks,
        "vl_blocks": h.vl_blocks,
        "header_len": h.header_len,
        "frame_len": h.frame_len,
        "nbytes": h.nbytes,
        "cbytes": h.cbytes,
        "ratio": (ratio * 1000.0).round() / 1000.0,
        "nchunks": f.nchunks(),
        "chunksize": h.chunksize,
        "typesize": h.typesize,
        "blocksize": h.blocksize,
        "codec": names::codec(h.compcode),
        "compcode": h.compcode,
        "clevel": h.clevel,
        "filters": names::pipeline(&h.filters, &h.filters_meta),
        "filter_ids": h.filters,
        "splitmode": h.splitmode,
        "use_dict": h.use_dict,
        "special_chunks": specials,
        "dead_bytes": dead,
        "unreadable_chunks": unreadable,
        "fingerprint": fingerprint,
        "metalayers": metas,
        "vlmetalayers": vlmetas,
    }))
}

fn text(v: &Value) -> String {
    let s = |k: &str| match &v[k] {
        Value::String(s) => s.clone(),
        Value::Null => "-".into(),
        x => x.to_string(),
    };
    let mut out = String::new();
    let mut line = |k: &str, val: String| out.push_str(&format!("{k:<22}{val}\n"));
    line("path", s("path"));
    let kind = if s("kind") == "sframe" {
        "sframe (sparse directory)".to_string()
    } else if v["offset"] != 0 {
        format!("cframe at offset {}", s("offset"))
    } else {
        "cframe (contiguous)".to_string()
    };
    line("kind", kind);
    line("frame format version", s("frame_format_version"));
    line("chunk format version", s("chunk_format_version"));
    if v["vl_blocks"] == true {
        line("chunks", "VL-block chunks (version 6)".into());
    }
    line("frame_len", s("frame_len"));
    line("nbytes", s("nbytes"));
    line("cbytes", s("cbytes"));
    line(
        "ratio",
        format!("{:.3}", v["ratio"].as_f64().unwrap_or(0.0)),
    );
    line("nchunks", s("nchunks"));
    let cs = if v["variable_chunks"] == true {
        format!("{} (variable)", s("chunksize"))
    } else {
        s("chunksize")
    };
    line("chunksize", cs);
    line("typesize", s("typesize"));
    line("blocksize", s("blocksize"));
    line("codec", format!("{} (clevel {})", s("codec"), s("clevel")));
    let filters: Vec<String> = v["filters"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    line(
        "filters",
        if filters.is_empty() {
            "none".into()
        } else {
            filters.join(",")
        },
    );
    let fp = &v["fingerprint"];
    line(
        "fingerprint",
        match (&fp["status"], &fp["error"]) {
            (Value::String(st), _) => st.clone(),
            (_, Value::String(e)) => format!("cannot check: {e}"),
            _ => "-".into(),
        },
    );
    line("special chunks", s("special_chunks"));
    line("dead bytes", s("dead_bytes"));
    if let Some(bad) = v["unreadable_chunks"].as_array().filter(|a| !a.is_empty()) {
        let list: Vec<String> = bad.iter().map(|x| x.to_string()).collect();
        line(
            "unreadable chunks",
            format!("{} (see b2frame verify)", list.join(", ")),
        );
    }
    let metas = v["metalayers"].as_array().cloned().unwrap_or_default();
    line("metalayers", metas.len().to_string());
    for m in &metas {
        out.push_str(&format!(
            "  {} ({} bytes): {}\n",
            m["name"].as_str().unwrap_or(""),
            m["size"],
            m["content"]
        ));
    }
    let vl = v["vlmetalayers"].as_array().cloned().unwrap_or_default();
    out.push_str(&format!("{:<22}{}\n", "vlmetalayers", vl.len()));
    for m in &vl {
        out.push_str(&format!(
            "  {} ({} bytes, {} stored)\n",
            m["name"].as_str().unwrap_or(""),
            m["size"],
            m["stored_size"]
        ));
    }
    out
}

pub fn info(path: &Path, offset: u64, as_json: bool) -> CliResult<()> {
    let f = open(path, offset)?;
    let v = report(&f, path, offset)?;
    if as_json {
        emit(&format!(
            "{}\n",
            serde_json::to_string_pretty(&v).unwrap_or_default()
        ))
    } else {
        emit(&text(&v))
    }
}

/// One `chunks` line; `None` fields print as `-`.
pub fn chunk_line(f: &Frame, i: i64) -> Result<String, String> {
    let loc = f
        .locs()
        .get(i as usize)
        .ok_or_else(|| format!("chunk {i}: no such chunk"))?;
    let sparse = matches!(f.backing(), Backing::Sparse(_));
    let where_ = match loc.get() {
        Loc::Special(_) => "-".to_string(),
        Loc::Stored(v) if sparse => format!("{v:08X}.chunk"),
        Loc::Stored(v) => v.to_string(),
    };
    let chunk = f.chunk(i).map_err(|e| e.to_string())?;
    let h = ChunkHeader::parse(&chunk).map_err(|e| e.to_string())?;
    let special = match loc.get() {
        Loc::Special(k) => format!("{}(offset)", special_offset_name(k)),
        _ => names::special(h.special_code()).to_string(),
    };
    let filters = names::pipeline(&h.filters, &h.filters_meta);
    // A VL-block chunk's header blocksize field holds its number of blocks.
    let vl = if h.is_vl() {
        format!(" ({} VL blocks)", h.blocksize)
    } else {
        String::new()
    };
    Ok(format!(
        "{i:>6} {where_:>14} {:>10} {:>10} {special:>13} v{:<2} {:<8} {}{vl}",
        h.cbytes,
        h.nbytes,
        h.version,
        names::chunk_codec(h.compformat(), h.udcompcode),
        if filters.is_empty() {
            "none".into()
        } else {
            filters.join(",")
        }
    ))
}

pub fn chunks(path: &Path, offset: u64) -> CliResult<()> {
    let f = open(path, offset)?;
    emit(&format!(
        "{:>6} {:>14} {:>10} {:>10} {:>13} {:<3} {:<8} filters\n",
        "chunk", "offset", "cbytes", "nbytes", "special", "ver", "codec"
    ))?;
    // Damaged chunks get a line saying so; the listing goes on and the status says it.
    let mut first_bad = None;
    let mut nbad = 0;
    for i in 0..f.nchunks() {
        match chunk_line(&f, i) {
            Ok(l) => emit(&format!("{l}\n"))?,
            Err(e) => {
                emit(&format!("{i:>6} unreadable: {e}\n"))?;
                nbad += 1;
                first_bad.get_or_insert(format!("chunk {i}: {e}"));
            }
        }
    }
    match first_bad {
        None => Ok(()),
        Some(first) => Err(Failure::new(
            path,
            format!("{first} ({nbad} unreadable chunk(s) in all)"),
        )),
    }
}
