//! BM25F: the relevance of a tool to a sentence, over the tool's fields apart.
//!
//! FTS5's own `bm25()` weighs each column's raw count of a word and normalises by the length of
//! the whole row, so a tool with long argument descriptions loses for a word of its name, and a
//! word counted in three fields saturates three times. BM25F (Robertson, Zaragoza & Taylor,
//! 2004) instead adds a word's counts over the fields first, each weighed and normalised by
//! that field's own length, and saturates once:
//!
//! ```text
//! tf~(t, d)   = Σ_f w_f · tf_f(t, d) / (1 − b_f + b_f · len_f(d) / avglen_f)
//! score(d)    = Σ_t idf(t) · q_t · (k1 + 1) · tf~ / (k1 + tf~)
//! idf(t)      = ln(1 + (N − df + 0.5) / (df + 0.5))          (Lucene's: never negative)
//! ```
//!
//! with k1 1.2 and b 0.75 (the textbook values), every field weighing 1 but argument values
//! (`enum`, `const`: 2; a request names the values a tool accepts), the bundle (0: a filter,
//! not a description) and the joined identifiers (0: `getweather`, a second form of the
//! name's words, there to be matched by name), and no length normalisation for argument
//! descriptions (b 0: a tool with many arguments is no less about each of them). Those two
//! choices are the only ones every cross-validation fold made on NESTFUL; tuning the rest did
//! not generalise (`bench/ranking_prototype.py`). `q_t` is 1 for each content word of the
//! query (once, however often it is repeated) and 0.5 for each pair of adjacent content words
//! found next to each other in one field ("book flight"), the pair's own IDF.
//!
//! **What a tool returns** (`outputSchema`: its properties' names and descriptions, as for the
//! arguments) is a field of its own, weighing 0.3: a request often names the value it wants
//! back ("the dial code of France", "how many confirmed cases"), which only the output
//! describes. It does not count in a word's document frequency (`df` is the number of tools
//! whose other fields hold the word): thousands of tools return an `id`, a `name` or a
//! `status`, which says nothing of how rare those words are among what tools do. On NESTFUL
//! with 10,000 distractors (`bench/ranking_prototype.py`'s corpus, the whole `pick`) this took
//! the mean capped Recall@5 from 0.789 to 0.800 and Recall@1 from 0.743 to 0.753, every data
//! set gaining or level; the weight is the best of 0.2–0.5 for each of them (0.795–0.800 over
//! that range), and counting the field in `df` did worse (0.792: sgd fell from 0.986 to 0.964).
//!
//! The counts come from the index itself, so they are the words FTS5 matches (Porter stems):
//! the query's words are stemmed by the same tokenizer (a one-row FTS5 table in the
//! connection's `temp` schema), each word's occurrences (tool, field, position) read from
//! `fts5vocab`'s `instance` view, and each tool's field lengths from FTS5's `docsize` record,
//! the average lengths from its totals record. The cost follows the occurrences of the query's
//! words, not the size of the catalog.

use super::{Index, Result};
use std::collections::HashMap;

/// The full-text columns, in table order.
pub(super) const COLUMNS: [&str; 9] = [
    "name",
    "tags",
    "args",
    "arg_text",
    "arg_values",
    "description",
    "bundle",
    "ident",
    "output",
];
const FIELDS: usize = COLUMNS.len();
/// The column of what a tool returns ([`COLUMNS`]): it weighs, but does not count in a word's
/// document frequency.
pub(super) const OUTPUT: usize = 8;
/// `w_f`, in [`COLUMNS`] order.
const WEIGHTS: [f64; FIELDS] = [1.0, 1.0, 1.0, 1.0, 2.0, 1.0, 0.0, 0.0, 0.3];
/// `b_f`, in [`COLUMNS`] order.
const B: [f64; FIELDS] = [0.75, 0.75, 0.75, 0.0, 0.75, 0.75, 0.75, 0.75, 0.75];
const K1: f64 = 1.2;
/// `q_t` of a pair of adjacent query words.
const BIGRAM_WEIGHT: f64 = 0.5;

/// The IDF of a word that `documents` of `tools` hold (Lucene's: always positive, so a word
/// most tools hold weighs next to nothing rather than less than nothing).
pub fn idf(tools: i64, documents: i64) -> f64 {
    let (n, d) = (tools.max(documents) as f64, documents as f64);
    (1.0 + (n - d + 0.5) / (d + 0.5)).ln()
}

/// One field count per column.
type Counts = [u32; FIELDS];

