//! Crash states of recorded storage operations (see docs/durability.md), and the logical state
//! of a frame as libb2frame and as the real c-blosc2 see it.

#![allow(clippy::missing_transmute_annotations)]

use super::reference::reference;
use b2frame::capi::types::{blosc2_metalayer, blosc2_schunk};
use b2frame::frame::record::{Event, FileRef};
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::Path;

/// Writes are torn only at multiples of this many bytes of the file (a disk sector; a killed
/// `write` stops at a page boundary, a multiple of it).
pub const SECTOR: u64 = 512;

/// A frame's logical state: chunks (decompressed), metalayers, vlmetalayers (decompressed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct State {
    pub chunks: Vec<Vec<u8>>,
    pub meta: Vec<(String, Vec<u8>)>,
    pub vlmeta: Vec<(String, Vec<u8>)>,
}

impl State {
    /// A one-line description for failure messages.
    pub fn brief(&self) -> String {
        format!(
            "{} chunks {:?}, meta {:?}, vlmeta {:?}",
            self.chunks.len(),
            self.chunks
                .iter()
                .map(|c| (c.len(), c.first().copied()))
                .collect::<Vec<_>>(),
            self.meta,
            self.vlmeta
        )
    }
}

/// The state libb2frame opens at `offset` of `path` (a directory: an sframe).
pub fn ours(path: &Path, offset: u64) -> Result<State, String> {
    let sc = if path.is_dir() {
        b2frame::schunk::SChunk::open(path)
    } else {
        b2frame::schunk::SChunk::open_offset(path, offset, 1)
    };
    let sc = sc.map_err(|e| format!("libb2frame open: {e:?}"))?;
    let mut chunks = Vec::new();
    for i in 0..sc.nchunks() {
        chunks.push(
            sc.decompress_chunk(i)
                .map_err(|e| format!("libb2frame chunk {i}: {e:?}"))?,
        );
    }
    let meta = sc.metalayers().to_vec();
    let names: Vec<String> = sc.vlmetalayers().iter().map(|(n, _)| n.clone()).collect();
    let mut vlmeta = Vec::new();
    for n in names {
        let v = sc
            .vlmeta_get(&n)
            .map_err(|e| format!("libb2frame vlmeta {n}: {e:?}"))?;
        vlmeta.push((n, v));
    }
    Ok(State {
        chunks,
        meta,
        vlmeta,
    })
}

type Sc = *mut blosc2_schunk;

/// The state c-blosc2 3.3.5 opens at `offset` of `path`.
pub fn theirs(path: &Path, offset: u64) -> Result<State, String> {
    let r = reference();
    // SAFETY: the symbols have these C signatures in blosc2.h 3.3.5; the schunk pointer is
    // used only while open and freed at the end; every buffer is sized as declared.
    unsafe {
        let open: unsafe extern "C" fn(*const c_char, i64) -> Sc =
            std::mem::transmute(r.sym("blosc2_schunk_open_offset"));
        let free: unsafe extern "C" fn(Sc) -> c_int =
            std::mem::transmute(r.sym("blosc2_schunk_free"));
        let decompress: unsafe extern "C" fn(Sc, i64, *mut c_void, i32) -> c_int =
            std::mem::transmute(r.sym("blosc2_schunk_decompress_chunk"));
        let vlget: unsafe extern "C" fn(Sc, *const c_char, *mut *mut u8, *mut i32) -> c_int =
            std::mem::transmute(r.sym("blosc2_vlmeta_get"));
        let c = CString::new(path.to_str().unwrap()).unwrap();
        let sc = open(c.as_ptr(), offset as i64);
        if sc.is_null() {
            return Err("c-blosc2 open returned NULL".into());
        }
        let s = &*sc;
        let mut out = State {
            chunks: Vec::new(),
            meta: Vec::new(),
            vlmeta: Vec::new(),
        };
        let mut err = None;
        let cap = (s.chunksize.max(0) as usize).max(1 << 16) + 64;
        for i in 0..s.nchunks {
            let mut buf = vec![0u8; cap];
            let n = decompress(sc, i, buf.as_mut_ptr() as *mut c_void, cap as i32);
            if n < 0 {
                err = Some(format!("c-blosc2 chunk {i}: {n}"));
                break;
            }
            buf.truncate(n as usize);
            out.chunks.push(buf);
        }
        for m in &s.metalayers[..s.nmetalayers as usize] {
            let m: &blosc2_metalayer = &**m;
            let name = CStr::from_ptr(m.name).to_string_lossy().into_owned();
            let content = std::slice::from_raw_parts(m.content, m.content_len as usize).to_vec();
            out.meta.push((name, content));
        }
        for m in &s.vlmetalayers[..s.nvlmetalayers.max(0) as usize] {
            let m: &blosc2_metalayer = &**m;
            let mut content: *mut u8 = std::ptr::null_mut();
            let mut len = 0i32;
            if vlget(sc, m.name, &mut content, &mut len) < 0 {
                err = Some("c-blosc2 vlmeta_get failed".into());
                break;
            }
            let name = CStr::from_ptr(m.name).to_string_lossy().into_owned();
            out.vlmeta.push((
                name,
                std::slice::from_raw_parts(content, len as usize).to_vec(),
            ));
            libc::free(content as *mut c_void);
        }
        free(sc);
        match err {
            Some(e) => Err(e),
            None => Ok(out),
        }
    }
}

