//! `b2frame`: inspect, check, extract and rewrite Blosc2 frames (cframes, frames inside larger
//! files, and sframe directories) with the b2frame library's safe core.
//!
//! Every failure is one line on stderr naming the path and the reason, and a non-zero exit
//! status: 1 for a frame that is not sound (`verify`) or cannot be read, 2 for bad usage.

#![forbid(unsafe_code)]

mod convert;
mod diagnose;
mod info;
mod man;
mod msgpack_json;
mod names;
mod progress;
mod verify;

use blosc2_frame::frame::Frame;
use clap::{Args, Parser, Subcommand};
use std::fmt;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "b2frame",
    version,
    about = "Inspect, verify and rewrite Blosc2 frames",
    long_about = "Inspect, verify and rewrite Blosc2 frames: cframe files (also at an offset inside a \
larger file) and sframe directories, as c-blosc2, python-blosc2 and b2frame write them.",
    after_help = "Examples:
  b2frame info data.b2frame
  b2frame verify data.b2frame
  b2frame convert data.b2frame data.b2sframe --sparse --codec zstd --clevel 9

Errors are one line, `b2frame: PATH: reason`, with exit status 1 (2 for bad usage). \
`b2frame help COMMAND` or `b2frame COMMAND --help` shows a command's options and examples."
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

/// Where the frame is: a cframe file (possibly at an offset) or an sframe directory.
#[derive(Args, Clone)]
struct Source {
    /// Frame file (cframe) or directory (sframe)
    path: PathBuf,
    /// Byte offset of the cframe inside the file
    #[arg(long, default_value_t = 0)]
    offset: u64,
}

#[derive(Subcommand)]
enum Cmd {
    /// Frame kind, versions, sizes, parameters and metalayers
    #[command(after_help = "Examples:
  b2frame info data.b2frame
  b2frame info --json data.b2sframe
  b2frame info --offset 4096 container.bin")]
    Info {
        #[command(flatten)]
        src: Source,
        /// Print JSON instead of text
        #[arg(long)]
        json: bool,
    },
    /// One line per chunk: offset, sizes, special kind, codec and filters
    #[command(after_help = "Examples:
  b2frame chunks data.b2frame
  b2frame chunks data.b2sframe | head")]
    Chunks {
        #[command(flatten)]
        src: Source,
    },
    /// Decompress every chunk and check every structure; exit status 0 iff sound
    #[command(after_help = "Examples:
  b2frame verify data.b2frame
  b2frame verify data.b2sframe && echo sound")]
    Verify {
        #[command(flatten)]
        src: Source,
    },
    /// Write the decompressed bytes to stdout
    #[command(after_help = "Examples:
  b2frame cat data.b2frame > data.bin
  b2frame cat --chunk 0 data.b2frame | od -A d -t d4 | head")]
    Cat {
        #[command(flatten)]
        src: Source,
        /// Only this chunk
        #[arg(long, allow_negative_numbers = true)]
        chunk: Option<i64>,
    },
    /// Rewrite as a cframe or sframe, optionally recompressing
    #[command(after_help = "Examples:
  b2frame convert data.b2frame copy.b2sframe --sparse
  b2frame convert data.b2sframe data2.b2frame --contiguous
  b2frame convert data.b2frame small.b2frame --codec zstd --clevel 9 --filter bitshuffle
  b2frame convert floats.b2frame lossy.b2frame --filter trunc_prec:12,shuffle")]
    Convert(convert::ConvertArgs),
    /// Rewrite a cframe file without the dead space left by deletes and updates
    #[command(after_help = "Examples:
  b2frame compact data.b2frame
  b2frame info data.b2frame | grep 'dead bytes'")]
    Compact {
        /// cframe file
        path: PathBuf,
    },
    /// Salvage a cframe that a crash left unopenable into a new cframe file DST: the frame as
    /// it is if it opens, else the last consistent state still on disk, else a frame rebuilt
    /// from the chunks that are intact
    #[command(after_help = "Examples:
  b2frame recover damaged.b2frame recovered.b2frame
  b2frame recover damaged.b2frame recovered.b2frame && b2frame verify recovered.b2frame")]
    Recover {
        #[command(flatten)]
        src: Source,
        /// The new cframe file (must not exist)
        dst: PathBuf,
    },
    /// Write the man pages (b2frame.1 and one per command) into DIR; a build step of the
    /// install (CMakeLists.txt), hidden from the help
    #[command(hide = true)]
    GenerateMan {
        /// Directory to write the pages into (created if missing)
        dir: PathBuf,
    },
}