/// The saturated BM25F weight of one query term in a tool: `(k1 + 1) · tf~ / (k1 + tf~)` for
/// its counts per field `tf`, the tool's field lengths `len` and the averages `avg`.
fn saturated(tf: &Counts, len: &Counts, avg: &[f64; FIELDS]) -> f64 {
    let mut weighted = 0.0;
    for f in 0..FIELDS {
        if tf[f] == 0 || WEIGHTS[f] == 0.0 {
            continue;
        }
        let norm = if avg[f] > 0.0 {
            1.0 - B[f] + B[f] * f64::from(len[f]) / avg[f]
        } else {
            1.0
        };
        weighted += WEIGHTS[f] * f64::from(tf[f]) / norm.max(f64::MIN_POSITIVE);
    }
    (K1 + 1.0) * weighted / (K1 + weighted)
}

/// One occurrence of a term: the tool (index row), the field, the position in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Occurrence {
    doc: i64,
    field: usize,
    offset: u32,
}

/// Where a term occurs, ordered by tool, field, position.
type Postings = Vec<Occurrence>;

/// A sentence's terms, with what they found.
#[derive(Debug, Default)]
pub struct Relevance {
    /// How many tools hold each term in a field other than their output (0 for `None`).
    pub documents: Vec<i64>,
    /// The BM25F score of every tool that holds one of the terms, by index row.
    pub scores: HashMap<i64, f64>,
    /// What each term adds to a tool's score.
    pub shares: Shares,
}

/// What each term of a sentence (its words, then its pairs of adjacent words) adds to the
/// relevance of a tool: kept from the scoring, so a tool's shares are asked for a few tools
/// after the ranking (`pick`'s coverage of the request) without reading the index again.
#[derive(Debug, Default)]
pub struct Shares {
    /// Each term's weight in the score: its IDF (times the pair weight for a pair).
    weights: Vec<f64>,
    /// Each term's counts per field, in each tool that holds it, ordered by tool.
    counted: Vec<Vec<(i64, Counts)>>,
    /// The tools that hold a term, ordered, and their field lengths.
    ids: Vec<i64>,
    lengths: Vec<Counts>,
    averages: [f64; FIELDS],
}

impl Shares {
    /// How many terms there are.
    pub fn len(&self) -> usize {
        self.weights.len()
    }

    pub fn is_empty(&self) -> bool {
        self.weights.is_empty()
    }

    /// What each term adds to the relevance of the tool in index row `doc` (0 for a term it
    /// does not hold): the term's weight times its saturated BM25F weight in the tool. They
    /// add up to the tool's relevance.
    pub fn of(&self, doc: i64) -> Vec<f64> {
        let Ok(at) = self.ids.binary_search(&doc) else {
            return vec![0.0; self.len()];
        };
        self.weights
            .iter()
            .zip(&self.counted)
            .map(
                |(weight, list)| match list.binary_search_by_key(&doc, |(d, _)| *d) {
                    Ok(i) => weight * saturated(&list[i].1, &self.lengths[at], &self.averages),
                    Err(_) => 0.0,
                },
            )
            .collect()
    }
}

impl Index {
    /// Make the connection's query tables (in `temp`, so the index file is not touched):
    /// `query_words`, a one-column FTS5 table with the index's tokenizer, its `instance`
    /// view `query_stems`, and `tool_instances`, the `instance` view of the index.
    fn query_tables(&self) -> Result<()> {
        self.conn
            .execute_batch(&format!(
                "CREATE VIRTUAL TABLE IF NOT EXISTS temp.query_words USING fts5(word, tokenize = '{}');
                 CREATE VIRTUAL TABLE IF NOT EXISTS temp.query_stems USING fts5vocab(temp, query_words, 'instance');
                 CREATE VIRTUAL TABLE IF NOT EXISTS temp.tool_instances USING fts5vocab(main, tool_fts, 'instance');",
                super::TOKENIZER
            ))
            .map_err(|e| self.db_error(e))
    }