/// Applies `e` (fully, or only its first `keep` bytes for a write) to the file image `img`.
pub fn apply(img: &mut Vec<u8>, e: &Event, keep: Option<usize>) {
    match e {
        Event::Write { pos, data, .. } => {
            let data = &data[..keep.unwrap_or(data.len())];
            let p = *pos as usize;
            if img.len() < p + data.len() {
                img.resize(p + data.len(), 0);
            }
            img[p..p + data.len()].copy_from_slice(data);
        }
        Event::Truncate { len, .. } => img.resize(*len as usize, 0),
        Event::Sync { .. } => {}
        other => panic!("a cframe commit issued {other:?}"),
    }
}

/// The lengths a write may be torn to: every sector boundary strictly inside it.
pub fn tears(e: &Event) -> Vec<usize> {
    match e {
        Event::Write { pos, data, .. } => {
            let end = pos + data.len() as u64;
            let mut b = (pos / SECTOR + 1) * SECTOR;
            let mut v = Vec::new();
            while b < end {
                v.push((b - pos) as usize);
                b += SECTOR;
            }
            v
        }
        _ => Vec::new(),
    }
}

/// Writes up to this long are torn at every byte by [`byte_tears`].
pub const SMALL_WRITE: usize = 1024;

/// The lengths a write may be torn to when any prefix of it can reach the file: every byte
/// for a write of at most [`SMALL_WRITE`] bytes that does not overlap `atomic` (the frame
/// header, whose commit writes are torn only at sector boundaries: docs/durability.md, "Torn
/// writes"), every sector boundary for the others.
pub fn byte_tears(e: &Event, atomic: &std::ops::Range<u64>) -> Vec<usize> {
    match e {
        Event::Write { pos, data, .. }
            if data.len() <= SMALL_WRITE
                && !(*pos < atomic.end && pos + data.len() as u64 > atomic.start) =>
        {
            (1..data.len()).collect()
        }
        _ => tears(e),
    }
}

/// The sectors of a write spanning several: a power cut may persist any of them without the
/// others (`(start, len)` within the write). [`crash_images_at`] leaves each one out in turn.
pub fn holes(e: &Event) -> Vec<(usize, usize)> {
    let Event::Write { pos, data, .. } = e else {
        return Vec::new();
    };
    let end = pos + data.len() as u64;
    if pos / SECTOR == (end - 1).max(*pos) / SECTOR {
        return Vec::new();
    }
    let mut v = Vec::new();
    let mut s = *pos;
    while s < end {
        let e = ((s / SECTOR + 1) * SECTOR).min(end);
        v.push(((s - pos) as usize, (e - s) as usize));
        s = e;
    }
    v
}

/// Applies the write `e` to `img` except the bytes `hole` (relative to the write), which keep
/// what `img` held (zeros past its end).
pub fn apply_holed(img: &mut Vec<u8>, e: &Event, hole: (usize, usize)) {
    let Event::Write { pos, .. } = e else {
        return apply(img, e, None);
    };
    let prev = img.clone();
    apply(img, e, None);
    for i in hole.0..hole.0 + hole.1 {
        let at = *pos as usize + i;
        img[at] = prev.get(at).copied().unwrap_or(0);
    }
}

