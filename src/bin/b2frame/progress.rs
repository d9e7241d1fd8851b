//! A one-line progress bar on stderr, shown only when stderr is a terminal and the operation
//! has enough steps to be worth it.

use std::io::{IsTerminal, Write};

pub struct Progress {
    label: &'static str,
    total: i64,
    done: i64,
    shown: bool,
}

/// Below this many steps the operation is quick and the bar would only flicker.
const MIN_STEPS: i64 = 64;

impl Progress {
    pub fn new(label: &'static str, total: i64) -> Progress {
        Progress {
            label,
            total,
            done: 0,
            shown: total >= MIN_STEPS && std::io::stderr().is_terminal(),
        }
    }

    /// One step done; redraws at each whole percent.
    pub fn tick(&mut self) {
        self.done += 1;
        if !self.shown {
            return;
        }
        let pct = self.done * 100 / self.total.max(1);
        if self.done == self.total || pct != (self.done - 1) * 100 / self.total.max(1) {
            let width = 40;
            let fill = (pct * width / 100) as usize;
            let mut e = std::io::stderr().lock();
            let _ = write!(
                e,
                "\r{} [{}{}] {:3}% {}/{}",
                self.label,
                "#".repeat(fill),
                " ".repeat(width as usize - fill),
                pct,
                self.done,
                self.total
            );
            if self.done == self.total {
                let _ = writeln!(e);
            }
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        // An interrupted bar must not leave the cursor mid-line before an error message.
        if self.shown && self.done != self.total {
            let _ = writeln!(std::io::stderr());
        }
    }
}
