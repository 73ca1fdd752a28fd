//! The one output layer: commands return an [`Output`] and this module prints it.
//!
//! Data goes to stdout: a table or text by default, one JSON document with `--json`. Status
//! lines and warnings go to stderr and `--quiet` mutes them. Progress bars appear only on a
//! terminal, never with `--json` or `--no-progress`, and only for work that lasts more than a
//! second. A closed stdout (`toolctl tool list | head`) ends output quietly, not with a panic.
//!
//! Human output shows what a catalog holds, and a catalog comes from anywhere (a pull request's
//! `tool.json`, an MCP server's tool list): every control character in it other than newline
//! and tab (C0, DEL, C1) is written as a visible escape ([`visible`]: `\u001b`, `\r`), here,
//! for every command, so no escape sequence, bell or carriage return of a catalog reaches a
//! terminal or a CI log. toolctl's own colours are laid on after that ([`Painted`], the
//! `warning:`/`error:`/`hint:` labels). JSON (`--json`) goes out as serde_json writes it.

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
    /// `--json` prints the document on one line: the last line of JSON Lines whose lines
    /// before it were printed as they came (`invoke --stream`'s events).
    pub one_line: bool,
}

/// The human form of an output.
#[derive(Debug)]
pub enum Human {
    /// Text on stdout (tables are rendered to text by [`table`]'s `trim_fmt`).
    Text(String),
    /// Text on stdout with toolctl's own styles in it.
    Painted(Painted),
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
            exit: toolctl_lib::base::error_code::exit::SUCCESS,
            note: None,
            one_line: false,
        }
    }

    /// The same output, its JSON on one line (see [`Output::one_line`]).
    pub fn on_one_line(mut self, one_line: bool) -> Self {
        self.one_line = one_line;
        self
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

/// Human text with toolctl's own styles: each piece is made [`visible`] on its own and its
/// style laid on after, so the only escape sequences that reach the terminal are toolctl's.
#[derive(Debug, Default)]
pub struct Painted(Vec<(Style, String)>);

impl Painted {
    /// Text as it is.
    pub fn plain(&mut self, text: impl Into<String>) {
        self.0.push((Style::new(), text.into()));
    }

    /// Text in `style`.
    pub fn styled(&mut self, style: Style, text: impl Into<String>) {
        self.0.push((style, text.into()));
    }

    fn render(&self) -> String {
        self.0
            .iter()
            .map(|(style, text)| format!("{style}{}{style:#}", visible(text)))
            .collect()
    }
}

/// `text` with every control character but newline and tab (C0, DEL, C1) and every
/// bidirectional control (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C: they reorder
/// what follows, so a description could show other text than it holds) written as a visible
/// escape, in JSON's spelling (`\r`, `\b`, `\f`, `\u001b`, `\u009b`, `\u202e`): a terminal
/// shows what is there instead of obeying it. JSON text stays valid JSON with the same meaning (serde_json
/// leaves DEL and C1 characters raw in strings, the only place they can be). A backslash of
/// the text is left as it is, so a description that says `\u001b` in letters looks the same
/// as one holding the character; the letters never act.
pub fn visible(text: &str) -> std::borrow::Cow<'_, str> {
    let hidden = |c: char| {
        (c.is_control() && c != '\n' && c != '\t')
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{061c}')
    };
    if !text.contains(hidden) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '\r' => out.push_str("\\r"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if hidden(c) => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
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
            let mut text = if output.one_line {
                serde_json::to_string(&output.json)
            } else {
                serde_json::to_string_pretty(&output.json)
            }
            .unwrap_or_default();
            text.push('\n');
            text
        } else {
            match &output.human {
                Human::Text(text) if text.is_empty() => String::new(),
                Human::Text(text) if text.ends_with('\n') => visible(text).into_owned(),
                Human::Text(text) => format!("{}\n", visible(text)),
                Human::Painted(painted) => painted.render(),
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
            write_stderr(&format!("{}\n", visible(line)));
        }
    }

    /// A warning on stderr, unless `--quiet`: one line, as an error's first line is (a
    /// newline in it, from a file's name or text, is written `\n`).
    pub fn warn(&self, message: &str) {
        self.warn_list(message, &[]);
    }

    /// A warning and the lines that go with it, each one line, indented.
    pub fn warn_list(&self, message: &str, lines: &[String]) {
        if !self.quiet {
            let one_line = |text: &str| visible(text).replace('\n', "\\n");
            let mut text = format!("{WARNING}warning:{WARNING:#} {}\n", one_line(message));
            for line in lines {
                text.push_str(&format!("  {}\n", one_line(line)));
            }
            write_stderr(&text);
        }
    }

    /// An error report on stderr (never muted). Its first line is one line: a newline in the
    /// message (a name from a file) is written `\n`, so it cannot start a line of its own.
    pub fn error(&self, message: &str, causes: &[String], hints: &[String]) {
        let message = visible(message).replace('\n', "\\n");
        let mut text = format!("{ERROR}error:{ERROR:#} {message}\n");
        for cause in causes {
            text.push_str(&format!("caused by: {}\n", visible(cause)));
        }
        for hint in hints {
            text.push_str(&format!("{HINT}hint:{HINT:#} {}\n", visible(hint)));
        }
        write_stderr(&text);
    }

    /// Whether a person can be asked a question: stdin and stderr are terminals.
    pub fn can_confirm(&self) -> bool {
        io::stdin().is_terminal() && io::stderr().is_terminal()
    }

    /// Ask a yes/no question on the terminal; anything but "y"/"yes" is no.
    pub fn confirm(&self, question: &str) -> bool {
        write_stderr(&format!("{} [y/N] ", visible(question)));
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

/// Cut `text` to `max` characters for a table cell.
pub fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        let mut cut: String = text.chars().take(max.saturating_sub(1)).collect();
        cut.push('…');
        cut
    }
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
    fn control_characters_are_shown_in_json_spelling_and_json_stays_json() {
        assert_eq!(
            visible("a\tb\nc\r\u{1b}[2J\u{7}\u{8}\u{c}\u{0}\u{7f}\u{9b}é\\"),
            "a\tb\nc\\r\\u001b[2J\\u0007\\b\\f\\u0000\\u007f\\u009bé\\"
        );
        assert_eq!(
            visible("a\u{202e}b\u{2066}c\u{200f}d\u{61c}"),
            "a\\u202eb\\u2066c\\u200fd\\u061c"
        );
        assert!(matches!(
            visible("plain\ttext\n"),
            std::borrow::Cow::Borrowed(_)
        ));
        let value = serde_json::json!({ "k\u{7f}": "v\u{9b}\u{1b}\r" });
        let text = serde_json::to_string_pretty(&value).unwrap();
        let shown = visible(&text);
        assert!(
            !shown.contains(|c: char| c.is_control() && c != '\n'),
            "{shown}"
        );
        assert_eq!(serde_json::from_str::<Value>(&shown).unwrap(), value);
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
