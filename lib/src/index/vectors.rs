//! Each tool's vector under the built-in semantic model ([`static_model`](super::static_model)),
//! stored in the index when the tool is indexed, so a request is compared with the whole
//! catalog by embedding the request alone.
//!
//! A vector is stored as `dims` int8 components and one scale (a little-endian `f32` first):
//! component `i` is `byte_i × scale`. Tool vectors are of unit length, so the largest component
//! maps to ±127 and the rounding moves a cosine by about 0.002 at most; a 256-dimension vector
//! takes 260 bytes (10,000 tools: 2.6 MB), a quarter of `f32`s, and every vector is read per
//! request: from `vector_pack`, one row holding them all, which the first request after a
//! change makes (each write of a vector empties it), so a request reads one row, not one a
//! tool.

use super::static_model::Model;
use super::{Index, Result, ToolText};
use rusqlite::OptionalExtension;

/// The text a tool is embedded as: what a model reads best of it, as the index holds it. Its
/// name in words, its description and tags, then its arguments' names and the values they
/// accept, each part labelled so a short tool reads as a sentence ("get weather. Weather for a
/// city. Arguments: city units. Values: celsius fahrenheit."). The arguments' descriptions are
/// left out: with all-MiniLM-L6-v2 on NESTFUL at 10,000 distractors they took `hybrid` from
/// 0.823 capped Recall@5 to 0.795 (long argument descriptions drown the tool's own words),
/// where names and values alone give 0.828. What a tool returns is left out too (it is a BM25F
/// field only): it lowered `hybrid` to 0.812 (docs/QUALITY.md).
pub fn embedding_text(text: &ToolText) -> String {
    let parts = [
        ("", text.name.as_str()),
        ("", text.description.as_str()),
        ("Tags: ", text.tags.as_str()),
        ("Arguments: ", text.arg_names.as_str()),
        ("Values: ", text.arg_values.as_str()),
    ];
    parts
        .iter()
        .filter(|(_, t)| !t.trim().is_empty())
        .map(|(label, t)| {
            let t = t.trim();
            let end = if t.ends_with(['.', '!', '?']) {
                ""
            } else {
                "."
            };
            format!("{label}{t}{end}")
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `text`'s stored vector under the built-in model: empty when the model cannot be loaded (the
/// tool then has no vector, and a request falls back to lexical ranking) or the text holds no
/// word the model knows.
pub fn stored_vector(text: &ToolText) -> Vec<u8> {
    match Model::builtin() {
        Ok(model) => quantize(&model.embed(&embedding_text(text))),
        Err(_) => Vec::new(),
    }
}

/// `vector` as stored: the scale, then one byte per component; empty for an all-zero vector.
pub fn quantize(vector: &[f32]) -> Vec<u8> {
    let largest = vector.iter().fold(0f32, |m, x| m.max(x.abs()));
    if largest == 0.0 || !largest.is_finite() {
        return Vec::new();
    }
    let scale = largest / 127.0;
    let mut out = Vec::with_capacity(4 + vector.len());
    out.extend_from_slice(&scale.to_le_bytes());
    out.extend(
        vector
            .iter()
            .map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8 as u8),
    );
    out
}

/// The dot product of `query` with a stored vector; `None` when `stored` is not a vector of
/// `query`'s dimensions.
pub fn dot(query: &[f32], stored: &[u8]) -> Option<f32> {
    let (scale, bytes) = stored.split_first_chunk::<4>()?;
    if bytes.len() != query.len() {
        return None;
    }
    // Sixteen running sums, not one: the compiler then adds them in SIMD registers (a single
    // sum waits on each addition before the next), and every tool's vector is one of these.
    const LANES: usize = 16;
    let mut lanes = [0f32; LANES];
    let (q_chunks, b_chunks) = (query.chunks_exact(LANES), bytes.chunks_exact(LANES));
    let tail: f32 = q_chunks
        .remainder()
        .iter()
        .zip(b_chunks.remainder())
        .map(|(q, b)| q * f32::from(*b as i8))
        .sum();
    for (q, b) in q_chunks.zip(b_chunks) {
        for i in 0..LANES {
            lanes[i] += q[i] * f32::from(b[i] as i8);
        }
    }
    Some((lanes.iter().sum::<f32>() + tail) * f32::from_le_bytes(*scale))
}

/// The (row, vector) pairs of a pack: `ids` 8 bytes a row (little-endian), `vectors` `width`
/// bytes a row in the same order; `None` when the two do not agree.
fn unpack<'a>(
    ids: &'a [u8],
    vectors: &'a [u8],
    width: usize,
) -> Option<impl Iterator<Item = (i64, &'a [u8])>> {
    let count = ids.len() / 8;
    if !ids.len().is_multiple_of(8) || width == 0 || vectors.len() != count * width {
        return None;
    }
    Some(
        ids.chunks_exact(8)
            .map(|b| i64::from_le_bytes(b.try_into().unwrap_or_default()))
            .zip(vectors.chunks_exact(width)),
    )
}

impl Index {
    /// The similarity of a task told as `parts` (the whole and its clauses) with each stored
    /// tool vector, by index row, ordered by row: each tool's largest cosine with one of them.
    /// `None` when the built-in model cannot be loaded or no part holds a word it knows.
    pub fn similarity(&self, parts: &[&str]) -> Result<Option<Vec<(i64, f64)>>> {
        let Ok(model) = Model::builtin() else {
            return Ok(None);
        };
        let queries: Vec<Vec<f32>> = parts
            .iter()
            .map(|part| model.embed(part))
            .filter(|q| q.iter().any(|x| *x != 0.0))
            .collect();
        if queries.is_empty() {
            return Ok(None);
        }
        let width = 4 + queries[0].len();
        let best_of = |stored: &[u8]| {
            queries
                .iter()
                .filter_map(|q| dot(q, stored))
                .fold(None, |best: Option<f32>, c| {
                    Some(best.map_or(c, |b| b.max(c)))
                })
        };
        // The pack: every vector of the model's width in one row, read at once (a row a tool
        // costs more than the dot products).
        let packed = self
            .conn
            .prepare_cached("SELECT rows, vectors FROM vector_pack WHERE id = 1")
            .and_then(|mut stmt| {
                stmt.query_row([], |row| {
                    let ids = row.get_ref(0)?.as_blob()?;
                    let vectors = row.get_ref(1)?.as_blob()?;
                    Ok(unpack(ids, vectors, width).map(|pairs| {
                        pairs
                            .filter_map(|(id, stored)| Some((id, f64::from(best_of(stored)?))))
                            .collect::<Vec<_>>()
                    }))
                })
                .optional()
            })
            .map_err(|e| self.db_error(e))?
            .flatten();
        if let Some(cosines) = packed {
            return Ok(Some(cosines));
        }
        let mut stmt = self
            .conn
            .prepare_cached("SELECT id, vector FROM tool_vector ORDER BY id")
            .map_err(|e| self.db_error(e))?;
        let mut rows = stmt.query([]).map_err(|e| self.db_error(e))?;
        let mut cosines = Vec::new();
        let (mut ids, mut vectors) = (Vec::new(), Vec::new());
        while let Some(row) = rows.next().map_err(|e| self.db_error(e))? {
            let id: i64 = row.get(0).map_err(|e| self.db_error(e))?;
            let stored = row.get_ref(1).map_err(|e| self.db_error(e))?;
            let Ok(stored) = stored.as_blob() else {
                continue;
            };
            if stored.len() == width {
                ids.extend_from_slice(&id.to_le_bytes());
                vectors.extend_from_slice(stored);
            }
            if let Some(c) = best_of(stored) {
                cosines.push((id, f64::from(c)));
            }
        }
        drop(rows);
        // Kept for the next command until a vector changes (the triggers of `tool_vector`
        // empty the pack). A connection that cannot write (a read-only catalog, another
        // writer holding the lock) reads the rows again next time.
        let _ = self
            .conn
            .prepare_cached(
                "INSERT OR REPLACE INTO vector_pack (id, rows, vectors) VALUES (1, ?1, ?2)",
            )
            .and_then(|mut stmt| stmt.execute(rusqlite::params![ids, vectors]));
        Ok(Some(cosines))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantized_vectors_keep_their_cosines() {
        let model = Model::builtin().unwrap();
        let a = model.embed("get the weather forecast for a city");
        let b = model.embed("weather in a town, today and tomorrow");
        let exact: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        let stored = quantize(&b);
        assert_eq!(stored.len(), 4 + model.dims());
        let approx = dot(&a, &stored).unwrap();
        assert!((exact - approx).abs() < 0.005, "{exact} vs {approx}");
        assert!(exact > 0.3, "{exact}");
    }

    #[test]
    fn bad_stored_bytes_are_no_vector() {
        let q = [0.5f32; 4];
        assert_eq!(dot(&q, &[]), None);
        assert_eq!(dot(&q, &[0, 0, 0]), None);
        assert_eq!(dot(&q, &[0, 0, 128, 63, 1, 2, 3]), None);
        assert!(quantize(&[0.0; 8]).is_empty());
        assert!(quantize(&[f32::NAN; 2]).is_empty());
    }

    #[test]
    fn the_embedded_text_is_labelled_sentences() {
        let text = ToolText {
            name: "get weather".into(),
            description: "Weather for a city".into(),
            tags: String::new(),
            arg_names: "city units".into(),
            arg_values: "celsius fahrenheit".into(),
        };
        assert_eq!(
            embedding_text(&text),
            "get weather. Weather for a city. Arguments: city units. Values: celsius fahrenheit."
        );
    }
}
