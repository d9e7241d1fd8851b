//! The Rust mirrors in `b2frame::capi::types` against the reference c-blosc2 3.3.5 headers:
//! tests/abi/abi_dump.c is compiled against the reference `blosc2.h` and run, and every struct
//! size, field offset and size, constant and default value it prints must equal the Rust one.
//! (scripts/abi-check.sh does the same for our C headers.)

use crate::common;

use b2frame::capi::b2nd_array::{b2nd_array_t, chunk_cache_s};
use b2frame::capi::types::*;
use std::collections::BTreeMap;
use std::ffi::CStr;
use std::mem::{offset_of, size_of};
use std::process::Command;

/// Output of abi_dump.c built against the reference headers, one fact per line (built once).
fn reference_dump() -> Vec<String> {
    static DUMP: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    DUMP.get_or_init(build_and_run_dump).clone()
}

fn build_and_run_dump() -> Vec<String> {
    let lib = common::reference::reference_path();
    let include = lib.parent().unwrap().parent().unwrap().join("include");
    assert!(
        include.join("blosc2.h").exists(),
        "reference headers missing at {include:?}"
    );
    // Removed when this returns (see `common::scratch`).
    let dir = common::scratch::dir("b2frame-abi-dump-");
    let exe = dir.join("abi_dump");
    // Compiled for the target and run through its runner, so a cross-run compares the target's
    // C layouts (not the host's) with the Rust ones.
    let cc = common::target_cc();
    let status = Command::new(&cc)
        .args(["-std=gnu11", "-O1", "-w", "-I"])
        .arg(&include)
        // One string: `Path::join` would add a `\` on Windows, where this Unix path goes to the
        // Linux cross compiler (scripts/windows/unixrun.c).
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/abi/abi_dump.c"))
        .arg("-o")
        .arg(&exe)
        .arg("-Wl,--unresolved-symbols=ignore-all")
        .status()
        .expect("a C compiler is needed for this test");
    assert!(
        status.success(),
        "building abi_dump.c against the reference failed"
    );
    let out = common::target_command(&exe).output().expect("run abi_dump");
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

/// `"T.f" -> (offset, size)` and `"T" -> size` for the Rust types.
macro_rules! layout {
    ($map:ident, $t:ident { $($f:ident),* $(,)? }) => {{
        $map.insert(stringify!($t).to_string(), (size_of::<$t>(), usize::MAX));
        // SAFETY: every field of these structs is valid when zeroed (integers, bool false,
        // NULL pointers, None callbacks).
        let v: Box<$t> = Box::new(unsafe { std::mem::zeroed() });
        $(
            $map.insert(
                format!("{}.{}", stringify!($t), stringify!($f)),
                (offset_of!($t, $f), std::mem::size_of_val(&v.$f)),
            );
        )*
    }};
}

fn rust_layouts() -> BTreeMap<String, (usize, usize)> {
    let mut m = BTreeMap::new();
    layout!(
        m,
        blosc2_instr {
            cratio,
            cspeed,
            filter_speed,
            flags
        }
    );
    layout!(
        m,
        blosc2_io_cb {
            id,
            name,
            is_allocation_necessary,
            open,
            close,
            size,
            write,
            read,
            truncate,
            destroy
        }
    );
    layout!(m, blosc2_io { id, name, params });
    layout!(
        m,
        blosc2_tuner {
            init,
            next_blocksize,
            next_cparams,
            update,
            free,
            id,
            name
        }
    );
    layout!(
        m,
        blosc2_prefilter_params {
            user_data,
            input,
            output,
            output_size,
            output_typesize,
            output_offset,
            nchunk,
            nblock,
            tid,
            ttmp,
            ttmp_nbytes,
            ctx,
            output_is_disposable
        }
    );
    layout!(
        m,
        blosc2_postfilter_params {
            user_data,
            input,
            output,
            size,
            typesize,
            offset,
            nchunk,
            nblock,
            tid,
            ttmp,
            ttmp_nbytes,
            ctx
        }
    );
    layout!(
        m,
        blosc2_cparams {
            compcode,
            compcode_meta,
            clevel,
            use_dict,
            typesize,
            nthreads,
            blocksize,
            splitmode,
            schunk,
            filters,
            filters_meta,
            prefilter,
            preparams,
            tuner_params,
            tuner_id,
            instr_codec,
            codec_params,
            filter_params
        }
    );
    layout!(
        m,
        blosc2_dparams {
            nthreads,
            schunk,
            postfilter,
            postparams,
            typesize
        }
    );
    layout!(
        m,
        blosc2_storage {
            contiguous,
            urlpath,
            cparams,
            dparams,
            io
        }
    );
    layout!(
        m,
        blosc2_metalayer {
            name,
            content,
            content_len
        }
    );
    layout!(
        m,
        blosc2_schunk {
            version,
            compcode,
            compcode_meta,
            clevel,
            splitmode,
            typesize,
            blocksize,
            chunksize,
            flags2,
            use_dict,
            filters,
            filters_meta,
            nchunks,
            current_nchunk,
            nbytes,
            cbytes,
            data,
            data_len,
            storage,
            frame,
            cctx,
            dctx,
            metalayers,
            nmetalayers,
            vlmetalayers,
            nvlmetalayers,
            tuner_params,
            tuner_id,
            ndim,
            blockshape,
            view,
            change_tick
        }
    );
    layout!(
        m,
        blosc2_codec {
            compcode,
            compname,
            complib,
            version,
            encoder,
            decoder
        }
    );
    layout!(
        m,
        blosc2_filter {
            id,
            name,
            version,
            forward,
            backward
        }
    );
    layout!(m, chunk_cache_s { data, nchunk });
    layout!(
        m,
        b2nd_array_t {
            sc,
            shape,
            chunkshape,
            extshape,
            blockshape,
            extchunkshape,
            nitems,
            chunknitems,
            extnitems,
            blocknitems,
            extchunknitems,
            ndim,
            chunk_cache,
            item_array_strides,
            item_chunk_strides,
            item_extchunk_strides,
            item_block_strides,
            block_chunk_strides,
            chunk_array_strides,
            dtype,
            dtype_format,
            last_tick
        }
    );
    // The dump also prints the first element of each array field (its element type's size and
    // signedness); the element sits at the array's own offset.
    for f in [
        "shape",
        "chunkshape",
        "extshape",
        "blockshape",
        "extchunkshape",
        "item_array_strides",
        "item_chunk_strides",
        "item_extchunk_strides",
        "item_block_strides",
        "block_chunk_strides",
        "chunk_array_strides",
    ] {
        let (offset, size) = m[&format!("b2nd_array_t.{f}")];
        m.insert(format!("b2nd_array_t.{f}[0]"), (offset, size / 16));
    }
    layout!(m, blosc2_stdio_file { file });
    layout!(m, blosc2_stdio_params { locking });
    layout!(
        m,
        blosc2_stdio_mmap {
            mode,
            initial_mapping_size,
            needs_free,
            addr,
            urlpath,
            file_size,
            mapping_size,
            is_memory_only,
            file,
            fd,
            access_flags,
            map_flags
        }
    );
    m
}

#[test]
fn struct_layouts_match_the_reference() {
    let rust = rust_layouts();
    let mut seen = 0;
    for line in reference_dump() {
        let mut w: Vec<&str> = line.split_whitespace().collect();
        // A struct without a typedef is printed by its tag (`struct struct chunk_cache_s ...`,
        // `field struct chunk_cache_s.data ...`): the Rust type carries the tag's name.
        if w.get(1) == Some(&"struct") {
            w.remove(1);
        }
        let num = |k: &str| -> usize {
            let kv = w.iter().find(|s| s.starts_with(&format!("{k}="))).unwrap();
            kv[k.len() + 1..].parse().unwrap()
        };
        match w[0] {
            "struct" => {
                let (size, _) = rust
                    .get(w[1])
                    .unwrap_or_else(|| panic!("no Rust type {}", w[1]));
                assert_eq!(*size, num("size"), "sizeof({})", w[1]);
                seen += 1;
            }
            "field" => {
                let got = rust
                    .get(w[1])
                    .unwrap_or_else(|| panic!("no Rust field {}", w[1]));
                assert_eq!(
                    *got,
                    (num("offset"), num("size")),
                    "offset/size of {}",
                    w[1]
                );
                seen += 1;
            }
            _ => {}
        }
    }
    assert_eq!(seen, rust.len(), "every Rust struct and field is checked");
}

/// `NAME -> value` of the Rust constants.
macro_rules! consts {
    ($($c:ident),* $(,)?) => { BTreeMap::from([$((stringify!($c), $c as i64)),*]) };
}

#[test]
fn constants_match_the_reference() {
    let rust = consts![
        BLOSC2_VERSION_MAJOR,
        BLOSC2_VERSION_MINOR,
        BLOSC2_VERSION_RELEASE,
        BLOSC1_VERSION_FORMAT_PRE1,
        BLOSC1_VERSION_FORMAT,
        BLOSC2_VERSION_FORMAT_ALPHA,
        BLOSC2_VERSION_FORMAT_BETA1,
        BLOSC2_VERSION_FORMAT_STABLE,
        BLOSC2_VERSION_FORMAT_VL_BLOCKS,
        BLOSC2_VERSION_FORMAT,
        BLOSC2_VERSION_FRAME_FORMAT_BETA2,
        BLOSC2_VERSION_FRAME_FORMAT_RC1,
        BLOSC2_VERSION_FRAME_FORMAT_VL_BLOCKS,
        BLOSC2_VERSION_FRAME_FORMAT,
        BLOSC_MIN_HEADER_LENGTH,
        BLOSC_EXTENDED_HEADER_LENGTH,
        BLOSC2_MAX_OVERHEAD,
        BLOSC2_MAX_BUFFERSIZE,
        BLOSC_MAX_TYPESIZE,
        BLOSC_MIN_BUFFERSIZE,
        BLOSC2_DEFINED_TUNER_START,
        BLOSC2_DEFINED_TUNER_STOP,
        BLOSC2_GLOBAL_REGISTERED_TUNER_START,
        BLOSC2_GLOBAL_REGISTERED_TUNER_STOP,
        BLOSC2_GLOBAL_REGISTERED_TUNERS,
        BLOSC2_USER_REGISTERED_TUNER_START,
        BLOSC2_USER_REGISTERED_TUNER_STOP,
        BLOSC_STUNE,
        BLOSC_LAST_TUNER,
        BLOSC_LAST_REGISTERED_TUNE,
        BLOSC2_DEFINED_FILTERS_START,
        BLOSC2_DEFINED_FILTERS_STOP,
        BLOSC2_GLOBAL_REGISTERED_FILTERS_START,
        BLOSC2_GLOBAL_REGISTERED_FILTERS_STOP,
        BLOSC2_GLOBAL_REGISTERED_FILTERS,
        BLOSC2_USER_REGISTERED_FILTERS_START,
        BLOSC2_USER_REGISTERED_FILTERS_STOP,
        BLOSC2_MAX_FILTERS,
        BLOSC2_MAX_UDFILTERS,
        BLOSC_NOSHUFFLE,
        BLOSC_NOFILTER,
        BLOSC_SHUFFLE,
        BLOSC_BITSHUFFLE,
        BLOSC_DELTA,
        BLOSC_TRUNC_PREC,
        BLOSC_LAST_FILTER,
        BLOSC_LAST_REGISTERED_FILTER,
        BLOSC_DOSHUFFLE,
        BLOSC_MEMCPYED,
        BLOSC_DOBITSHUFFLE,
        BLOSC_DODELTA,
        BLOSC2_USEDICT,
        BLOSC2_BIGENDIAN,
        BLOSC2_INSTR_CODEC,
        BLOSC2_VL_BLOCKS,
        BLOSC2_MAXDICTSIZE,
        BLOSC2_MINUSEFULDICT,
        BLOSC2_MAXBLOCKSIZE,
        BLOSC2_MAXTYPESIZE,
        BLOSC2_DEFINED_CODECS_START,
        BLOSC2_DEFINED_CODECS_STOP,
        BLOSC2_GLOBAL_REGISTERED_CODECS_START,
        BLOSC2_GLOBAL_REGISTERED_CODECS_STOP,
        BLOSC2_GLOBAL_REGISTERED_CODECS,
        BLOSC2_USER_REGISTERED_CODECS_START,
        BLOSC2_USER_REGISTERED_CODECS_STOP,
        BLOSC_BLOSCLZ,
        BLOSC_LZ4,
        BLOSC_LZ4HC,
        BLOSC_ZLIB,
        BLOSC_ZSTD,
        BLOSC_LAST_CODEC,
        BLOSC_LAST_REGISTERED_CODEC,
        BLOSC_BLOSCLZ_LIB,
        BLOSC_LZ4_LIB,
        BLOSC_ZLIB_LIB,
        BLOSC_ZSTD_LIB,
        BLOSC_UDCODEC_LIB,
        BLOSC_SCHUNK_LIB,
        BLOSC_BLOSCLZ_FORMAT,
        BLOSC_LZ4_FORMAT,
        BLOSC_LZ4HC_FORMAT,
        BLOSC_ZLIB_FORMAT,
        BLOSC_ZSTD_FORMAT,
        BLOSC_UDCODEC_FORMAT,
        BLOSC_BLOSCLZ_VERSION_FORMAT,
        BLOSC_LZ4_VERSION_FORMAT,
        BLOSC_LZ4HC_VERSION_FORMAT,
        BLOSC_ZLIB_VERSION_FORMAT,
        BLOSC_ZSTD_VERSION_FORMAT,
        BLOSC_UDCODEC_VERSION_FORMAT,
        BLOSC_ALWAYS_SPLIT,
        BLOSC_NEVER_SPLIT,
        BLOSC_AUTO_SPLIT,
        BLOSC_FORWARD_COMPAT_SPLIT,
        BLOSC2_CHUNK_VERSION,
        BLOSC2_CHUNK_VERSIONLZ,
        BLOSC2_CHUNK_FLAGS,
        BLOSC2_CHUNK_TYPESIZE,
        BLOSC2_CHUNK_NBYTES,
        BLOSC2_CHUNK_BLOCKSIZE,
        BLOSC2_CHUNK_CBYTES,
        BLOSC2_CHUNK_FILTER_CODES,
        BLOSC2_CHUNK_FILTER_META,
        BLOSC2_CHUNK_BLOSC2_FLAGS2,
        BLOSC2_CHUNK_BLOSC2_FLAGS,
        BLOSC2_NO_SPECIAL,
        BLOSC2_SPECIAL_ZERO,
        BLOSC2_SPECIAL_NAN,
        BLOSC2_SPECIAL_VALUE,
        BLOSC2_SPECIAL_UNINIT,
        BLOSC2_SPECIAL_LASTID,
        BLOSC2_SPECIAL_MASK,
        BLOSC2_ERROR_SUCCESS,
        BLOSC2_ERROR_FAILURE,
        BLOSC2_ERROR_STREAM,
        BLOSC2_ERROR_DATA,
        BLOSC2_ERROR_MEMORY_ALLOC,
        BLOSC2_ERROR_READ_BUFFER,
        BLOSC2_ERROR_WRITE_BUFFER,
        BLOSC2_ERROR_CODEC_SUPPORT,
        BLOSC2_ERROR_CODEC_PARAM,
        BLOSC2_ERROR_CODEC_DICT,
        BLOSC2_ERROR_VERSION_SUPPORT,
        BLOSC2_ERROR_INVALID_HEADER,
        BLOSC2_ERROR_INVALID_PARAM,
        BLOSC2_ERROR_FILE_READ,
        BLOSC2_ERROR_FILE_WRITE,
        BLOSC2_ERROR_FILE_OPEN,
        BLOSC2_ERROR_NOT_FOUND,
        BLOSC2_ERROR_RUN_LENGTH,
        BLOSC2_ERROR_FILTER_PIPELINE,
        BLOSC2_ERROR_CHUNK_INSERT,
        BLOSC2_ERROR_CHUNK_APPEND,
        BLOSC2_ERROR_CHUNK_UPDATE,
        BLOSC2_ERROR_2GB_LIMIT,
        BLOSC2_ERROR_SCHUNK_COPY,
        BLOSC2_ERROR_FRAME_TYPE,
        BLOSC2_ERROR_FILE_TRUNCATE,
        BLOSC2_ERROR_THREAD_CREATE,
        BLOSC2_ERROR_POSTFILTER,
        BLOSC2_ERROR_FRAME_SPECIAL,
        BLOSC2_ERROR_SCHUNK_SPECIAL,
        BLOSC2_ERROR_PLUGIN_IO,
        BLOSC2_ERROR_FILE_REMOVE,
        BLOSC2_ERROR_NULL_POINTER,
        BLOSC2_ERROR_INVALID_INDEX,
        BLOSC2_ERROR_METALAYER_NOT_FOUND,
        BLOSC2_ERROR_MAX_BUFSIZE_EXCEEDED,
        BLOSC2_ERROR_TUNER,
        BLOSC2_ERROR_LOCK,
        BLOSC2_IO_FILESYSTEM,
        BLOSC2_IO_FILESYSTEM_MMAP,
        BLOSC_IO_LAST_BLOSC_DEFINED,
        BLOSC_IO_LAST_REGISTERED,
        BLOSC2_IO_BLOSC_DEFINED,
        BLOSC2_IO_REGISTERED,
        BLOSC2_IO_USER_DEFINED,
        BLOSC2_MAX_METALAYERS,
        BLOSC2_METALAYER_NAME_MAXLEN,
        BLOSC2_MAX_VLMETALAYERS,
        BLOSC2_VLMETALAYERS_NAME_MAXLEN,
        BLOSC_CODEC_NDLZ,
        BLOSC_CODEC_ZFP_FIXED_ACCURACY,
        BLOSC_CODEC_ZFP_FIXED_PRECISION,
        BLOSC_CODEC_ZFP_FIXED_RATE,
        BLOSC_CODEC_OPENHTJ2K,
        BLOSC_CODEC_GROK,
        BLOSC_CODEC_OPENZL,
        BLOSC_CODEC_J2K,
        BLOSC_CODEC_HTJ2K,
        BLOSC_FILTER_NDCELL,
        BLOSC_FILTER_NDMEAN,
        BLOSC_FILTER_BYTEDELTA_BUGGY,
        BLOSC_FILTER_BYTEDELTA,
        BLOSC_FILTER_INT_TRUNC,
        BLOSC_BTUNE,
    ];
    let strings = BTreeMap::from([
        ("BLOSC2_VERSION_STRING", BLOSC2_VERSION_STRING),
        ("BLOSC2_VERSION_DATE", BLOSC2_VERSION_DATE),
        ("BLOSC_BLOSCLZ_COMPNAME", BLOSC_BLOSCLZ_COMPNAME),
        ("BLOSC_LZ4_COMPNAME", BLOSC_LZ4_COMPNAME),
        ("BLOSC_LZ4HC_COMPNAME", BLOSC_LZ4HC_COMPNAME),
        ("BLOSC_ZLIB_COMPNAME", BLOSC_ZLIB_COMPNAME),
        ("BLOSC_ZSTD_COMPNAME", BLOSC_ZSTD_COMPNAME),
        ("BLOSC_BLOSCLZ_LIBNAME", BLOSC_BLOSCLZ_LIBNAME),
        ("BLOSC_LZ4_LIBNAME", BLOSC_LZ4_LIBNAME),
        ("BLOSC_ZLIB_LIBNAME", BLOSC_ZLIB_LIBNAME),
        ("BLOSC_ZSTD_LIBNAME", BLOSC_ZSTD_LIBNAME),
    ]);
    let (mut nconst, mut nstr) = (0, 0);
    for line in reference_dump() {
        // b2nd.h constants belong to the b2nd metalayer module, not to capi::types.
        if let Some(rest) = line.strip_prefix("const ") {
            let (name, value) = rest.split_once(" = ").unwrap();
            if name.starts_with("B2ND_") || name.starts_with("DTYPE_") {
                continue;
            }
            let ours = rust
                .get(name)
                .unwrap_or_else(|| panic!("no Rust constant {name}"));
            assert_eq!(*ours, value.parse::<i64>().unwrap(), "{name}");
            nconst += 1;
        } else if let Some(rest) = line.strip_prefix("string ") {
            let (name, value) = rest.split_once(" = ").unwrap();
            if name.starts_with("B2ND_") {
                continue;
            }
            let ours = strings
                .get(name)
                .unwrap_or_else(|| panic!("no Rust string {name}"));
            assert_eq!(format!("\"{ours}\""), value, "{name}");
            nstr += 1;
        }
    }
    assert_eq!(
        (nconst, nstr),
        (rust.len(), strings.len()),
        "every Rust constant is checked"
    );
}

#[test]
fn defaults_match_the_reference() {
    let c = BLOSC2_CPARAMS_DEFAULTS;
    let d = BLOSC2_DPARAMS_DEFAULTS;
    let s = BLOSC2_STORAGE_DEFAULTS;
    let io = BLOSC2_IO_DEFAULTS;
    let m = BLOSC2_STDIO_MMAP_DEFAULTS;
    let p = BLOSC2_STDIO_PARAMS_DEFAULTS;
    let null = |is_null: bool| if is_null { "NULL" } else { "non-NULL" }.to_string();
    // SAFETY: both are 'static NUL-terminated literals.
    let cstr = |p: *const std::ffi::c_char| unsafe { CStr::from_ptr(p) }.to_str().unwrap();
    let mut ours: BTreeMap<String, String> = BTreeMap::new();
    let mut put = |k: &str, v: String| {
        ours.insert(k.to_string(), v);
    };
    let cp = "BLOSC2_CPARAMS_DEFAULTS";
    put(&format!("{cp}.compcode"), c.compcode.to_string());
    put(&format!("{cp}.compcode_meta"), c.compcode_meta.to_string());
    put(&format!("{cp}.clevel"), c.clevel.to_string());
    put(&format!("{cp}.use_dict"), c.use_dict.to_string());
    put(&format!("{cp}.typesize"), c.typesize.to_string());
    put(&format!("{cp}.nthreads"), c.nthreads.to_string());
    put(&format!("{cp}.blocksize"), c.blocksize.to_string());
    put(&format!("{cp}.splitmode"), c.splitmode.to_string());
    put(&format!("{cp}.schunk"), null(c.schunk.is_null()));
    for i in 0..6 {
        put(&format!("{cp}.filters[{i}]"), c.filters[i].to_string());
        put(
            &format!("{cp}.filters_meta[{i}]"),
            c.filters_meta[i].to_string(),
        );
        put(
            &format!("{cp}.filter_params[{i}]"),
            null(c.filter_params[i].is_null()),
        );
    }
    put(&format!("{cp}.prefilter"), null(c.prefilter.is_none()));
    put(&format!("{cp}.preparams"), null(c.preparams.is_null()));
    put(
        &format!("{cp}.tuner_params"),
        null(c.tuner_params.is_null()),
    );
    put(&format!("{cp}.tuner_id"), c.tuner_id.to_string());
    put(
        &format!("{cp}.instr_codec"),
        (c.instr_codec as i32).to_string(),
    );
    put(
        &format!("{cp}.codec_params"),
        null(c.codec_params.is_null()),
    );
    let dp = "BLOSC2_DPARAMS_DEFAULTS";
    put(&format!("{dp}.nthreads"), d.nthreads.to_string());
    put(&format!("{dp}.schunk"), null(d.schunk.is_null()));
    put(&format!("{dp}.postfilter"), null(d.postfilter.is_none()));
    put(&format!("{dp}.postparams"), null(d.postparams.is_null()));
    put(&format!("{dp}.typesize"), d.typesize.to_string());
    let st = "BLOSC2_STORAGE_DEFAULTS";
    put(
        &format!("{st}.contiguous"),
        (s.contiguous as i32).to_string(),
    );
    put(&format!("{st}.urlpath"), null(s.urlpath.is_null()));
    put(&format!("{st}.cparams"), null(s.cparams.is_null()));
    put(&format!("{st}.dparams"), null(s.dparams.is_null()));
    put(&format!("{st}.io"), null(s.io.is_null()));
    put("BLOSC2_IO_DEFAULTS.id", io.id.to_string());
    put("BLOSC2_IO_DEFAULTS.name", format!("\"{}\"", cstr(io.name)));
    put("BLOSC2_IO_DEFAULTS.params", null(io.params.is_null()));
    put(
        "BLOSC2_STDIO_PARAMS_DEFAULTS.locking",
        (p.locking as i32).to_string(),
    );
    let mm = "BLOSC2_STDIO_MMAP_DEFAULTS";
    put(&format!("{mm}.mode"), format!("\"{}\"", cstr(m.mode)));
    put(
        &format!("{mm}.initial_mapping_size"),
        m.initial_mapping_size.to_string(),
    );
    put(
        &format!("{mm}.needs_free"),
        (m.needs_free as i32).to_string(),
    );
    put(&format!("{mm}.addr"), null(m.addr.is_null()));
    put(&format!("{mm}.urlpath"), null(m.urlpath.is_null()));
    put(&format!("{mm}.file_size"), m.file_size.to_string());
    put(&format!("{mm}.mapping_size"), m.mapping_size.to_string());
    put(
        &format!("{mm}.is_memory_only"),
        (m.is_memory_only as i32).to_string(),
    );
    put(&format!("{mm}.file"), null(m.file.is_null()));
    put(&format!("{mm}.fd"), m.fd.to_string());
    put(&format!("{mm}.access_flags"), m.access_flags.to_string());
    put(&format!("{mm}.map_flags"), m.map_flags.to_string());

    let mut n = 0;
    for line in reference_dump() {
        if let Some(rest) = line.strip_prefix("default ") {
            let (name, value) = rest.split_once(" = ").unwrap();
            let got = ours
                .get(name)
                .unwrap_or_else(|| panic!("no Rust default {name}"));
            assert_eq!(got, value, "{name}");
            n += 1;
        }
    }
    assert_eq!(n, ours.len(), "every Rust default field is checked");
}
