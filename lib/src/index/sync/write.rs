//! The index's writes: a tool's row and its search text, the rows cleared or dropped, and
//! the index's `meta` values.

use super::*;

/// The words of a tool's arguments, nested objects included, as three full-text columns:
/// their names (split into words), their descriptions, and the values they accept (`enum` and
/// `const`, of the argument and of its array `items`: a request often names the value a tool
/// accepts, "in celsius"). Defaults and examples are left out: they are what a tool would use,
/// not what it is about, and a request naming them is no hint.
#[derive(Debug, Default)]
pub(super) struct ArgumentText {
    pub(super) names: String,
    pub(super) descriptions: String,
    pub(super) values: String,
}

impl ArgumentText {
    pub(super) fn of(schema: Option<&Value>) -> Self {
        let mut text = Self::default();
        text.add(schema, 0);
        text
    }

    pub(super) fn add(&mut self, schema: Option<&Value>, depth: usize) {
        let Some(properties) = schema
            .and_then(|s| s.get("properties"))
            .and_then(Value::as_object)
        else {
            return;
        };
        for (name, spec) in properties {
            push_words(&mut self.names, &index_text(name));
            if let Some(text) = spec.get("description").and_then(Value::as_str) {
                push_words(&mut self.descriptions, text);
            }
            for accepting in [Some(spec), spec.get("items")].into_iter().flatten() {
                let values = accepting
                    .get("enum")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .chain(accepting.get("const"));
                for value in values {
                    match value {
                        Value::String(text) => push_words(&mut self.values, &index_text(text)),
                        Value::Number(_) | Value::Bool(_) => {
                            push_words(&mut self.values, &value.to_string())
                        }
                        _ => {}
                    }
                }
            }
            if depth < 3 {
                self.add(Some(spec), depth + 1);
                self.add(spec.get("items"), depth + 1);
            }
        }
    }
}

/// `words` added to `out`, space separated.
pub(super) fn push_words(out: &mut String, words: &str) {
    if !out.is_empty() {
        out.push(' ');
    }
    out.push_str(words);
}

/// Execute a statement, prepared once per connection (the sync runs the same few statements
/// thousands of times).
pub(super) fn execute_cached<P: rusqlite::Params>(
    tx: &Transaction,
    sql: &str,
    params: P,
) -> rusqlite::Result<usize> {
    tx.prepare_cached(sql)?.execute(params)
}

/// A time as nanoseconds since the epoch, so recency sorts as a number: the text form has no
/// fixed width (`…00Z` would sort after `…00.5Z`). Saturates outside 1677–2262.
pub(super) fn epoch_ns(time: jiff::Timestamp) -> i64 {
    let ns = time.as_nanosecond();
    i64::try_from(ns).unwrap_or(if ns < 0 { i64::MIN } else { i64::MAX })
}

/// A tool's row and full-text entry, ready to write: made where the file is parsed (a loader
/// thread during a check), so the main thread, the only writer, only writes.
pub(super) struct Record {
    pub(super) tool_id: String,
    pub(super) version: String,
    pub(super) tags: String,
    pub(super) is_enabled: bool,
    pub(super) unavailable: Option<String>,
    pub(super) modified_ns: i64,
    pub(super) created_ns: i64,
    pub(super) safe: bool,
    pub(super) bare_name: String,
    pub(super) qualified_name: String,
    /// The full-text columns ([`crate::index::bm25f::COLUMNS`]): name, tags, args, arg_text,
    /// arg_values, description, bundle, ident, output.
    pub(super) text: [String; 9],
    /// Its vector under the built-in model, as stored ([`crate::index::vectors`]); empty if none.
    pub(super) vector: Vec<u8>,
}

impl Record {
    pub(super) fn new(entry: &ToolEntry) -> Self {
        let tool = &entry.tool;
        let args = ArgumentText::of(entry.doc.get("argSchema"));
        let output = ArgumentText::of(entry.doc.get("outputSchema"));
        let name = name_words(&tool.slug, &tool.display_name);
        let tags = index_text(&tool.tags.join(" "));
        let vector = crate::index::vectors::stored_vector(&crate::index::ToolText {
            name: name.clone(),
            description: tool.description.clone(),
            tags: tags.clone(),
            arg_names: args.names.clone(),
            arg_values: args.values.clone(),
        });
        Self {
            tool_id: tool.tool_id.to_string(),
            version: tool.version.clone(),
            tags: serde_json::to_string(&tool.tags).unwrap_or_else(|_| "[]".into()),
            is_enabled: entry.is_enabled,
            unavailable: entry.unavailable.clone(),
            modified_ns: epoch_ns(tool.modified_at),
            created_ns: epoch_ns(tool.created_at),
            safe: tool.is_safe(),
            bare_name: names::wanted(&entry.bundle_slug, &tool.slug, false),
            qualified_name: names::wanted(&entry.bundle_slug, &tool.slug, true),
            text: [
                name,
                tags,
                args.names,
                args.descriptions,
                args.values,
                // As written (the embedding scorers read it from here); FTS5 splits the words.
                tool.description.clone(),
                index_text(&entry.bundle_slug),
                joined_identifiers(&tool.slug)
                    .into_iter()
                    .chain(joined_identifiers(&tool.display_name))
                    .collect::<Vec<_>>()
                    .join(" "),
                // What it returns: its properties' names and descriptions.
                [output.names, output.descriptions].join(" "),
            ],
            vector,
        }
    }
}