/// Every file image a crash during `events` (issued on one file starting as `before`) can
/// leave, with a label: without barriers (a killed process), every prefix of the events and
/// every torn last write; with barriers (`durable`), additionally every subset, applied in
/// order, of the events since the last sync, with any one of them torn. The second member
/// tells whether the image is past the call's last barrier (then only the after-state is
/// allowed, in durable mode).
pub fn crash_images(
    before: &[u8],
    events: &[Event],
    durable: bool,
) -> Vec<(String, Vec<u8>, bool)> {
    crash_images_at(before, events, durable, &(0..u64::MAX))
}

/// [`crash_images`] with the finer model of docs/durability.md ("Torn writes"): without
/// barriers each write is also torn at every byte ([`byte_tears`]) unless it overlaps
/// `atomic` (the frame header); with barriers, each write of the chosen subset may also miss
/// any one of its sectors ([`holes`]).
pub fn crash_images_at(
    before: &[u8],
    events: &[Event],
    durable: bool,
    atomic: &std::ops::Range<u64>,
) -> Vec<(String, Vec<u8>, bool)> {
    let files: std::collections::BTreeSet<&FileRef> = events
        .iter()
        .filter_map(|e| match e {
            Event::Write { file, .. } | Event::Truncate { file, .. } | Event::Sync { file } => {
                Some(file)
            }
            _ => None,
        })
        .collect();
    assert!(
        files.len() <= 1,
        "a cframe commit touched several files: {files:?}"
    );
    crash_states(
        before.to_vec(),
        events,
        durable,
        |e| matches!(e, Event::Sync { .. }),
        |e| byte_tears(e, atomic),
        true,
        |img, e, cut| match cut {
            Cut::Whole => apply(img, e, None),
            Cut::Torn(t) => apply(img, e, Some(t)),
            Cut::Holed(h) => apply_holed(img, e, h),
        },
    )
}

/// How much of a write reaches the disk in a crash state.
#[derive(Clone, Copy)]
enum Cut {
    Whole,
    /// Only its first bytes (see [`apply`]).
    Torn(usize),
    /// All but one sector (see [`apply_holed`]).
    Holed((usize, usize)),
}

/// The crash states of `before` after `events` (labelled, with "past the last barrier"), the
/// one enumeration every image kind shares. Without `durable`: every prefix of the events, and
/// each event torn at its `byte_tears`. With it: for each epoch between two `barrier` events,
/// every subset of its events over the state at the epoch's start, and with `sector_faults`
/// also each chosen write torn at a sector boundary ([`tears`]) or missing one sector
/// ([`holes`]).
fn crash_states<I: Clone>(
    before: I,
    events: &[Event],
    durable: bool,
    barrier: impl Fn(&Event) -> bool,
    byte_tears: impl Fn(&Event) -> Vec<usize>,
    sector_faults: bool,
    apply: impl Fn(&mut I, &Event, Cut),
) -> Vec<(String, I, bool)> {
    let mut out = Vec::new();
    if !durable {
        let mut img = before;
        for (k, e) in events.iter().enumerate() {
            out.push((format!("after {k} events"), img.clone(), false));
            for t in byte_tears(e) {
                let mut torn = img.clone();
                apply(&mut torn, e, Cut::Torn(t));
                out.push((format!("event {k} torn at {t}"), torn, false));
            }
            apply(&mut img, e, Cut::Whole);
        }
        out.push(("all events".into(), img, false));
        return out;
    }
    let last = events.iter().rposition(&barrier);
    let mut img = before;
    let mut start = 0;
    while start <= events.len() {
        let end = events[start..]
            .iter()
            .position(&barrier)
            .map_or(events.len(), |p| start + p);
        let epoch = &events[start..end];
        let past_last = last.is_some_and(|s| start > s);
        assert!(
            epoch.len() <= 12,
            "epoch too long to enumerate: {}",
            epoch.len()
        );
        for mask in 0u32..(1 << epoch.len()) {
            let chosen: Vec<usize> = (0..epoch.len()).filter(|i| mask & (1 << i) != 0).collect();
            // The chosen events over the epoch's start, event `i` cut by `cut`.
            let state = |faulty: Option<(usize, Cut)>| {
                let mut x = img.clone();
                for &j in &chosen {
                    let cut = match faulty {
                        Some((i, cut)) if i == j => cut,
                        _ => Cut::Whole,
                    };
                    apply(&mut x, &epoch[j], cut);
                }
                x
            };
            out.push((
                format!("epoch at {start}, subset {mask:b}"),
                state(None),
                past_last,
            ));
            if !sector_faults {
                continue;
            }
            for &i in &chosen {
                for t in tears(&epoch[i]) {
                    out.push((
                        format!("epoch at {start}, subset {mask:b}, {i} torn at {t}"),
                        state(Some((i, Cut::Torn(t)))),
                        past_last,
                    ));
                }
                for h in holes(&epoch[i]) {
                    out.push((
                        format!("epoch at {start}, subset {mask:b}, {i} without {h:?}"),
                        state(Some((i, Cut::Holed(h)))),
                        past_last,
                    ));
                }
            }
        }
        for e in epoch {
            apply(&mut img, e, Cut::Whole);
        }
        start = end + 1;
    }
    out
}

