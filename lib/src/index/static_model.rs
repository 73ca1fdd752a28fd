//! The built-in semantic model: a static embedding table compiled into the binary, so meaning
//! can be compared without a server, a download or a model runtime.
//!
//! The table (`assets/static-model/`) is model2vec's distillation of all-MiniLM-L6-v2: one
//! 256-dimension int8 row per WordPiece token of MiniLM's (uncased BERT) vocabulary;
//! `scripts/distil_model.py` makes the files and their `NOTICE` says where the weights came
//! from and under which licences. A text's vector is the mean of its tokens' rows,
//! L2-normalised, as model2vec's `StaticModel.encode` computes it:
//!
//! 1. the text is cut to `512 × the median token length` characters;
//! 2. BERT's normaliser: control characters dropped, whitespace made a space, CJK ideographs
//!    made words of their own, accents stripped (NFD, non-spacing marks dropped), lower case;
//! 3. BERT's pre-tokeniser: words split at whitespace and at punctuation, each punctuation
//!    character a word;
//! 4. WordPiece: each word the longest vocabulary prefix, then the longest `##` pieces; a word
//!    that cannot be spelled so (or of more than 100 characters) is the unknown token;
//! 5. the first 512 tokens are kept, unknown ones dropped, and their rows averaged.
//!
//! Why not the `model2vec-rs` crate, which loads the same files: it parses the tokenizer with
//! the `tokenizers` crate, which costs 33–50 ms of CPU per process before the first text (more
//! than a whole `pick`) and about 95 s of compile time; what the model needs of it is the five
//! steps above, which a test holds to Python model2vec's vectors
//! (`fixtures/static-model/vectors.json`). The binary holds the vocabulary as
//! `assets/static-model/vocab.tsv` (tokenizer.json's, sorted; `scripts/static_model_derive.py`
//! writes it and a test holds it to tokenizer.json): loading checks it in one pass and cuts it
//! into buckets by a token's first two bytes, a token is found by binary search within its
//! bucket, and the table's rows are read where the binary holds them.

use std::sync::OnceLock;
use unicode_normalization::UnicodeNormalization;
use unicode_properties::{GeneralCategory, GeneralCategoryGroup, UnicodeGeneralCategory};

/// A file of the model, from `assets/static-model/` at the repository's root.
macro_rules! model_file {
    ($name:literal) => {
        include_bytes!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../assets/static-model/",
            $name
        ))
    };
}

/// `vocab.tsv`: the WordPiece vocabulary of MiniLM's `tokenizer.json`, `token<TAB>id` lines
/// sorted by the token's bytes.
static VOCAB_TSV: &[u8] = model_file!("vocab.tsv");
/// `model.safetensors`: the embedding table.
static TABLE: &[u8] = model_file!("model.safetensors");

/// The name of the built-in model wherever vectors are stored: vectors made under another name
/// (another table) are not compared with this model's.
pub const MODEL_ID: &str = "minilm-l6-static-256-int8@07b12198";

/// The most tokens of a text that count (model2vec's and the tokenizer's `max_length`).
const MAX_TOKENS: usize = 512;

/// WordPiece's longest word; a longer one is the unknown token.
const MAX_WORD_CHARS: usize = 100;

/// WordPiece's unknown token.
const UNKNOWN: &str = "[UNK]";

/// A model that could not be made from its bytes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the built-in semantic model cannot be loaded: {0}")]
pub struct Error(String);