/// A failure to report: the path it concerns and the reason.
pub struct Failure {
    path: PathBuf,
    reason: String,
    /// The reader of stdout went away (`| head`): stop quietly, like other Unix tools.
    quiet: bool,
}

impl Failure {
    pub fn new(path: &Path, reason: impl fmt::Display) -> Failure {
        Failure {
            path: path.to_path_buf(),
            reason: reason.to_string(),
            quiet: false,
        }
    }

    /// A failed write to stdout.
    fn stdout(e: std::io::Error) -> Failure {
        let mut f = Failure::new(Path::new("<stdout>"), e.to_string());
        f.quiet = e.kind() == std::io::ErrorKind::BrokenPipe;
        f
    }
}

/// Writes `text` to stdout; a closed pipe ends the program quietly instead of a panic.
pub fn emit(text: &str) -> CliResult<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|_| out.flush())
        .map_err(Failure::stdout)
}

pub type CliResult<T> = std::result::Result<T, Failure>;

/// Opens the frame named by `src`, with the reason in the error.
pub fn open(src: &Path, offset: u64) -> CliResult<Frame> {
    if !src.exists() {
        return Err(Failure::new(src, "no such file or directory"));
    }
    let r = if offset != 0 {
        if src.is_dir() {
            return Err(Failure::new(
                src,
                "--offset applies to cframe files, not sframe directories",
            ));
        }
        Frame::open_file_at(src, offset)
    } else {
        Frame::open(src)
    };
    r.map_err(|e| match diagnose::diagnose_open(src, offset) {
        Some(why) => Failure::new(src, format!("cannot open frame: {why} [{e}]")),
        None => Failure::new(src, format!("cannot open frame: {e}")),
    })
}

fn cat(src: &Source, chunk: Option<i64>) -> CliResult<()> {
    let f = open(&src.path, src.offset)?;
    let out = std::io::stdout();
    let mut out = out.lock();
    let range = match chunk {
        Some(i) if i < 0 || i >= f.nchunks() => {
            return Err(Failure::new(
                &src.path,
                format!("chunk {i} out of range (frame has {} chunks)", f.nchunks()),
            ))
        }
        Some(i) => i..i + 1,
        None => 0..f.nchunks(),
    };
    // Data going to the terminal would be garbled by a bar on the same terminal.
    let tty = std::io::stderr().is_terminal() && !std::io::stdout().is_terminal();
    let mut bar = progress::Progress::with_terminal("cat", range.end - range.start, tty);
    for i in range {
        let data = f
            .decompress_chunk(i)
            .map_err(|e| Failure::new(&src.path, format!("chunk {i}: {e}")))?;
        out.write_all(&data).map_err(Failure::stdout)?;
        bar.tick();
    }
    out.flush().map_err(Failure::stdout)
}

fn run(cli: Cli) -> CliResult<ExitCode> {
    match cli.cmd {
        Cmd::Info { src, json } => {
            info::info(&src.path, src.offset, json).map(|_| ExitCode::SUCCESS)
        }
        Cmd::Chunks { src } => info::chunks(&src.path, src.offset).map(|_| ExitCode::SUCCESS),
        Cmd::Verify { src } => verify::verify(&src.path, src.offset),
        Cmd::Cat { src, chunk } => cat(&src, chunk).map(|_| ExitCode::SUCCESS),
        Cmd::Convert(a) => convert::convert(&a).map(|_| ExitCode::SUCCESS),
        Cmd::Compact { path } => convert::compact(&path).map(|_| ExitCode::SUCCESS),
        Cmd::Recover { src, dst } => {
            convert::recover(&src.path, src.offset, &dst).map(|_| ExitCode::SUCCESS)
        }
        Cmd::GenerateMan { dir } => man::generate(&dir).map(|_| ExitCode::SUCCESS),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(f) if f.quiet => ExitCode::SUCCESS,
        Err(f) => {
            eprintln!("b2frame: {}: {}", f.path.display(), f.reason);
            ExitCode::FAILURE
        }
    }
}