    /// The index term of each of `words` (the first the tokenizer makes of it), as FTS5 would
    /// index it: "flights" → "flight", "Météo" → "meteo".
    pub(super) fn index_terms(&self, words: &[String]) -> Result<Vec<Option<String>>> {
        self.query_tables()?;
        let run = || -> rusqlite::Result<Vec<Option<String>>> {
            self.conn.execute("DELETE FROM temp.query_words", [])?;
            let mut insert = self
                .conn
                .prepare_cached("INSERT INTO temp.query_words (rowid, word) VALUES (?1, ?2)")?;
            for (i, word) in words.iter().enumerate() {
                insert.execute(rusqlite::params![i as i64, word])?;
            }
            let mut terms = vec![None; words.len()];
            let mut read = self
                .conn
                .prepare_cached("SELECT doc, term FROM temp.query_stems ORDER BY doc, offset")?;
            let mut rows = read.query([])?;
            while let Some(row) = rows.next()? {
                let (doc, term): (i64, String) = (row.get(0)?, row.get(1)?);
                if let Some(slot) = usize::try_from(doc).ok().and_then(|d| terms.get_mut(d)) {
                    slot.get_or_insert(term);
                }
            }
            self.conn.execute("DELETE FROM temp.query_words", [])?;
            Ok(terms)
        };
        run().map_err(|e| self.db_error(e))
    }

    /// Every occurrence of the index term `term` in a field that weighs something, ordered
    /// by tool, then field, then position.
    fn postings(&self, term: &str) -> Result<Postings> {
        let mut statement = self
            .conn
            .prepare_cached("SELECT doc, col, offset FROM temp.tool_instances WHERE term = ?1")
            .map_err(|e| self.db_error(e))?;
        let mut rows = statement.query([term]).map_err(|e| self.db_error(e))?;
        let mut postings = Postings::new();
        while let Some(row) = rows.next().map_err(|e| self.db_error(e))? {
            // The column's name borrowed, not copied: a common word has thousands of rows.
            let read = || -> rusqlite::Result<(i64, Option<usize>, u32)> {
                let column = row.get_ref(1)?.as_str()?;
                Ok((
                    row.get(0)?,
                    COLUMNS.iter().position(|c| *c == column),
                    row.get(2)?,
                ))
            };
            let (doc, field, offset) = read().map_err(|e| self.db_error(e))?;
            // A word only in a column that weighs nothing (the bundle, joined identifiers)
            // neither makes a tool relevant nor counts in the word's IDF.
            if let Some(f) = field
                && WEIGHTS[f] > 0.0
            {
                postings.push(Occurrence {
                    doc,
                    field: f,
                    offset,
                });
            }
        }
        // `fts5vocab` gives them in this order already; the scoring relies on it.
        postings.sort_unstable();
        Ok(postings)
    }

    /// The field lengths of the tools `ids` (ordered, without repeats), in tokens as FTS5
    /// counted them, in the order of `ids`.
    fn lengths(&self, ids: &[i64]) -> Result<Vec<Counts>> {
        let list = serde_json::to_string(ids).unwrap_or_else(|_| "[]".to_owned());
        let mut statement = self
            .conn
            .prepare_cached(
                "SELECT id, sz FROM tool_fts_docsize WHERE id IN (SELECT value FROM json_each(?1))",
            )
            .map_err(|e| self.db_error(e))?;
        let mut rows = statement.query([list]).map_err(|e| self.db_error(e))?;
        let mut lengths = vec![Counts::default(); ids.len()];
        while let Some(row) = rows.next().map_err(|e| self.db_error(e))? {
            let read = || -> rusqlite::Result<(i64, Vec<u8>)> { Ok((row.get(0)?, row.get(1)?)) };
            let (id, sizes) = read().map_err(|e| self.db_error(e))?;
            let Ok(at) = ids.binary_search(&id) else {
                continue;
            };
            for (f, n) in varints(&sizes).take(FIELDS).enumerate() {
                lengths[at][f] = u32::try_from(n).unwrap_or(u32::MAX);
            }
        }
        Ok(lengths)
    }

    /// The average field lengths over the index, from FTS5's totals record (the number of rows,
    /// then the tokens of each column).
    fn average_lengths(&self) -> Result<[f64; FIELDS]> {
        use rusqlite::OptionalExtension;
        let record: Option<Vec<u8>> = self
            .conn
            .query_row("SELECT block FROM tool_fts_data WHERE id = 1", [], |r| {
                r.get(0)
            })
            .optional()
            .map_err(|e| self.db_error(e))?;
        let mut averages = [0.0; FIELDS];
        let mut values = varints(record.as_deref().unwrap_or_default());
        let rows = values.next().unwrap_or(0);
        if rows > 0 {
            for (f, total) in values.take(FIELDS).enumerate() {
                averages[f] = total as f64 / rows as f64;
            }
        }
        Ok(averages)
    }

