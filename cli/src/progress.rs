//! A one-line progress bar on stderr, shown only when stderr is a terminal and the operation
//! has enough steps to be worth it.
//!
//! The bar never scrolls the terminal: each redraw starts with `\r` and clears the rest of the
//! line, and when the operation ends (or is abandoned because of an error) the line is erased,
//! so the next message — the error line, the shell prompt — starts on a clean line. Redraws
//! are rate-limited twice over: only when the whole percentage changes (at most ~100 redraws
//! however many steps there are) and at most every [`MIN_INTERVAL`].

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// Below this many steps the operation is quick and the bar would only flicker.
pub const MIN_STEPS: i64 = 64;

/// Shortest time between two redraws.
const MIN_INTERVAL: Duration = Duration::from_millis(100);

/// Bar width in cells.
const WIDTH: i64 = 30;

/// ANSI "erase from the cursor to the end of the line".
const CLEAR_EOL: &str = "\x1b[K";

pub struct Progress {
    label: &'static str,
    total: i64,
    done: i64,
    shown: bool,
    /// Percentage of the last redraw.
    last_pct: i64,
    last_draw: Instant,
}

impl Progress {
    /// A bar over `total` steps; drawn at once (0%) when it is to be shown at all.
    pub fn new(label: &'static str, total: i64) -> Progress {
        Progress::with_terminal(label, total, std::io::stderr().is_terminal())
    }

    /// As [`Progress::new`], but `terminal` says whether stderr may show it (`cat` also
    /// refuses when its data goes to the same terminal).
    pub fn with_terminal(label: &'static str, total: i64, terminal: bool) -> Progress {
        let mut p = Progress {
            label,
            total,
            done: 0,
            shown: terminal && total >= MIN_STEPS,
            last_pct: 0,
            last_draw: Instant::now(),
        };
        if p.shown {
            p.draw();
        }
        p
    }

    fn pct(&self) -> i64 {
        self.done * 100 / self.total.max(1)
    }

    fn draw(&mut self) {
        let pct = self.pct();
        let fill = (pct * WIDTH / 100) as usize;
        let mut e = std::io::stderr().lock();
        let _ = write!(
            e,
            "\r{} [{}{}] {pct:3}% {}/{}{CLEAR_EOL}",
            self.label,
            "#".repeat(fill),
            "-".repeat(WIDTH as usize - fill),
            self.done,
            self.total
        );
        let _ = e.flush();
        self.last_pct = pct;
        self.last_draw = Instant::now();
    }

    /// One step done.
    pub fn tick(&mut self) {
        self.done += 1;
        if !self.shown {
            return;
        }
        if self.done >= self.total {
            self.finish();
        } else if self.pct() != self.last_pct && self.last_draw.elapsed() >= MIN_INTERVAL {
            self.draw();
        }
    }

    /// Erases the bar (idempotent).
    pub fn finish(&mut self) {
        if self.shown {
            let mut e = std::io::stderr().lock();
            let _ = write!(e, "\r{CLEAR_EOL}");
            let _ = e.flush();
            self.shown = false;
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        // An interrupted bar must not leave half a line before an error message.
        self.finish();
    }
}