/// An sframe directory as file name -> content.
pub type DirImage = std::collections::BTreeMap<String, Vec<u8>>;

/// The files of directory `dir`.
pub fn read_dir_image(dir: &Path) -> DirImage {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect()
}

/// Replaces the content of directory `dir` with `img`.
pub fn write_dir_image(dir: &Path, img: &DirImage) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    for (name, bytes) in img {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
}

fn name_of(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().into_owned()
}

/// Applies `e` to a directory image (`keep`: a write's first bytes only).
pub fn apply_dir(img: &mut DirImage, e: &Event, keep: Option<usize>) {
    match e {
        Event::Create { path } => {
            img.insert(name_of(path), Vec::new());
        }
        Event::Write {
            file: FileRef::Path(p),
            ..
        } => apply(img.entry(name_of(p)).or_default(), e, keep),
        Event::Truncate {
            file: FileRef::Path(p),
            len,
        } => img.entry(name_of(p)).or_default().resize(*len as usize, 0),
        Event::Rename { from, to } => {
            if let Some(v) = img.remove(&name_of(from)) {
                img.insert(name_of(to), v);
            }
        }
        Event::Remove { path } => {
            img.remove(&name_of(path));
        }
        Event::Exchange { a, b } => {
            let (a, b) = (name_of(a), name_of(b));
            if let (Some(x), Some(y)) = (img.remove(&a), img.remove(&b)) {
                img.insert(a, y);
                img.insert(b, x);
            }
        }
        Event::Sync { .. } | Event::SyncDir { .. } => {}
        other => panic!("an sframe commit issued {other:?}"),
    }
}

/// [`crash_images`] for an sframe directory: barriers are file and directory syncs.
pub fn crash_dir_images(
    before: &DirImage,
    events: &[Event],
    durable: bool,
) -> Vec<(String, DirImage, bool)> {
    crash_states(
        before.clone(),
        events,
        durable,
        |e| matches!(e, Event::Sync { .. } | Event::SyncDir { .. }),
        |e| byte_tears(e, &(0..0)),
        false,
        |img, e, cut| match cut {
            Cut::Whole => apply_dir(img, e, None),
            Cut::Torn(t) => apply_dir(img, e, Some(t)),
            Cut::Holed(_) => unreachable!("no sector faults in directory images"),
        },
    )
}

/// The bytes of the frame header at `offset` of the file image `img` (from its `header_len`).
pub fn header_range(img: &[u8], offset: u64) -> std::ops::Range<u64> {
    let o = offset as usize;
    let hl = u32::from_be_bytes(img[o + 11..o + 15].try_into().unwrap());
    offset..offset + u64::from(hl)
}

/// A directory tree as relative path -> file content (`None`: a directory).
pub type Tree = std::collections::BTreeMap<std::path::PathBuf, Option<Vec<u8>>>;

/// The files and directories under `root`.
pub fn read_tree(root: &Path) -> Tree {
    fn walk(root: &Path, dir: &Path, out: &mut Tree) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(root).unwrap().to_path_buf();
            if p.is_dir() {
                out.insert(rel, None);
                walk(root, &p, out);
            } else {
                out.insert(rel, Some(std::fs::read(&p).unwrap()));
            }
        }
    }
    let mut out = Tree::new();
    walk(root, root, &mut out);
    out
}

/// Replaces everything under `root` with `img`.
pub fn write_tree(root: &Path, img: &Tree) {
    let _ = std::fs::remove_dir_all(root);
    std::fs::create_dir_all(root).unwrap();
    for (rel, v) in img {
        let p = root.join(rel);
        match v {
            None => std::fs::create_dir_all(&p).unwrap(),
            Some(bytes) => {
                std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                std::fs::write(&p, bytes)
                    .unwrap_or_else(|e| panic!("{}: {e} (tree {:?})", p.display(), img.keys()));
            }
        }
    }
}