/// Write one tool's row and full-text entry.
pub(super) fn put_tool(
    tx: &Transaction,
    id: i64,
    record: &Record,
    stamp: &str,
    hash: Option<&str>,
) -> rusqlite::Result<()> {
    execute_cached(
        tx,
        "UPDATE tool SET stamp = ?2, content_hash = ?9, problem = NULL, tool_id = ?3, version = ?4,
                tags = ?5, is_enabled = ?6, unavailable = ?7, modified_ns = ?8, created_ns = ?10,
                safe = ?11, bare_name = ?12, qualified_name = ?13 WHERE id = ?1",
        params![
            id,
            stamp,
            record.tool_id,
            record.version,
            record.tags,
            record.is_enabled,
            record.unavailable,
            record.modified_ns,
            hash,
            record.created_ns,
            record.safe,
            record.bare_name,
            record.qualified_name,
        ],
    )?;
    execute_cached(tx, "DELETE FROM tool_fts WHERE rowid = ?1", [id])?;
    let [
        name,
        tags,
        args,
        arg_text,
        arg_values,
        description,
        bundle,
        ident,
        output,
    ] = &record.text;
    execute_cached(
        tx,
        "INSERT INTO tool_fts (rowid, name, tags, args, arg_text, arg_values, description, bundle, ident, output)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        params![
            id,
            name,
            tags,
            args,
            arg_text,
            arg_values,
            description,
            bundle,
            ident,
            output
        ],
    )?;
    // The pack of every vector is stale once one changes (see [`crate::index::vectors`]).
    execute_cached(tx, "DELETE FROM vector_pack", [])?;
    if record.vector.is_empty() {
        execute_cached(tx, "DELETE FROM tool_vector WHERE id = ?1", [id])?;
    } else {
        execute_cached(
            tx,
            "INSERT OR REPLACE INTO tool_vector (id, vector) VALUES (?1, ?2)",
            params![id, record.vector],
        )?;
    }
    Ok(())
}

/// Mark a tool row as not a tool (file gone, or cannot be used) and drop its text.
pub(super) fn clear_tool(
    tx: &Transaction,
    id: i64,
    stamp: &str,
    problem: Option<&str>,
    hash: Option<&str>,
) -> rusqlite::Result<()> {
    execute_cached(
        tx,
        "UPDATE tool SET stamp = ?2, content_hash = ?4, problem = ?3, tool_id = NULL,
                version = NULL, tags = '[]', is_enabled = 0, unavailable = NULL, modified_ns = 0,
                created_ns = 0, safe = 0, bare_name = NULL, qualified_name = NULL
         WHERE id = ?1",
        params![id, stamp, problem, hash],
    )?;
    execute_cached(tx, "DELETE FROM tool_fts WHERE rowid = ?1", [id])?;
    execute_cached(tx, "DELETE FROM tool_vector WHERE id = ?1", [id])?;
    execute_cached(tx, "DELETE FROM vector_pack", [])?;
    Ok(())
}

pub(super) fn delete_tools_where(
    tx: &Transaction,
    condition: &str,
    args: &[&dyn rusqlite::ToSql],
) -> rusqlite::Result<usize> {
    tx.execute(
        &format!("DELETE FROM tool_fts WHERE rowid IN (SELECT id FROM tool WHERE {condition})"),
        args,
    )?;
    tx.execute(
        &format!("DELETE FROM tool_vector WHERE id IN (SELECT id FROM tool WHERE {condition})"),
        args,
    )?;
    tx.execute("DELETE FROM vector_pack", [])?;
    tx.execute(&format!("DELETE FROM tool WHERE {condition}"), args)
}

pub(super) fn meta(tx: &rusqlite::Connection, key: &str) -> rusqlite::Result<String> {
    Ok(tx
        .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
        .optional()?
        .unwrap_or_default())
}

pub(super) fn set_meta(tx: &Transaction, key: &str, value: &str) -> rusqlite::Result<()> {
    execute_cached(
        tx,
        "INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        [key, value],
    )?;
    Ok(())
}