    /// The BM25F relevance of every tool that holds a term of `terms` (the query's content
    /// words as index terms, in query order), with each term's document count.
    pub(super) fn relevance(&self, terms: &[Option<String>]) -> Result<Relevance> {
        self.query_tables()?;
        let tools = self.fts_rows()?;
        let postings: Vec<Postings> = terms
            .iter()
            .map(|t| {
                t.as_deref()
                    .map_or_else(|| Ok(Postings::new()), |t| self.postings(t))
            })
            .collect::<Result<_>>()?;
        let counted: Vec<Vec<(i64, Counts)>> = postings.iter().map(|p| per_tool(p)).collect();
        let documents: Vec<i64> = counted.iter().map(|c| describing(c)).collect();
        // Pairs of adjacent words found next to each other in one field, and where.
        let pairs: Vec<Vec<(i64, Counts)>> = postings
            .iter()
            .zip(postings.iter().skip(1))
            .map(|(a, b)| adjacent(a, b))
            .collect();
        let mut ids: Vec<i64> = counted.iter().flatten().map(|(doc, _)| *doc).collect();
        ids.sort_unstable();
        ids.dedup();
        let lengths = self.lengths(&ids)?;
        let averages = self.average_lengths()?;
        let weights: Vec<f64> = documents
            .iter()
            .map(|n| idf(tools, *n))
            .chain(
                pairs
                    .iter()
                    .map(|list| BIGRAM_WEIGHT * idf(tools, describing(list))),
            )
            .collect();
        let counted: Vec<Vec<(i64, Counts)>> = counted.into_iter().chain(pairs).collect();
        // Each list is ordered by tool, as `ids` is: one cursor a list walks them together.
        let mut sums = vec![0.0; ids.len()];
        for (list, weight) in counted.iter().zip(&weights) {
            let mut at = 0;
            for (doc, tf) in list {
                at += ids[at..].partition_point(|id| id < doc);
                sums[at] += weight * saturated(tf, &lengths[at], &averages);
            }
        }
        let scores = ids.iter().copied().zip(sums).collect();
        Ok(Relevance {
            documents,
            scores,
            shares: Shares {
                weights,
                counted,
                ids,
                lengths,
                averages,
            },
        })
    }
}

/// A term's counts per field in each tool that holds it, ordered by tool.
fn per_tool(postings: &[Occurrence]) -> Vec<(i64, Counts)> {
    let mut counted = Vec::new();
    for o in postings {
        tally(&mut counted, o);
    }
    counted
}

/// How many of the tools `counted` holds a term in a field that describes what they do (any
/// but [`OUTPUT`]): the term's document frequency.
fn describing(counted: &[(i64, Counts)]) -> i64 {
    counted
        .iter()
        .filter(|(_, tf)| tf.iter().enumerate().any(|(f, n)| f != OUTPUT && *n > 0))
        .count() as i64
}

/// Where the word of `second` follows the word of `first` in one field: the count per field
/// in each tool, ordered by tool. Both lists are ordered by (tool, field, position).
fn adjacent(first: &[Occurrence], second: &[Occurrence]) -> Vec<(i64, Counts)> {
    let mut found = Vec::new();
    for o in first {
        let next = Occurrence {
            offset: o.offset + 1,
            ..*o
        };
        if second.binary_search(&next).is_ok() {
            tally(&mut found, o);
        }
    }
    found
}

/// Count `o` in `counted` (ordered by tool, `o`'s tool last or new).
fn tally(counted: &mut Vec<(i64, Counts)>, o: &Occurrence) {
    match counted.last_mut() {
        Some((doc, tf)) if *doc == o.doc => tf[o.field] += 1,
        _ => {
            let mut tf = Counts::default();
            tf[o.field] = 1;
            counted.push((o.doc, tf));
        }
    }
}

