//! `tool list` and `bundle list` served from the index: the filters and the keyset page are
//! one SQL query, and only the files of the page shown are read. The results are those of
//! [`Catalog::list_tools`] and [`Catalog::list_bundles`] (which read every file; a test holds
//! the two to the same answers), with page tokens that work for either.

use super::{Index, Result};
use crate::catalog::{
    BundleEntry, BundleFilter, Catalog, Error as CatalogError, Page, ToolEntry, ToolFilter, page,
};
use rusqlite::types::Value as SqlValue;

impl Index {
    /// The bundle folders (IDs) of bundles named by slug or ID. A name not found while some
    /// bundle.json cannot be read says so in its hint (it may be that bundle).
    pub fn bundle_dirs(&self, names: &[String]) -> Result<Vec<String>> {
        names
            .iter()
            .map(|name| {
                self.conn
                    .query_row(
                        "SELECT dir FROM bundle WHERE slug = ?1 OR bundle_id = ?1 OR dir = ?1",
                        [name],
                        |r| r.get::<_, String>(0),
                    )
                    .map_err(|e| match e {
                        rusqlite::Error::QueryReturnedNoRows => CatalogError::NotFound {
                            what: "bundle",
                            name: name.clone(),
                            // Else the command line adds where to see them.
                            hint: self.unreadable_bundle(),
                        }
                        .into(),
                        other => self.db_error(other),
                    })
            })
            .collect()
    }

