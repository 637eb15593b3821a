//! The progress bar shown while a model's weights are read from disk: on stderr, only when
//! stderr is a terminal (never in piped or redirected output, never on stdout where the text
//! goes), and only once loading has taken long enough to notice — a model already in the page
//! cache loads without drawing anything.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Loading shorter than this shows no bar.
const SHOW_AFTER: Duration = Duration::from_millis(300);

/// Receives `(bytes_read, total_bytes)` reports and draws a bar once loading is slow.
pub struct LoadProgress {
    enabled: bool,
    start: Instant,
    bar: Option<ProgressBar>,
}

impl LoadProgress {
    /// A reporter for stderr (silent when stderr is not a terminal).
    pub fn new() -> LoadProgress {
        LoadProgress { enabled: std::io::stderr().is_terminal(), start: Instant::now(), bar: None }
    }

    /// Whether a bar can be drawn at all (stderr is a terminal).
    pub fn can_show(&self) -> bool {
        self.enabled
    }

    /// One report from the loader.
    pub fn update(&mut self, done: u64, total: u64) {
        if !self.enabled {
            return;
        }
        if self.bar.is_none() && done < total && self.start.elapsed() >= SHOW_AFTER {
            let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
            let style = ProgressStyle::with_template("loading {bar:40} {bytes}/{total_bytes} ({bytes_per_sec}, {eta} left)")
                .unwrap_or_else(|_| ProgressStyle::default_bar());
            bar.set_style(style);
            self.bar = Some(bar);
        }
        if let Some(bar) = &self.bar {
            bar.set_position(done);
        }
    }

    /// Removes the bar, leaving the terminal as it was.
    pub fn finish(self) {
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
        }
    }
}
