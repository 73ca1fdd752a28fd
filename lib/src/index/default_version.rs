//! The default versions a few tools at a time, for `pick` and `attach`, which show a handful of a
//! catalog's tools: whether a version stands for its slug, the rows of the tools shown, and
//! what their exported names depend on. Each is an indexed lookup, so the cost follows what is
//! shown, not the size of the catalog; [`Index::tool_rows`] reads all the default tools for the
//! commands that show all of it.

use super::rows::{live, tool_row, tool_row_sql};
use super::{Index, Result, ToolRow};
use rusqlite::OptionalExtension;
use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

/// Row `t` (of bundle `bu`) is the version that stands for its tool slug: of the live rows
/// with its bundle slug and tool slug, the enabled one with the newest `createdAt`, else the
/// newest (ties: the greater toolID, then the first path in byte order:
/// [`default_version_key`](crate::catalog::default_version_key)). The rule of
/// [`DefaultTools`](crate::index::default_tools::DefaultTools), which applies it to the whole catalog at once.
static IS_DEFAULT_VERSION: LazyLock<String> = LazyLock::new(|| {
    format!(
        "t.id = (SELECT o.id FROM tool o JOIN bundle ob ON ob.dir = o.bundle_dir
                 WHERE o.slug_dir = t.slug_dir AND ob.slug = bu.slug AND {live}
                 ORDER BY o.is_enabled DESC, o.created_ns DESC, o.tool_id DESC, o.path
                 LIMIT 1)",
        live = live("o", "ob")
    )
});

/// Row `t` (of bundle `bu`) can be called: enabled, in an enabled bundle, usable by this
/// binary, and safe unless the parameter `?allow_unsafe` is true.
const USABLE: &str = "t.is_enabled = 1 AND bu.is_enabled = 1 AND t.unavailable IS NULL
    AND (:allow_unsafe OR t.safe = 1)";

/// Where a tool comes in registration order: `createdAt`, then toolID, then the row, which
/// settles copies of one file.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Registration {
    pub created_ns: i64,
    pub tool_id: String,
    pub id: i64,
}

/// A row of `SELECT t.created_ns, t.tool_id, t.id`.
fn registration(r: &rusqlite::Row) -> rusqlite::Result<Registration> {
    Ok(Registration {
        created_ns: r.get(0)?,
        tool_id: r.get(1)?,
        id: r.get(2)?,
    })
}

/// A list of values as one SQL parameter, read back with `json_each`.
fn json_list<T: serde::Serialize>(values: &[T]) -> String {
    serde_json::to_string(values).unwrap_or_else(|_| "[]".to_owned())
}

impl Index {
    /// The live tools among rows `ids`, in the order of `ids`.
    pub fn rows_by_id(&self, ids: &[i64], with_text: bool) -> Result<Vec<ToolRow>> {
        let sql = tool_row_sql(with_text, "t.id IN (SELECT value FROM json_each(?1))");
        let mut rows: HashMap<i64, ToolRow> = self
            .collect(&sql, [json_list(ids)], tool_row)?
            .into_iter()
            .map(|row| (row.id, row))
            .collect();
        Ok(ids.iter().filter_map(|id| rows.remove(id)).collect())
    }

    /// The registrations of rows `ids`, whatever they are (live or not, usable or not), in
    /// registration order.
    pub fn registrations(&self, ids: &[i64]) -> Result<Vec<Registration>> {
        let mut found = self.collect(
            "SELECT t.created_ns, t.tool_id, t.id FROM tool t
             WHERE t.id IN (SELECT value FROM json_each(?1)) AND t.tool_id IS NOT NULL",
            [json_list(ids)],
            registration,
        )?;
        found.sort_unstable();
        Ok(found)
    }

    /// The usable tools among rows `ids` (enabled, available, safe unless allowed), whether or not their version stands
    /// for their slug, in registration order.
    pub fn usable_among(&self, ids: &[i64], allow_unsafe: bool) -> Result<Vec<Registration>> {
        let sql = format!(
            "SELECT t.created_ns, t.tool_id, t.id FROM tool t JOIN bundle bu ON bu.dir = t.bundle_dir
             WHERE t.id IN (SELECT value FROM json_each(:ids)) AND {live} AND {USABLE}",
            live = live("t", "bu")
        );
        let mut found = self.collect(
            &sql,
            rusqlite::named_params! { ":ids": json_list(ids), ":allow_unsafe": allow_unsafe },
            registration,
        )?;
        found.sort_unstable();
        Ok(found)
    }