/// Applies `e` (issued on files under `root`) to a tree image (`keep`: a write's first bytes
/// only). Operations on names whose directory is missing in the image (a reordered crash
/// state) are dropped, as the file system would refuse them.
pub fn apply_tree(img: &mut Tree, root: &Path, e: &Event, keep: Option<usize>) {
    let rel = |p: &Path| p.strip_prefix(root).unwrap().to_path_buf();
    let parent_ok = |img: &Tree, r: &Path| match r.parent() {
        Some(d) if !d.as_os_str().is_empty() => img.get(d) == Some(&None),
        _ => true,
    };
    match e {
        Event::Create { path } => {
            let r = rel(path);
            if parent_ok(img, &r) {
                img.insert(r, Some(Vec::new()));
            }
        }
        Event::CreateDir { path } => {
            let r = rel(path);
            if parent_ok(img, &r) {
                img.entry(r).or_insert(None);
            }
        }
        Event::Write {
            file: FileRef::Path(p),
            ..
        } => {
            let r = rel(p);
            if parent_ok(img, &r) {
                let mut f = img.remove(&r).flatten().unwrap_or_default();
                apply(&mut f, e, keep);
                img.insert(r, Some(f));
            }
        }
        Event::Truncate {
            file: FileRef::Path(p),
            len,
        } => {
            let r = rel(p);
            if let Some(Some(f)) = img.get_mut(&r) {
                f.resize(*len as usize, 0);
            }
        }
        Event::Rename { from, to } => {
            let (f, t) = (rel(from), rel(to));
            let moved: Vec<std::path::PathBuf> =
                img.keys().filter(|k| k.starts_with(&f)).cloned().collect();
            if moved.is_empty() || !parent_ok(img, &t) {
                return;
            }
            // A directory replaces only an empty one; a file replaces a file.
            let busy = img.keys().any(|k| k.starts_with(&t) && *k != t);
            if busy {
                return;
            }
            img.remove(&t);
            for k in moved {
                let v = img.remove(&k).unwrap();
                let rest = k.strip_prefix(&f).unwrap();
                let nk = if rest.as_os_str().is_empty() {
                    t.clone()
                } else {
                    t.join(rest)
                };
                img.insert(nk, v);
            }
        }
        Event::Remove { path } => {
            let r = rel(path);
            img.retain(|k, _| !k.starts_with(&r));
        }
        Event::Exchange { a, b } => {
            let (a, b) = (rel(a), rel(b));
            if let (Some(Some(x)), Some(Some(y))) = (img.get(&a).cloned(), img.get(&b).cloned()) {
                img.insert(a, Some(y));
                img.insert(b, Some(x));
            }
        }
        Event::Sync { .. } | Event::SyncDir { .. } => {}
        other => panic!("a whole-file call issued {other:?}"),
    }
}

/// [`crash_images_at`] for the tree under `root`: every prefix with the last write torn (at
/// [`byte_tears`]), and in durable mode every subset of the operations between two barriers
/// (file and directory syncs) with any one write torn at a sector boundary or missing a
/// sector.
pub fn crash_tree_images(
    before: &Tree,
    root: &Path,
    events: &[Event],
    durable: bool,
) -> Vec<(String, Tree, bool)> {
    crash_states(
        before.clone(),
        events,
        durable,
        |e| matches!(e, Event::Sync { .. } | Event::SyncDir { .. }),
        |e| byte_tears(e, &(0..0)),
        true,
        |img, e, cut| match cut {
            Cut::Whole => apply_tree(img, root, e, None),
            Cut::Torn(t) => apply_tree(img, root, e, Some(t)),
            Cut::Holed(h) => apply_tree_holed(img, root, e, h),
        },
    )
}

/// [`apply_tree`] of a write that misses the bytes `hole` (see [`apply_holed`]).
pub fn apply_tree_holed(img: &mut Tree, root: &Path, e: &Event, hole: (usize, usize)) {
    let Event::Write {
        file: FileRef::Path(p),
        ..
    } = e
    else {
        return apply_tree(img, root, e, None);
    };
    let r = p.strip_prefix(root).unwrap().to_path_buf();
    if let Some(d) = r.parent().filter(|d| !d.as_os_str().is_empty()) {
        if img.get(d) != Some(&None) {
            return;
        }
    }
    let mut f = img.remove(&r).flatten().unwrap_or_default();
    apply_holed(&mut f, e, hole);
    img.insert(r, Some(f));
}