/// The varints of an FTS5 record (SQLite's encoding: 7 bits a byte, high bit set when more
/// follow, the 9th byte whole).
fn varints(bytes: &[u8]) -> impl Iterator<Item = u64> + '_ {
    let mut i = 0;
    std::iter::from_fn(move || {
        if i >= bytes.len() {
            return None;
        }
        let mut value: u64 = 0;
        for k in 0..9 {
            let byte = *bytes.get(i)?;
            i += 1;
            if k == 8 {
                return Some((value << 8) | u64::from(byte));
            }
            value = (value << 7) | u64::from(byte & 0x7f);
            if byte & 0x80 == 0 {
                return Some(value);
            }
        }
        Some(value)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_read_as_sqlite_writes_them() {
        let read: Vec<u64> = varints(&[0x03, 0x81, 0x00, 0x28, 0xff, 0x7f]).collect();
        assert_eq!(read, [3, 128, 40, 0x3fff]);
        assert!(varints(&[]).next().is_none());
    }

    #[test]
    fn idf_favours_rare_words_and_is_never_negative() {
        assert!(idf(1000, 1) > idf(1000, 100));
        assert!(idf(1000, 1000) > 0.0);
        assert!(idf(10, 20) > 0.0);
    }

    #[test]
    fn fields_add_up_before_one_saturation() {
        let avg = [4.0, 2.0, 3.0, 10.0, 2.0, 20.0, 1.0, 1.0, 6.0];
        let len = [4, 2, 3, 10, 2, 20, 1, 1, 6];
        let once = |f: usize| {
            let mut tf = Counts::default();
            tf[f] = 1;
            saturated(&tf, &len, &avg)
        };
        // Once in a field of average length: (k1 + 1) · 1 / (k1 + 1) = 1.
        assert!((once(0) - 1.0).abs() < 1e-12);
        // The bundle weighs nothing; argument values twice a name word.
        assert_eq!(once(6), 0.0);
        assert_eq!(once(7), 0.0);
        let both = saturated(&[1, 0, 0, 0, 0, 1, 0, 0, 0], &len, &avg);
        assert!(
            both > once(0) && both < 2.0 * once(0),
            "saturates once: {both}"
        );
        let value = (K1 + 1.0) * 2.0 / (K1 + 2.0);
        assert!((once(4) - value).abs() < 1e-12);
        // What a tool returns weighs 0.3 of a name word.
        let output = (K1 + 1.0) * 0.3 / (K1 + 0.3);
        assert!((once(OUTPUT) - output).abs() < 1e-12);
    }

    #[test]
    fn long_fields_weigh_less_but_argument_descriptions_do_not() {
        let avg = [4.0, 2.0, 3.0, 10.0, 2.0, 20.0, 1.0, 1.0, 6.0];
        let short = [4, 2, 3, 10, 2, 10, 1, 1, 6];
        let long = [4, 2, 3, 40, 2, 80, 1, 1, 6];
        let description = [0, 0, 0, 0, 0, 1, 0, 0, 0];
        assert!(saturated(&description, &short, &avg) > saturated(&description, &long, &avg));
        let argument = [0, 0, 0, 1, 0, 0, 0, 0, 0];
        assert_eq!(
            saturated(&argument, &short, &avg),
            saturated(&argument, &long, &avg)
        );
    }

    fn at(doc: i64, field: usize, offset: u32) -> Occurrence {
        Occurrence { doc, field, offset }
    }

    #[test]
    fn a_word_only_in_what_a_tool_returns_does_not_count_in_its_document_frequency() {
        // Tool 1 holds the word in its description and its output, tool 2 in its output
        // alone, tool 3 in its name.
        let postings = [at(1, 5, 0), at(1, OUTPUT, 2), at(2, OUTPUT, 0), at(3, 0, 1)];
        let counted = per_tool(&postings);
        assert_eq!(counted.len(), 3);
        assert_eq!(describing(&counted), 2);
    }

    #[test]
    fn occurrences_are_counted_per_tool_and_field() {
        let postings = [at(3, 0, 0), at(3, 0, 4), at(3, 5, 1), at(7, 2, 0)];
        let counted = per_tool(&postings);
        let mut three = Counts::default();
        (three[0], three[5]) = (2, 1);
        let mut seven = Counts::default();
        seven[2] = 1;
        assert_eq!(counted, [(3, three), (7, seven)]);
    }

    #[test]
    fn a_pair_is_the_second_word_right_after_the_first_in_the_same_field() {
        // "book" then "flight": tool 1 has "book flight" in field 0 twice and "book … flight"
        // apart in field 5; tool 2 has "flight" right after "book" but in another field;
        // tool 4 has "flight book" (the wrong order).
        let book = [
            at(1, 0, 0),
            at(1, 0, 6),
            at(1, 5, 2),
            at(2, 0, 3),
            at(4, 0, 1),
        ];
        let flight = [
            at(1, 0, 1),
            at(1, 0, 7),
            at(1, 5, 9),
            at(2, 5, 4),
            at(4, 0, 0),
        ];
        let mut one = Counts::default();
        one[0] = 2;
        assert_eq!(adjacent(&book, &flight), [(1, one)]);
        assert!(adjacent(&flight, &[]).is_empty());
    }
}
