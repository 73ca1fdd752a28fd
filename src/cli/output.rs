//! The one output layer: commands return an [`Output`] and this module prints it.
//!
//! Data goes to stdout: a table or text by default, one JSON document with `--json`. Status
//! lines and warnings go to stderr and `--quiet` mutes them. Progress bars appear only on a
//! terminal, never with `--json` or `--no-progress`, and only for work that lasts more than a
//! second. A closed stdout (`toolctl tool list | head`) ends output quietly, not with a panic.

use anstyle::{AnsiColor, Style};
use comfy_table::{ColumnConstraint, ContentArrangement, Table, presets};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::Value;
use std::io::{self, IsTerminal, Write};
use std::time::{Duration, Instant};

/// What a command prints.
#[derive(Debug)]
pub struct Output {
    /// The document printed with `--json`.
    pub json: Value,
    /// What a person sees otherwise.
    pub human: Human,
    /// The exit code once printed: success, unless the output itself reports a failure
    /// (`validate` finding errors).
    pub exit: u8,
    /// A status line for stderr after the human form (`more: --page-token …`); never with
    /// `--json`, muted by `--quiet`.
    pub note: Option<String>,
}

/// The human form of an output.
#[derive(Debug)]
pub enum Human {
    /// Text on stdout (tables are rendered to text by [`table`]'s `trim_fmt`).
    Text(String),
    /// A status line on stderr (for changes: the data is in the JSON form).
    Status(String),
    /// Bytes written to stdout as they are (an archive sent to `-o -`).
    Raw(Vec<u8>),
    /// Nothing.
    Nothing,
}

impl Output {
    pub fn new(json: Value, human: Human) -> Self {
        Self {
            json,
            human,
            exit: crate::base::error_code::exit::SUCCESS,
            note: None,
        }
    }

    /// No output at all, not even under `--json`.
    pub fn nothing() -> Self {
        Self::new(Value::Null, Human::Nothing)
    }

    /// The same output with a status line after it (see [`Output::note`]).
    pub fn with_note(mut self, note: Option<String>) -> Self {
        self.note = note;
        self
    }

    /// The same output, ending the process with `code`.
    pub fn with_exit(mut self, code: u8) -> Self {
        self.exit = code;
        self
    }
}

/// A table in toolctl's house style: no borders, a header, wrapped to the terminal's width
/// when stdout is one.
pub fn table<I, S>(header: I) -> Table
where
    I: IntoIterator<Item = S>,
    S: Into<comfy_table::Cell>,
{
    let mut table = Table::new();
    table.load_style(presets::NOTHING).set_header(header);
    for column in table.column_iter_mut() {
        column.set_padding((0, 2));
    }
    if io::stdout().is_terminal() {
        table.set_content_arrangement(ContentArrangement::Dynamic);
    }
    table
}

/// A list table as text: one line per row. On a terminal it fits the terminal's width: every
/// column but the last keeps its content whole (a tool reference is never cut or broken), and
/// the last one (a description, a reason) takes the width left, cut with "…". Piped, nothing
/// is cut: `grep` sees whole descriptions.
pub fn render_list(table: Table) -> String {
    let width = if io::stdout().is_terminal() {
        table.width()
    } else {
        None
    };
    render_list_at(table, width)
}

fn render_list_at(mut table: Table, width: Option<u16>) -> String {
    match width {
        Some(width) => {
            table
                .set_content_arrangement(ContentArrangement::Dynamic)
                .set_width(width)
                .set_truncation_indicator("…");
            let last = table.column_count().saturating_sub(1);
            // The last column is cut, never its header.
            let header = table
                .header()
                .and_then(|h| h.cell_iter().last())
                .map_or(0, |c| c.content().chars().count());
            for (i, column) in table.column_iter_mut().enumerate() {
                column.set_constraint(if i < last {
                    ColumnConstraint::ContentWidth
                } else {
                    ColumnConstraint::LowerBoundary(comfy_table::Width::Fixed(
                        u16::try_from(header).unwrap_or(u16::MAX),
                    ))
                });
            }
            for row in table.row_iter_mut() {
                row.max_height(1);
            }
        }
        None => {
            table.set_content_arrangement(ContentArrangement::Disabled);
        }
    }
    table.trim_fmt()
}

/// How output is shown, from the global flags.
#[derive(Debug, Clone)]
pub struct Ui {
    pub json: bool,
    pub quiet: bool,
    pub no_progress: bool,
}

const ERROR: Style = AnsiColor::Red.on_default().bold();
const WARNING: Style = AnsiColor::Yellow.on_default().bold();
const HINT: Style = AnsiColor::Cyan.on_default().bold();