    /// Which of rows `ids` are live versions that stand for their tool slug.
    pub fn default_among(&self, ids: &[i64]) -> Result<HashSet<i64>> {
        let sql = format!(
            "SELECT t.id FROM tool t JOIN bundle bu ON bu.dir = t.bundle_dir
             WHERE t.id IN (SELECT value FROM json_each(?1)) AND {live} AND {stands}",
            live = live("t", "bu"),
            stands = *IS_DEFAULT_VERSION
        );
        Ok(self
            .collect(&sql, [json_list(ids)], |r| r.get(0))?
            .into_iter()
            .collect())
    }

    /// The first `n` usable tools (enabled, available, safe unless allowed) that stand for their slug, in registration
    /// order, leaving out the rows `skip`.
    pub fn first_usable(
        &self,
        n: usize,
        allow_unsafe: bool,
        skip: &HashSet<i64>,
    ) -> Result<Vec<Registration>> {
        // `tool` first (CROSS JOIN keeps it outside) so its registration index gives the
        // order: the scan stops after `n` rows instead of sorting the catalog.
        let sql = format!(
            "SELECT t.created_ns, t.tool_id, t.id FROM tool t CROSS JOIN bundle bu ON bu.dir = t.bundle_dir
             WHERE {live} AND {USABLE} AND {stands}
             ORDER BY t.created_ns, t.tool_id, t.id",
            live = live("t", "bu"),
            stands = *IS_DEFAULT_VERSION
        );
        let mut statement = self
            .conn
            .prepare_cached(&sql)
            .map_err(|e| self.db_error(e))?;
        let mut rows = statement
            .query(rusqlite::named_params! { ":allow_unsafe": allow_unsafe })
            .map_err(|e| self.db_error(e))?;
        let mut found = Vec::new();
        while found.len() < n {
            let Some(row) = rows.next().map_err(|e| self.db_error(e))? else {
                break;
            };
            let registration = registration(row).map_err(|e| self.db_error(e))?;
            if !skip.contains(&registration.id) {
                found.push(registration);
            }
        }
        Ok(found)
    }

    /// How many usable tools (enabled, available, safe unless allowed) stand for their slug. A pass over the catalog.
    pub fn count_usable(&self, allow_unsafe: bool) -> Result<usize> {
        let sql = format!(
            "SELECT count(*) FROM tool t JOIN bundle bu ON bu.dir = t.bundle_dir
             WHERE {live} AND {USABLE} AND {stands}",
            live = live("t", "bu"),
            stands = *IS_DEFAULT_VERSION
        );
        let counts = self.collect(
            &sql,
            rusqlite::named_params! { ":allow_unsafe": allow_unsafe },
            |r| r.get::<_, i64>(0),
        )?;
        Ok(counts.first().map_or(0, |n| *n as usize))
    }

    /// The version that stands for the tool slug `slug` of the bundle with slug
    /// `bundle_slug`, usable or not.
    pub fn default_version_of(&self, bundle_slug: &str, slug: &str) -> Result<Option<ToolRow>> {
        let condition = format!(
            "bu.slug = ?1 AND t.slug_dir = ?2 AND {}",
            *IS_DEFAULT_VERSION
        );
        self.first(
            &tool_row_sql(false, &condition),
            [bundle_slug, slug],
            tool_row,
        )
    }

    /// The version that stands for the tool slug `slug` in the bundle folder `dir`, usable or
    /// not; none when it is in another folder (of a bundle with the same slug).
    pub fn default_version_in_folder(&self, dir: &str, slug: &str) -> Result<Option<ToolRow>> {
        let condition = format!(
            "t.bundle_dir = ?1 AND t.slug_dir = ?2 AND {}",
            *IS_DEFAULT_VERSION
        );
        self.first(&tool_row_sql(false, &condition), [dir, slug], tool_row)
    }

    /// The bundle folder and tool slug of the live tool with this toolID (of the newest, should
    /// copies share it).
    pub fn slug_of_tool_id(&self, tool_id: &str) -> Result<Option<(String, String)>> {
        let sql = format!(
            "SELECT t.bundle_dir, t.slug_dir FROM tool t JOIN bundle bu ON bu.dir = t.bundle_dir
             WHERE t.tool_id = ?1 AND {live}
             ORDER BY t.created_ns DESC, t.path LIMIT 1",
            live = live("t", "bu")
        );
        self.first(&sql, [tool_id], |r| Ok((r.get(0)?, r.get(1)?)))
    }

