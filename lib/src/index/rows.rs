//! The live tools as rows, for the commands that look at the whole catalog at once (`pick`,
//! `export`, exported names): one query instead of reading every `tool.json`, and the words
//! of each tool as the full-text index holds them, for the keyword scorer.

use super::{Index, Result};

/// A tool of a live bundle (not soft-deleted; files that could not be used are left out).
#[derive(Debug, Clone)]
pub struct ToolRow {
    /// The row's id in the full-text table.
    pub id: i64,
    /// `tool.json` relative to the catalog, or `builtin:<slug>`.
    pub path: String,
    /// The bundle's folder under `bundles/` (`builtin` for the built-in bundle).
    pub bundle_dir: String,
    pub bundle_slug: String,
    pub slug: String,
    pub version: String,
    pub tool_id: String,
    /// The tool's own flag.
    pub is_enabled: bool,
    pub bundle_enabled: bool,
    /// Why this binary cannot use it, if it cannot.
    pub unavailable: Option<String>,
    pub safe: bool,
    /// `createdAt` in nanoseconds: registration order.
    pub created_ns: i64,
    /// Its indexed words: name, description, tags, argument names and values (empty unless
    /// asked for).
    pub text: ToolText,
}

impl ToolRow {
    /// A tool of the built-in bundle.
    pub fn is_builtin(&self) -> bool {
        self.bundle_dir == super::sync::BUILTIN_DIR
    }
}

/// The words of a tool as indexed (what the embedding scorers embed).
#[derive(Debug, Clone, Default)]
pub struct ToolText {
    /// The slug's words, then the display name's words the slug does not hold.
    pub name: String,
    /// As written.
    pub description: String,
    pub tags: String,
    /// The arguments' names, as words (nested ones too).
    pub arg_names: String,
    /// The values the arguments accept (`enum`, `const`), as words.
    pub arg_values: String,
}

/// The full-text fields the keyword scorer looks in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Name,
    Tags,
    Description,
    ArgNames,
    ArgText,
    ArgValues,
}

impl Field {
    fn column(self) -> &'static str {
        match self {
            Self::Name => "{name ident}",
            Self::Tags => "tags",
            Self::Description => "description",
            Self::ArgNames => "args",
            Self::ArgText => "arg_text",
            Self::ArgValues => "arg_values",
        }
    }
}

/// The conditions on a tool row (alias `t`) and its bundle row (alias `bu`) for the tool to be
/// live: a usable file in a usable bundle that is not soft-deleted.
pub(super) fn live(t: &str, bu: &str) -> String {
    format!(
        "{t}.tool_id IS NOT NULL AND {bu}.bundle_id IS NOT NULL AND {bu}.problem IS NULL
         AND {bu}.is_deleted = 0"
    )
}

/// A query for [`ToolRow`]s of the live tools that also meet `condition` (on `t` and `bu`);
/// read them with [`tool_row`].
pub(super) fn tool_row_sql(with_text: bool, condition: &str) -> String {
    let (text_columns, join) = if with_text {
        (
            "f.name, f.description, f.tags, f.args, f.arg_values",
            "JOIN tool_fts f ON f.rowid = t.id",
        )
    } else {
        ("'', '', '', '', ''", "")
    };
    format!(
        "SELECT t.id, t.path, t.bundle_dir, bu.slug, t.slug_dir, t.version, t.tool_id, t.is_enabled,
                bu.is_enabled, t.unavailable, t.safe, t.created_ns, {text_columns}
         FROM tool t JOIN bundle bu ON bu.dir = t.bundle_dir {join}
         WHERE {live} AND ({condition})",
        live = live("t", "bu")
    )
}

/// A row of a [`tool_row_sql`] query.
pub(super) fn tool_row(r: &rusqlite::Row) -> rusqlite::Result<ToolRow> {
    Ok(ToolRow {
        id: r.get(0)?,
        path: r.get(1)?,
        bundle_dir: r.get(2)?,
        bundle_slug: r.get(3)?,
        slug: r.get(4)?,
        version: r.get(5)?,
        tool_id: r.get(6)?,
        is_enabled: r.get(7)?,
        bundle_enabled: r.get(8)?,
        unavailable: r.get(9)?,
        safe: r.get(10)?,
        created_ns: r.get(11)?,
        text: ToolText {
            name: r.get(12)?,
            description: r.get(13)?,
            tags: r.get(14)?,
            arg_names: r.get(15)?,
            arg_values: r.get(16)?,
        },
    })
}

impl Index {
    /// Every tool of every live bundle, in registration order (`createdAt`, then toolID).
    /// With `with_text`, each row carries its indexed words too.
    pub fn tool_rows(&self, with_text: bool) -> Result<Vec<ToolRow>> {
        self.rows_where(&tool_row_sql(with_text, "TRUE"), [])
    }

    /// [`Index::tool_rows`] of the bundles in the folders `bundle_dirs` alone, read through
    /// the index of a bundle's tools: the cost grows with those bundles, not the catalog.
    pub fn tool_rows_in(&self, bundle_dirs: &[String], with_text: bool) -> Result<Vec<ToolRow>> {
        let dirs = serde_json::to_string(bundle_dirs).unwrap_or_default();
        let sql = tool_row_sql(
            with_text,
            "t.bundle_dir IN (SELECT value FROM json_each(?1))",
        );
        self.rows_where(&sql, [dirs])
    }

    /// The rows `sql` (a [`tool_row_sql`]) selects, in registration order.
    fn rows_where(&self, sql: &str, params: impl rusqlite::Params) -> Result<Vec<ToolRow>> {
        let mut statement = self.conn.prepare(sql).map_err(|e| self.db_error(e))?;
        let rows = statement
            .query_map(params, tool_row)
            .map_err(|e| self.db_error(e))?;
        let mut rows: Vec<ToolRow> = rows
            .collect::<rusqlite::Result<_>>()
            .map_err(|e| self.db_error(e))?;
        // Sorted here: SQLite's ORDER BY builds a temporary b-tree of whole rows, which cost
        // ~25 ms at 10,000 tools against ~1 ms for this sort.
        rows.sort_unstable_by(|a, b| (a.created_ns, &a.tool_id).cmp(&(b.created_ns, &b.tool_id)));
        Ok(rows)
    }

    /// The ids of the tools whose `field` holds `token` as a word, compared as the index
    /// compares words (case and diacritics folded, Porter stems: "forecasts" = "forecast").
    /// `token` is a query token (letters and digits only, see [`super::text::query_tokens`]).
    pub fn tools_with_word(&self, field: Field, token: &str) -> Result<Vec<i64>> {
        let expression = format!("{} : {}", field.column(), super::text::quoted(token));
        let mut statement = self
            .conn
            .prepare_cached("SELECT rowid FROM tool_fts WHERE tool_fts MATCH ?1")
            .map_err(|e| self.db_error(e))?;
        let ids = statement
            .query_map([expression], |r| r.get(0))
            .map_err(|e| self.db_error(e))?;
        ids.collect::<rusqlite::Result<_>>()
            .map_err(|e| self.db_error(e))
    }
}