/// A static embedding model: a vocabulary and one row of the table per token.
#[derive(Debug)]
pub struct Model {
    /// `vocab.tsv`'s lines, each `(token, id)`, ordered by [`bucket`] and then by token.
    vocab: Vec<(&'static str, u32)>,
    /// Where each bucket's tokens start in `vocab` (and the last one's end): a token is looked
    /// for among the few of its bucket.
    starts: Vec<u32>,
    unknown: Option<u32>,
    /// `rows × dims` int8 values, row-major.
    table: &'static [u8],
    dims: usize,
    /// How many characters of a text are read (model2vec: `max_length × median token length`).
    max_chars: usize,
}

impl Model {
    /// The model compiled into the binary, loaded on first use, once per process.
    pub fn builtin() -> Result<&'static Model, Error> {
        static MODEL: OnceLock<Result<Model, Error>> = OnceLock::new();
        MODEL
            .get_or_init(|| Model::from_bytes(VOCAB_TSV, TABLE))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// A model from a vocabulary (`token<TAB>id` lines, sorted by the token's bytes, each
    /// token once) and a `model.safetensors` holding one int8 tensor `embeddings` of `[tokens,
    /// dims]`. Bytes that are not such a model, or an id past the table's rows, are an
    /// [`Error`] that names the line.
    pub fn from_bytes(vocab_tsv: &'static [u8], table: &'static [u8]) -> Result<Model, Error> {
        let (rows, dims, table) = embeddings(table)?;
        let text = std::str::from_utf8(vocab_tsv)
            .map_err(|e| Error(format!("vocab.tsv: not UTF-8: {e}")))?;
        let mut vocab: Vec<(&'static str, u32)> = Vec::with_capacity(rows);
        // How many tokens have each length in characters, for the median.
        let mut lengths: Vec<usize> = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let bad = |why: &str| Error(format!("vocab.tsv line {}: {why}", n + 1));
            // A token is a few bytes: a plain scan finds the tab sooner than a searcher.
            let tab = line
                .bytes()
                .position(|b| b == b'\t')
                .ok_or_else(|| bad("not token<TAB>id"))?;
            let (token, id) = (&line[..tab], &line[tab + 1..]);
            let id: u32 = id.parse().map_err(|_| bad("the id is not a number"))?;
            if id as usize >= rows {
                return Err(bad(&format!("id {id} is past the table's {rows} rows")));
            }
            if token.is_empty() || vocab.last().is_some_and(|(last, _)| *last >= token) {
                return Err(bad(
                    "the tokens are not sorted, or one is empty or repeated",
                ));
            }
            let chars = if token.is_ascii() {
                token.len()
            } else {
                token.chars().count()
            };
            if lengths.len() <= chars {
                lengths.resize(chars + 1, 0);
            }
            lengths[chars] += 1;
            vocab.push((token, id));
        }
        // In bucket order: the tokens are in byte order, and so are their buckets but for the
        // `##` pieces (buckets past every word's), one run of tokens that moves to the end.
        let pieces = vocab.partition_point(|(t, _)| *t < "##");
        let after = pieces + vocab[pieces..].partition_point(|(t, _)| t.starts_with("##"));
        vocab[pieces..].rotate_left(after - pieces);
        debug_assert!(vocab.is_sorted_by_key(|(t, _)| bucket(t)));
        let mut starts = vec![0u32; BUCKETS + 1];
        for (token, _) in &vocab {
            starts[bucket(token) + 1] += 1;
        }
        for at in 1..starts.len() {
            starts[at] += starts[at - 1];
        }
        let mut model = Model {
            max_chars: MAX_TOKENS * median(&lengths),
            vocab,
            starts,
            unknown: None,
            table,
            dims,
        };
        model.unknown = model.id(UNKNOWN);
        Ok(model)
    }

    /// The id of `token`, if the vocabulary holds it.
    fn id(&self, token: &str) -> Option<u32> {
        let at = bucket(token);
        let among = &self.vocab[self.starts[at] as usize..self.starts[at + 1] as usize];
        among
            .binary_search_by(|(t, _)| (*t).cmp(token))
            .ok()
            .map(|i| among[i].1)
    }

    /// The number of dimensions of the model's vectors.
    pub fn dims(&self) -> usize {
        self.dims
    }

    /// The token ids of `text` that count, in order (unknown tokens dropped).
    pub fn tokens(&self, text: &str) -> Vec<u32> {
        let cut = text
            .char_indices()
            .nth(self.max_chars)
            .map_or(text, |(at, _)| &text[..at]);
        let mut ids = Vec::new();
        let clean = normalize(cut);
        for word in words(&clean) {
            self.word_pieces(word, &mut ids);
            if ids.len() >= MAX_TOKENS {
                break;
            }
        }
        ids.truncate(MAX_TOKENS);
        ids.retain(|id| Some(*id) != self.unknown);
        ids
    }

    /// `text`'s vector: the mean of its tokens' rows, of unit length; all zeros for a text
    /// without a known token.
    pub fn embed(&self, text: &str) -> Vec<f32> {
        let ids = self.tokens(text);
        let mut sum = vec![0f32; self.dims];
        for id in &ids {
            let row = &self.table[*id as usize * self.dims..][..self.dims];
            for (s, v) in sum.iter_mut().zip(row) {
                *s += f32::from(*v as i8);
            }
        }
        let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm > 0.0 {
            sum.iter_mut().for_each(|x| *x /= norm);
        }
        sum
    }