    /// The slug of a soft-deleted bundle that holds the tool with this toolID: why a tool no
    /// live bundle has left the catalog.
    pub fn deleted_bundle_of(&self, tool_id: &str) -> Result<Option<String>> {
        self.first(
            "SELECT bu.slug FROM tool t JOIN bundle bu ON bu.dir = t.bundle_dir
             WHERE t.tool_id = ?1 AND bu.is_deleted = 1 AND bu.bundle_id IS NOT NULL
               AND bu.problem IS NULL
             ORDER BY t.created_ns DESC, t.path LIMIT 1",
            [tool_id],
            |r| r.get(0),
        )
    }

    /// How many live bundles have a tool of each of `slugs` (slugs no live bundle has are left
    /// out).
    pub fn bundles_per_slug(&self, slugs: &[&str]) -> Result<HashMap<String, usize>> {
        let sql = format!(
            "SELECT t.slug_dir, count(DISTINCT bu.slug) FROM tool t JOIN bundle bu ON bu.dir = t.bundle_dir
             WHERE t.slug_dir IN (SELECT value FROM json_each(?1)) AND {live}
             GROUP BY t.slug_dir",
            live = live("t", "bu")
        );
        Ok(self
            .collect(&sql, [json_list(slugs)], |r| {
                Ok((r.get(0)?, r.get::<_, i64>(1)? as usize))
            })?
            .into_iter()
            .collect())
    }

    /// The tool slugs of live bundles, as (bundle slug, tool slug), whose slug or one of whose
    /// wanted exported names ([`crate::catalog::names::wanted`]) is one of `names`.
    pub fn slugs_near_names(&self, names: &[String]) -> Result<Vec<(String, String)>> {
        let sql = format!(
            "SELECT DISTINCT bu.slug, t.slug_dir FROM tool t JOIN bundle bu ON bu.dir = t.bundle_dir
             WHERE (t.slug_dir IN (SELECT value FROM json_each(?1))
                    OR t.bare_name IN (SELECT value FROM json_each(?1))
                    OR t.qualified_name IN (SELECT value FROM json_each(?1)))
               AND {live}",
            live = live("t", "bu")
        );
        self.collect(&sql, [json_list(names)], |r| Ok((r.get(0)?, r.get(1)?)))
    }

    /// The live tools of the bundle in folder `dir`, every version, usable or not, as (row, tool
    /// slug): the names a tool of that bundle can give another of it (`pick`'s helpers). An
    /// indexed read of that bundle alone.
    pub fn slugs_in_bundle(&self, dir: &str) -> Result<Vec<(i64, String)>> {
        let sql = format!(
            "SELECT t.id, t.slug_dir FROM tool t JOIN bundle bu ON bu.dir = t.bundle_dir
             WHERE t.bundle_dir = ?1 AND {live}",
            live = live("t", "bu")
        );
        self.collect(&sql, [dir], |r| Ok((r.get(0)?, r.get(1)?)))
    }

    /// The rows among `ids` whose tool says what it returns (an `outputSchema` with
    /// properties), in no order.
    pub fn with_output(&self, ids: &[i64]) -> Result<Vec<i64>> {
        self.collect(
            "SELECT rowid FROM tool_fts
             WHERE rowid IN (SELECT value FROM json_each(?1)) AND output != ''",
            [json_list(ids)],
            |r| r.get(0),
        )
    }

    /// Every tool slug of a live bundle, as (bundle slug, tool slug).
    pub fn all_slugs(&self) -> Result<Vec<(String, String)>> {
        let sql = format!(
            "SELECT DISTINCT bu.slug, t.slug_dir FROM tool t JOIN bundle bu ON bu.dir = t.bundle_dir
             WHERE {live}",
            live = live("t", "bu")
        );
        self.collect(&sql, [], |r| Ok((r.get(0)?, r.get(1)?)))
    }

    /// The rows of a query.
    fn collect<T, P: rusqlite::Params>(
        &self,
        sql: &str,
        params: P,
        read: impl FnMut(&rusqlite::Row) -> rusqlite::Result<T>,
    ) -> Result<Vec<T>> {
        let mut statement = self
            .conn
            .prepare_cached(sql)
            .map_err(|e| self.db_error(e))?;
        let rows = statement
            .query_map(params, read)
            .map_err(|e| self.db_error(e))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(|e| self.db_error(e))
    }

    /// The first row of a query, if any.
    fn first<T, P: rusqlite::Params>(
        &self,
        sql: &str,
        params: P,
        read: impl FnOnce(&rusqlite::Row) -> rusqlite::Result<T>,
    ) -> Result<Option<T>> {
        let mut statement = self
            .conn
            .prepare_cached(sql)
            .map_err(|e| self.db_error(e))?;
        statement
            .query_row(params, read)
            .optional()
            .map_err(|e| self.db_error(e))
    }
}