    /// The hint of [`crate::catalog::unreadable_bundle_hint`] when some bundle.json cannot be
    /// read.
    fn unreadable_bundle(&self) -> Option<crate::catalog::Hint> {
        let (dir, problem, count) = self
            .conn
            .query_row(
                "SELECT dir, problem, (SELECT count(*) FROM bundle WHERE problem IS NOT NULL)
                 FROM bundle WHERE problem IS NOT NULL ORDER BY dir LIMIT 1",
                [],
                |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, i64>(2)?,
                    ))
                },
            )
            .ok()?;
        // As the catalog names it (the index does not know where the catalog is).
        let path = std::path::Path::new(crate::catalog::BUNDLES_DIR)
            .join(dir)
            .join(crate::catalog::BUNDLE_FILE);
        Some(crate::catalog::unreadable_bundle_hint(
            &path,
            &problem,
            usize::try_from(count).unwrap_or(0),
        ))
    }

    /// One page of `tool list`.
    pub fn list_tools(
        &self,
        catalog: &Catalog,
        filter: &ToolFilter,
        size: usize,
        token: Option<&str>,
    ) -> Result<Page<ToolEntry>> {
        let size = page::check_size(size)?;
        let fingerprint = page::fingerprint(filter);
        let after = token.map(|t| page::decode(t, &fingerprint)).transpose()?;
        // Bundles outside (CROSS JOIN keeps them there) in slug order (INDEXED BY), each one's
        // tools by its index: rows come in list order, a bundle's tools sorted among
        // themselves, and the read stops with the page. SQLite's own choice sorts the whole
        // catalog (a 100,000-tool index: ~60 ms).
        let mut sql = String::from(
            "SELECT t.path, bu.slug, t.slug_dir, t.version
             FROM bundle bu INDEXED BY bundle_by_slug CROSS JOIN tool t ON t.bundle_dir = bu.dir
             WHERE t.tool_id IS NOT NULL AND bu.bundle_id IS NOT NULL AND bu.problem IS NULL",
        );
        let mut params: Vec<SqlValue> = Vec::new();
        let mark = |value: String, params: &mut Vec<SqlValue>| {
            params.push(SqlValue::Text(value));
            format!("?{}", params.len())
        };
        if !filter.include_disabled {
            sql.push_str(" AND t.is_enabled = 1 AND bu.is_enabled = 1");
        }
        if !filter.include_deleted {
            sql.push_str(" AND bu.is_deleted = 0");
        }
        if !filter.bundles.is_empty() {
            let marks: Vec<String> = self
                .bundle_dirs(&filter.bundles)?
                .into_iter()
                .map(|dir| mark(dir, &mut params))
                .collect();
            sql.push_str(&format!(" AND t.bundle_dir IN ({})", marks.join(", ")));
        }
        for tag in &filter.tags {
            let m = mark(tag.clone(), &mut params);
            sql.push_str(&format!(
                " AND EXISTS (SELECT 1 FROM json_each(t.tags) WHERE json_each.value = {m})"
            ));
        }
        if let Some(after) = &after {
            let [bundle, slug, version] = after.as_slice() else {
                return Err(CatalogError::invalid(page::TOKEN_INPUT, vec![]).into());
            };
            let (b, s, v) = (
                mark(bundle.clone(), &mut params),
                mark(slug.clone(), &mut params),
                mark(version.clone(), &mut params),
            );
            sql.push_str(&format!(
                " AND (bu.slug, t.slug_dir, t.version) > ({b}, {s}, {v})"
            ));
        }
        sql.push_str(&format!(
            " ORDER BY bu.slug, t.slug_dir, t.version LIMIT {}",
            size + 1
        ));
        let mut rows: Vec<(String, Vec<String>)> = self
            .conn
            .prepare(&sql)
            .and_then(|mut statement| {
                statement
                    .query_map(rusqlite::params_from_iter(params), |r| {
                        Ok((r.get(0)?, vec![r.get(1)?, r.get(2)?, r.get(3)?]))
                    })?
                    .collect()
            })
            .map_err(|e| self.db_error(e))?;
        let next_page_token = if rows.len() > size {
            rows.truncate(size);
            rows.last().map(|(_, key)| page::encode(key, &fingerprint))
        } else {
            None
        };
        let mut problems = self.problems(catalog)?;
        let mut items = Vec::with_capacity(rows.len());
        let mut reader = catalog.tool_reader();
        for (path, _) in rows {
            match reader.tool_at(&path) {
                Ok(Some(entry)) => items.push(entry),
                Ok(None) => {}
                Err(problem) => problems.push(problem),
            }
        }
        Ok(Page {
            items,
            next_page_token,
            problems,
        })
    }

    /// One page of `bundle list`, with each bundle's number of tools.
    pub fn list_bundles(
        &self,
        catalog: &Catalog,
        filter: &BundleFilter,
        size: usize,
        token: Option<&str>,
    ) -> Result<Page<(BundleEntry, usize)>> {
        let size = page::check_size(size)?;
        let fingerprint = page::fingerprint(filter);
        let after = token.map(|t| page::decode(t, &fingerprint)).transpose()?;
        let mut sql = String::from(
            "SELECT bu.dir, bu.slug, (SELECT count(*) FROM tool t WHERE t.bundle_dir = bu.dir AND (t.stamp != '' OR t.path LIKE 'builtin:%'))
             FROM bundle bu WHERE bu.bundle_id IS NOT NULL AND bu.problem IS NULL",
        );
        let mut params: Vec<SqlValue> = Vec::new();
        if !filter.include_disabled {
            sql.push_str(" AND bu.is_enabled = 1");
        }
        if !filter.include_deleted {
            sql.push_str(" AND bu.is_deleted = 0");
        }
        if !filter.bundles.is_empty() {
            let marks: Vec<String> = self
                .bundle_dirs(&filter.bundles)?
                .into_iter()
                .map(|dir| {
                    params.push(SqlValue::Text(dir));
                    format!("?{}", params.len())
                })
                .collect();
            sql.push_str(&format!(" AND bu.dir IN ({})", marks.join(", ")));
        }
        if let Some(slug) = after.as_ref().and_then(|a| a.first()) {
            params.push(SqlValue::Text(slug.clone()));
            sql.push_str(&format!(" AND bu.slug > ?{}", params.len()));
        }
        sql.push_str(&format!(" ORDER BY bu.slug LIMIT {}", size + 1));
        let mut rows: Vec<(String, String, i64)> = self
            .conn
            .prepare(&sql)
            .and_then(|mut statement| {
                statement
                    .query_map(rusqlite::params_from_iter(params), |r| {
                        Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                    })?
                    .collect()
            })
            .map_err(|e| self.db_error(e))?;
        let next_page_token = if rows.len() > size {
            rows.truncate(size);
            rows.last()
                .map(|(_, slug, _)| page::encode(std::slice::from_ref(slug), &fingerprint))
        } else {
            None
        };
        let mut problems = self.problems(catalog)?;
        let mut items = Vec::with_capacity(rows.len());
        for (dir, _, count) in rows {
            let entry = if dir == "builtin" {
                Ok(Some(catalog.builtin_bundle()))
            } else {
                catalog.load_bundle(&catalog.bundles_dir().join(&dir), &dir)
            };
            match entry {
                Ok(Some(entry)) => items.push((entry, count as usize)),
                Ok(None) => {}
                Err(problem) => problems.push(problem),
            }
        }
        Ok(Page {
            items,
            next_page_token,
            problems,
        })
    }
}