impl Ui {
    /// Print a command's output. A closed stdout is not an error.
    pub fn emit(&self, output: &Output) -> io::Result<()> {
        if let (false, Human::Raw(bytes)) = (self.json, &output.human) {
            // Binary: past anstream, which would strip what looks like terminal escapes.
            return write_all(&mut io::stdout().lock(), bytes);
        }
        if output.json.is_null() && matches!(output.human, Human::Nothing) {
            return Ok(());
        }
        let text = if self.json {
            let mut text = serde_json::to_string_pretty(&output.json).unwrap_or_default();
            text.push('\n');
            text
        } else {
            match &output.human {
                Human::Text(text) if text.is_empty() => String::new(),
                Human::Text(text) if text.ends_with('\n') => text.clone(),
                Human::Text(text) => format!("{text}\n"),
                Human::Status(line) => {
                    self.status(line);
                    String::new()
                }
                Human::Nothing | Human::Raw(_) => String::new(),
            }
        };
        // JSON goes out byte for byte (anstream would strip a DEL inside a string); human
        // text goes through anstream, which drops terminal escapes when stdout is not a
        // terminal.
        if self.json {
            write_all(&mut io::stdout().lock(), text.as_bytes())
        } else {
            write_all(&mut anstream::stdout().lock(), text.as_bytes())?;
            if let Some(note) = &output.note {
                self.status(note);
            }
            Ok(())
        }
    }

    /// A status line on stderr, unless `--quiet`.
    pub fn status(&self, line: &str) {
        if !self.quiet {
            write_stderr(&format!("{line}\n"));
        }
    }

    /// A warning on stderr, unless `--quiet`.
    pub fn warn(&self, message: &str) {
        if !self.quiet {
            write_stderr(&format!("{WARNING}warning:{WARNING:#} {message}\n"));
        }
    }

    /// An error report on stderr (never muted).
    pub fn error(&self, message: &str, causes: &[String], hints: &[String]) {
        let mut text = format!("{ERROR}error:{ERROR:#} {message}\n");
        for cause in causes {
            text.push_str(&format!("caused by: {cause}\n"));
        }
        for hint in hints {
            text.push_str(&format!("{HINT}hint:{HINT:#} {hint}\n"));
        }
        write_stderr(&text);
    }

    /// Whether a person can be asked a question: stdin and stderr are terminals.
    pub fn can_confirm(&self) -> bool {
        io::stdin().is_terminal() && io::stderr().is_terminal()
    }

    /// Ask a yes/no question on the terminal; anything but "y"/"yes" is no.
    pub fn confirm(&self, question: &str) -> bool {
        write_stderr(&format!("{question} [y/N] "));
        let mut answer = String::new();
        io::stdin().read_line(&mut answer).is_ok()
            && matches!(answer.trim().to_lowercase().as_str(), "y" | "yes")
    }

    /// A progress bar for `len` steps that appears only on a terminal, and only once the work
    /// has lasted a second.
    pub fn progress(&self, len: u64, message: &'static str) -> Progress {
        let enabled = !self.json && !self.no_progress && io::stderr().is_terminal();
        let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::hidden());
        if let Ok(style) = ProgressStyle::with_template("{msg} {wide_bar} {pos}/{len} ({eta})") {
            bar.set_style(style);
        }
        bar.set_message(message);
        Progress {
            bar,
            enabled,
            started: Instant::now(),
            shown: false,
        }
    }
}

/// A progress bar that shows itself after a second of work (see [`Ui::progress`]).
#[derive(Debug)]
pub struct Progress {
    bar: ProgressBar,
    enabled: bool,
    started: Instant,
    shown: bool,
}

impl Progress {
    /// Record that `done` of `total` steps are done.
    pub fn update(&mut self, done: usize, total: usize) {
        self.bar.set_length(total as u64);
        self.bar.set_position(done as u64);
        if self.enabled && !self.shown && self.started.elapsed() >= Duration::from_secs(1) {
            self.shown = true;
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

/// Write to stdout; a closed pipe ends output silently.
fn write_all(out: &mut impl Write, bytes: &[u8]) -> io::Result<()> {
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// Write to stderr; there is nowhere to report a failure to write to stderr.
fn write_stderr(text: &str) {
    let mut err = anstream::stderr().lock();
    let _ = err.write_all(text.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools() -> Table {
        let mut t = table(["TOOL", "TYPE", "DESCRIPTION"]);
        t.add_row([
            "a-rather-long-bundle-name/a-rather-long-tool-name@v2025.11",
            "http",
            "Fetch the forecast for a place and a day, in metric or imperial units, with alerts.",
        ]);
        t.add_row(["w/now@v1", "native", "Tell the time."]);
        t
    }

    #[test]
    fn a_narrow_terminal_cuts_descriptions_never_references() {
        let text = render_list_at(tools(), Some(90));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        for line in &lines {
            assert!(line.chars().count() <= 90, "{line:?}");
        }
        assert!(
            lines[1]
                .starts_with("a-rather-long-bundle-name/a-rather-long-tool-name@v2025.11  http")
        );
        assert!(lines[1].ends_with('…'), "{text}");
        assert!(lines[2].ends_with("Tell the time."), "{text}");
        // Narrower than the reference: the reference still stands whole on its line.
        let text = render_list_at(tools(), Some(40));
        assert!(
            text.lines().any(
                |l| l.starts_with("a-rather-long-bundle-name/a-rather-long-tool-name@v2025.11")
            ),
            "{text}"
        );
    }

    #[test]
    fn piped_nothing_is_cut() {
        let text = render_list_at(tools(), None);
        assert!(
            text.contains("in metric or imperial units, with alerts."),
            "{text}"
        );
        assert_eq!(text.lines().count(), 3);
    }
}