    /// Append `word`'s WordPiece ids to `ids`: the longest prefix in the vocabulary, then the
    /// longest `##` pieces; the unknown token if it cannot be spelled so.
    fn word_pieces(&self, word: &str, ids: &mut Vec<u32>) {
        // Most words are in the vocabulary whole: found without spelling them out.
        if word.len() <= MAX_WORD_CHARS
            && let Some(id) = self.id(word)
        {
            ids.push(id);
            return;
        }
        let chars: Vec<(usize, char)> = word.char_indices().collect();
        if chars.len() > MAX_WORD_CHARS {
            ids.extend(self.unknown);
            return;
        }
        let mut pieces = Vec::new();
        let mut start = 0;
        let mut piece = String::new();
        while start < chars.len() {
            let mut end = chars.len();
            let found = loop {
                if end == start {
                    break None;
                }
                piece.clear();
                if start > 0 {
                    piece.push_str("##");
                }
                let to = chars.get(end).map_or(word.len(), |(at, _)| *at);
                piece.push_str(&word[chars[start].0..to]);
                if let Some(id) = self.id(&piece) {
                    break Some(id);
                }
                end -= 1;
            };
            match found {
                Some(id) => pieces.push(id),
                None => {
                    ids.extend(self.unknown);
                    return;
                }
            }
            start = end;
        }
        ids.extend(pieces);
    }
}

/// How many buckets the vocabulary is cut into: one per first two bytes of a word, and one per
/// first two bytes after `##` of a word's continuation.
const BUCKETS: usize = 2 << 16;

/// `token`'s bucket.
fn bucket(token: &str) -> usize {
    let (rest, base) = match token.strip_prefix("##") {
        Some(rest) => (rest, 1 << 16),
        None => (token, 0),
    };
    let mut bytes = rest.bytes();
    let first = usize::from(bytes.next().unwrap_or(0));
    let second = usize::from(bytes.next().unwrap_or(0));
    base | first << 8 | second
}

/// numpy's median of the values counted in `counts` (`counts[v]`: how many are `v`), then
/// `int()`, as model2vec computes the median token length.
fn median(counts: &[usize]) -> usize {
    let n: usize = counts.iter().sum();
    if n == 0 {
        return 0;
    }
    // The value at sorted position `k`.
    let at = |k: usize| {
        let mut seen = 0;
        counts
            .iter()
            .position(|c| {
                seen += c;
                seen > k
            })
            .unwrap_or(0)
    };
    if n % 2 == 1 {
        at(n / 2)
    } else {
        (at(n / 2 - 1) + at(n / 2)) / 2
    }
}

/// The rows and dimensions of the safetensors file's `embeddings` tensor, and its data.
fn embeddings(file: &'static [u8]) -> Result<(usize, usize, &'static [u8]), Error> {
    let bad = |why: String| Error(format!("model.safetensors: {why}"));
    let tensors = safetensors::SafeTensors::deserialize(file).map_err(|e| bad(e.to_string()))?;
    let view = tensors
        .tensor("embeddings")
        .map_err(|_| bad("no tensor named embeddings".to_owned()))?;
    if view.dtype() != safetensors::Dtype::I8 {
        return Err(bad(format!("embeddings are {:?}, not I8", view.dtype())));
    }
    let &[rows, dims] = view.shape() else {
        return Err(bad(format!(
            "embeddings of shape {:?}, not [tokens, dims]",
            view.shape()
        )));
    };
    if rows == 0 || dims == 0 {
        return Err(bad(format!("embeddings of shape [{rows}, {dims}]")));
    }
    Ok((rows, dims, view.data()))
}

/// BERT's normaliser, as `tokenizer.json` sets it: clean text, CJK ideographs spaced, accents
/// stripped, lower case.
fn normalize(text: &str) -> String {
    if text.is_ascii() {
        // The same steps on ASCII, without the Unicode tables: NFD leaves it as it is and none
        // of it is a mark or an ideograph; its controls are C0 and DEL, and the controls that
        // are whitespace too (vertical tab, form feed) are dropped as controls.
        return text
            .bytes()
            .filter_map(|b| match b {
                b'\t' | b'\n' | b'\r' | b' ' => Some(' '),
                0..0x20 | 0x7f => None,
                _ => Some(char::from(b.to_ascii_lowercase())),
            })
            .collect();
    }
    normalize_unicode(text)
}

/// [`normalize`] by the Unicode tables, for any text.
fn normalize_unicode(text: &str) -> String {
    let mut clean = String::with_capacity(text.len());
    for c in text.chars() {
        if c == '\0' || c == '\u{fffd}' || is_control(c) {
            continue;
        }
        // BERT's whitespace is Unicode's `White_Space`.
        if c.is_whitespace() {
            clean.push(' ');
        } else if is_cjk(c) {
            clean.push(' ');
            clean.push(c);
            clean.push(' ');
        } else {
            clean.push(c);
        }
    }
    clean
        .nfd()
        .filter(|c| c.general_category() != GeneralCategory::NonspacingMark)
        .flat_map(char::to_lowercase)
        .collect()
}

/// BERT's pre-tokeniser: words split at whitespace (dropped) and punctuation (kept, one
/// character a word), as slices of `text`.
fn words(text: &str) -> Vec<&str> {
    let mut words = Vec::new();
    let mut start = None;
    for (at, c) in text.char_indices() {
        // Every ASCII character of Unicode's punctuation is ASCII punctuation.
        let punctuation = c.is_ascii_punctuation()
            || (!c.is_ascii() && c.general_category_group() == GeneralCategoryGroup::Punctuation);
        if punctuation || c.is_whitespace() {
            if let Some(from) = start.take() {
                words.push(&text[from..at]);
            }
            if punctuation {
                words.push(&text[at..at + c.len_utf8()]);
            }
        } else if start.is_none() {
            start = Some(at);
        }
    }
    if let Some(from) = start {
        words.push(&text[from..]);
    }
    words
}

/// BERT's control characters: the "other" categories, but tab, newline and carriage return.
fn is_control(c: char) -> bool {
    !matches!(c, '\t' | '\n' | '\r') && c.general_category_group() == GeneralCategoryGroup::Other
}

/// The CJK ideographs BERT makes words of their own.
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x4E00..=0x9FFF
        | 0x3400..=0x4DBF
        | 0x20000..=0x2A6DF
        | 0x2A700..=0x2B73F
        | 0x2B740..=0x2B81F
        | 0x2B920..=0x2CEAF
        | 0xF900..=0xFAFF
        | 0x2F800..=0x2FA1F)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// The cosine of two vectors of unit length (or zero).
    fn cosine(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    fn model() -> &'static Model {
        Model::builtin().expect("the built-in model loads")
    }

    /// `vocab.tsv` is `tokenizer.json`'s vocabulary, and `tokenizer.json` the tokenizer the
    /// steps of the module comment reproduce.
    #[test]
    fn the_vocabulary_is_the_tokenizers() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../assets/static-model/tokenizer.json"
        );
        let tokenizer: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        let wordpiece = &tokenizer["model"];
        assert_eq!(wordpiece["type"], "WordPiece");
        assert_eq!(wordpiece["unk_token"], UNKNOWN);
        assert_eq!(wordpiece["continuing_subword_prefix"], "##");
        assert_eq!(wordpiece["max_input_chars_per_word"], MAX_WORD_CHARS);
        assert_eq!(tokenizer["truncation"]["max_length"], MAX_TOKENS);
        assert_eq!(
            tokenizer["normalizer"],
            serde_json::json!({"type": "BertNormalizer", "clean_text": true,
                "handle_chinese_chars": true, "strip_accents": null, "lowercase": true})
        );
        assert_eq!(tokenizer["pre_tokenizer"]["type"], "BertPreTokenizer");
        let want = wordpiece["vocab"].as_object().unwrap();
        let m = model();
        assert_eq!(m.vocab.len(), want.len());
        for (token, id) in want {
            assert_eq!(m.id(token).map(u64::from), id.as_u64(), "{token:?}");
        }
    }

    #[test]
    fn ascii_is_normalised_as_by_the_unicode_tables() {
        let every: String = (0u8..0x80).map(char::from).collect();
        assert_eq!(normalize(&every), normalize_unicode(&every));
        let text = "Get\tthe WEATHER\x0bfor\x0c\x1fa City,\r\n(ISO-3166) #1!\x7f";
        assert_eq!(normalize(text), normalize_unicode(text));
        assert_eq!(
            words(&normalize(text)),
            [
                "get",
                "the",
                "weatherfora",
                "city",
                ",",
                "(",
                "iso",
                "-",
                "3166",
                ")",
                "#",
                "1",
                "!"
            ]
        );
    }

    #[test]
    fn vectors_match_python_model2vec() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../fixtures/static-model/vectors.json"
        );
        let golden: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        let texts = golden["texts"].as_array().unwrap();
        assert!(texts.len() >= 10);
        for case in texts {
            let text = case["text"].as_str().unwrap();
            let want: Vec<f32> = case["vector"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap() as f32)
                .collect();
            let got = model().embed(text);
            assert_eq!(got.len(), want.len(), "{text:?}");
            let zero = want.iter().all(|x| *x == 0.0);
            if zero {
                assert!(got.iter().all(|x| *x == 0.0), "{text:?}: {:?}", &got[..4]);
            } else {
                let close = got.iter().zip(&want).all(|(g, w)| (g - w).abs() < 1e-5);
                assert!(close, "{text:?}: cosine {}", cosine(&got, &want));
            }
        }
    }

    #[test]
    fn the_builtin_model_has_256_dimensions_and_its_vectors_unit_length() {
        assert_eq!(model().dims(), 256);
        let v = model().embed("Get the current weather forecast");
        let norm: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5, "{norm}");
        assert_eq!(model().embed("Get the current weather forecast"), v);
    }

    #[test]
    fn related_texts_are_closer_than_unrelated_ones() {
        let m = model();
        let weather = m.embed("what is the weather like in Paris tomorrow");
        let forecast = m.embed("get the weather forecast for a city");
        let email = m.embed("send an email message to a recipient");
        assert!(cosine(&weather, &forecast) > cosine(&weather, &email) + 0.1);
    }

    #[test]
    fn words_split_into_known_pieces_or_the_unknown_token() {
        let m = model();
        // "xylophonist" is spelled by pieces; a word of 101 letters is unknown and dropped.
        assert!(m.tokens("xylophonist").len() > 1);
        assert!(m.tokens(&"a".repeat(101)).is_empty());
        assert_eq!(m.tokens("Read, a FILE!").len(), 5);
        assert_eq!(m.tokens("café"), m.tokens("cafe"));
    }

    #[test]
    fn bad_bytes_are_an_error_not_a_panic() {
        let table: &'static [u8] = TABLE;
        for (vocab, why) in [
            (&b"\xff\tl\n"[..], "not UTF-8"),
            (b"a 1\n", "line 1: not token<TAB>id"),
            (b"a\t1\nb\tx\n", "line 2: the id is not a number"),
            (b"a\t99999999\n", "line 1: id 99999999 is past the table's"),
            (b"b\t1\na\t2\n", "line 2: the tokens are not sorted"),
            (
                b"a\t1\na\t2\n",
                "line 2: the tokens are not sorted, or one is empty or repeated",
            ),
            (
                b"\t1\n",
                "line 1: the tokens are not sorted, or one is empty",
            ),
        ] {
            let e = Model::from_bytes(vocab, table).unwrap_err();
            assert!(e.to_string().contains(why), "{e}");
        }
        let ok = b"a\t0\n";
        // A safetensors file: the header's length (u64, little-endian), the header, the data.
        let file = |header: &str, data: &[u8]| -> &'static [u8] {
            let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
            bytes.extend_from_slice(header.as_bytes());
            bytes.extend_from_slice(data);
            Box::leak(bytes.into_boxed_slice())
        };
        for (bytes, why) in [
            (&b""[..], "model.safetensors"),
            (file("{}", &[]), "no tensor named embeddings"),
            (
                file(
                    r#"{"embeddings":{"dtype":"F32","shape":[1,1],"data_offsets":[0,4]}}"#,
                    &[0; 4],
                ),
                "not I8",
            ),
            (
                file(
                    r#"{"embeddings":{"dtype":"I8","shape":[4],"data_offsets":[0,4]}}"#,
                    &[0; 4],
                ),
                "not [tokens, dims]",
            ),
            (
                file(
                    r#"{"embeddings":{"dtype":"I8","shape":[1,1],"data_offsets":[0,1]}}"#,
                    &[1],
                ),
                "",
            ),
        ] {
            match Model::from_bytes(ok, bytes) {
                Err(e) => assert!(!why.is_empty() && e.to_string().contains(why), "{e}"),
                // One token, one dimension: a model, and "a" is its one token.
                Ok(m) => {
                    assert!(why.is_empty());
                    assert_eq!(m.tokens("a b"), [0]);
                    assert_eq!(m.embed("a"), [1.0]);
                }
            }
        }
    }
}
