//! The built-in semantic model: a static embedding table compiled into the binary, so meaning
//! can be compared without a server or a download.
//!
//! The table (`assets/static-model/`) is model2vec's distillation of all-MiniLM-L6-v2: one
//! 256-dimension int8 row per WordPiece token of MiniLM's vocabulary. A text's vector is the
//! mean of its tokens' rows, L2-normalised; `scripts/distil_model.py` makes the files and
//! their `NOTICE` says where the weights came from and under which licences.
//!
//! It lives in the index layer because tool vectors are computed when the index is built;
//! `pick` embeds the request with the same model.
//!
//! The model is parsed from the embedded bytes on first use, once per process
//! ([`Model::builtin`]). Bytes that are not a usable model are an [`Error`], never a panic:
//! besides what model2vec-rs checks, [`Model::from_bytes`] refuses a tokenizer whose token ids
//! reach past the table's rows, which model2vec-rs would index without a check.

use model2vec_rs::model::StaticModel;
use safetensors::SafeTensors;
use std::sync::OnceLock;

/// The folder of the model's files, relative to the crate's manifest.
macro_rules! model_file {
    ($name:literal) => {
        include_bytes!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/assets/static-model/",
            $name
        ))
    };
}

/// `tokenizer.json`: MiniLM's WordPiece tokenizer as model2vec writes it.
static TOKENIZER_JSON: &[u8] = model_file!("tokenizer.json");
/// `model.safetensors`: the embedding table.
static TABLE: &[u8] = model_file!("model.safetensors");
/// `config.json`: model2vec's settings (normalisation).
static CONFIG_JSON: &[u8] = model_file!("config.json");

/// The sha256 of each embedded file, as `scripts/distil_model.py` printed them. A test checks
/// the files against them, so a new table cannot go in unnoticed.
pub const TOKENIZER_SHA256: &str =
    "dd33465341c98889c3338356b6200c8b232b89af5f1b7aa8e6ee1d4d7a699631";
pub const TABLE_SHA256: &str = "07b121983d72ea9b21ccb24467e6e79d3c942af41fbd138f326db655812c724e";
pub const CONFIG_SHA256: &str = "5c78af497b825fc6ec92190df42197b7c1dd28abf9b998c56f95496d58ae65a0";

/// The name of the built-in model wherever vectors are stored: vectors made under another name
/// (another table) are not compared with this model's.
pub const MODEL_ID: &str = "minilm-l6-static-256-int8@07b12198";

/// The number of dimensions of the built-in model's vectors.
pub const DIMS: usize = 256;

/// The most tokens of a text that count (model2vec's default); the rest is cut.
const MAX_TOKENS: usize = 512;

/// A model that could not be made from its bytes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the semantic model cannot be loaded: {0}")]
pub struct Error(String);

/// A static embedding model.
#[derive(Debug, Clone)]
pub struct Model {
    inner: StaticModel,
}

impl Model {
    /// The built-in model, parsed from the embedded files on the first call of the process.
    pub fn builtin() -> Result<&'static Model, Error> {
        static BUILTIN: OnceLock<Result<Model, Error>> = OnceLock::new();
        BUILTIN
            .get_or_init(|| Model::from_bytes(TOKENIZER_JSON, TABLE, CONFIG_JSON))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// A model from the three files model2vec writes: `tokenizer.json`, `model.safetensors`
    /// and `config.json`. Vectors are always L2-normalised, whatever the config says.
    pub fn from_bytes(tokenizer_json: &[u8], table: &[u8], config_json: &[u8]) -> Result<Model> {
        let rows = table_rows(table)?;
        let highest = highest_token_id(tokenizer_json)?;
        if highest >= rows {
            return Err(Error(format!(
                "the tokenizer has token id {highest} but the table only {rows} rows"
            )));
        }
        let inner = StaticModel::from_bytes(tokenizer_json, table, config_json, Some(true))
            .map_err(|e| Error(format!("{e:#}")))?;
        Ok(Model { inner })
    }

    /// The number of dimensions of this model's vectors.
    pub fn dims(&self) -> usize {
        self.inner.dim()
    }

    /// The vector of `text`: unit length, or all zeros when no token of it is in the vocabulary
    /// (an empty text, only unknown characters), which is then as far from everything as can be.
    pub fn embed(&self, text: &str) -> Vec<f32> {
        let mut vector = self
            .inner
            .encode_with_args(&[text.to_owned()], Some(MAX_TOKENS), 1)
            .pop()
            .unwrap_or_default();
        vector.resize(self.dims(), 0.0);
        vector
    }

    /// The vectors of many texts, in their order (as [`embed`](Self::embed) gives each).
    pub fn embed_all(&self, texts: &[String]) -> Vec<Vec<f32>> {
        let dims = self.dims();
        let flat = self.inner.encode_flat_with_args(texts, Some(MAX_TOKENS));
        flat.chunks_exact(dims).map(<[f32]>::to_vec).collect()
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The cosine similarity of two unit vectors (their dot product); 0 when the lengths differ.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    if a.len() != b.len() {
        return 0.0;
    }
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The rows of the table's embedding tensor (model2vec names it `embeddings`).
fn table_rows(table: &[u8]) -> Result<usize> {
    let tensors = SafeTensors::deserialize(table).map_err(|e| Error(format!("the table: {e}")))?;
    let embeddings = tensors
        .tensor("embeddings")
        .map_err(|_| Error("the table has no tensor named `embeddings`".to_owned()))?;
    match *embeddings.shape() {
        [rows, dims] if rows > 0 && dims > 0 => {}
        ref other => {
            return Err(Error(format!(
                "the table's embeddings are of shape {other:?}, not rows × dimensions"
            )));
        }
    }
    // A table with a token mapping (vocabulary quantisation) indexes its rows through it.
    if let Ok(mapping) = tensors.tensor("mapping") {
        return Err(Error(format!(
            "the table maps tokens to rows ({} entries), which this loader does not read",
            mapping.shape().first().copied().unwrap_or(0)
        )));
    }
    Ok(embeddings.shape()[0])
}

/// The highest token id `tokenizer.json` can produce: of its vocabulary and its added tokens.
fn highest_token_id(tokenizer_json: &[u8]) -> Result<usize> {
    #[derive(serde::Deserialize)]
    struct Tokenizer {
        model: TokenizerModel,
        #[serde(default)]
        added_tokens: Vec<AddedToken>,
    }
    #[derive(serde::Deserialize)]
    struct TokenizerModel {
        #[serde(rename = "type")]
        kind: String,
        vocab: HighestId,
    }
    #[derive(serde::Deserialize)]
    struct AddedToken {
        id: u64,
    }
    let tokenizer: Tokenizer = serde_json::from_slice(tokenizer_json)
        .map_err(|e| Error(format!("tokenizer.json: {e}")))?;
    // model2vec-rs reads a WordPiece vocabulary without fallible steps; other kinds go through
    // paths that may panic on a text they cannot tokenize.
    if tokenizer.model.kind != "WordPiece" {
        return Err(Error(format!(
            "tokenizer.json is a {} tokenizer, not WordPiece",
            tokenizer.model.kind
        )));
    }
    tokenizer
        .model
        .vocab
        .0
        .into_iter()
        .chain(tokenizer.added_tokens.iter().map(|t| t.id))
        .max()
        .map(|id| usize::try_from(id).unwrap_or(usize::MAX))
        .ok_or_else(|| Error("tokenizer.json has an empty vocabulary".to_owned()))
}

/// The highest id of a `{"token": id, …}` map, read without keeping the tokens (a load reads
/// the vocabulary once more for this, so it must cost little).
struct HighestId(Option<u64>);

impl<'de> serde::Deserialize<'de> for HighestId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = HighestId;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a map of tokens to ids")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<HighestId, A::Error> {
                let mut highest = None;
                while let Some((serde::de::IgnoredAny, id)) = map.next_entry::<_, u64>()? {
                    highest = highest.max(Some(id));
                }
                Ok(HighestId(highest))
            }
        }
        deserializer.deserialize_map(Visitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::{Digest, Sha256};

    fn sha256(bytes: &[u8]) -> String {
        Sha256::digest(bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    fn model() -> &'static Model {
        Model::builtin().unwrap()
    }

    #[test]
    fn the_embedded_files_are_the_committed_ones() {
        assert_eq!(sha256(TOKENIZER_JSON), TOKENIZER_SHA256);
        assert_eq!(sha256(TABLE), TABLE_SHA256);
        assert_eq!(sha256(CONFIG_JSON), CONFIG_SHA256);
        assert!(MODEL_ID.ends_with(&TABLE_SHA256[..8]));
        // And the files in the tree are what was compiled in.
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/static-model");
        assert_eq!(std::fs::read(dir.join("model.safetensors")).unwrap(), TABLE);
        assert_eq!(
            std::fs::read(dir.join("tokenizer.json")).unwrap(),
            TOKENIZER_JSON
        );
    }

    #[test]
    fn vectors_are_unit_length_and_of_the_model_dimensions() {
        let model = model();
        assert_eq!(model.dims(), DIMS);
        let v = model.embed("get the current weather in Tokyo in celsius");
        assert_eq!(v.len(), DIMS);
        let norm: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5, "norm {norm}");
    }

    /// The first dimensions of a vector as Python's model2vec 0.10.0 gives them
    /// (`StaticModel.from_pretrained("assets/static-model").encode([...])`).
    #[test]
    fn vectors_match_the_python_model2vec() {
        let v = model().embed("find the cheapest flight from Paris to Berlin next friday");
        let python = [-0.198_850_2_f32, 0.035_962_27, 0.319_429_58, 0.004_230_86];
        for (i, (got, want)) in v.iter().zip(python).enumerate() {
            assert!((got - want).abs() < 1e-6, "dimension {i}: {got} != {want}");
        }
    }

    #[test]
    fn embedding_is_deterministic_and_batch_equals_one_by_one() {
        let model = model();
        let texts = vec![
            "send an email to a contact".to_owned(),
            "list the files of a folder".to_owned(),
            String::new(),
        ];
        let batch = model.embed_all(&texts);
        assert_eq!(batch.len(), texts.len());
        for (text, vector) in texts.iter().zip(&batch) {
            assert_eq!(&model.embed(text), vector);
            assert_eq!(model.embed(text), model.embed(text));
        }
    }

    #[test]
    fn related_texts_are_closer_than_unrelated_ones() {
        let model = model();
        let request = model.embed("what's the weather like in Paris tomorrow");
        let weather = model.embed("get the weather forecast for a city");
        let email = model.embed("send an email message to a recipient");
        assert!(cosine(&request, &weather) > cosine(&request, &email) + 0.1);
    }

    #[test]
    fn a_text_without_known_tokens_is_the_zero_vector() {
        let v = model().embed("");
        assert_eq!(v, vec![0.0; DIMS]);
        assert_eq!(cosine(&v, &model().embed("weather")), 0.0);
    }

    #[test]
    fn bad_bytes_are_an_error_not_a_panic() {
        let err = |tokenizer: &[u8], table: &[u8], config: &[u8]| {
            Model::from_bytes(tokenizer, table, config)
                .unwrap_err()
                .to_string()
        };
        assert!(err(TOKENIZER_JSON, b"not a table", CONFIG_JSON).contains("the table"));
        assert!(err(TOKENIZER_JSON, &TABLE[..TABLE.len() / 2], CONFIG_JSON).contains("the table"));
        assert!(err(b"{", TABLE, CONFIG_JSON).contains("tokenizer.json"));
        assert!(err(TOKENIZER_JSON, TABLE, b"[1, 2").contains("config.json"));
        assert!(err(b"", b"", b"").starts_with("the semantic model cannot be loaded"));

        // A tokenizer whose ids reach past the table: refused, where model2vec-rs would index
        // out of bounds when it embeds a text with that token.
        let mut json: serde_json::Value = serde_json::from_slice(TOKENIZER_JSON).unwrap();
        json["model"]["vocab"]["zzzz"] = 29_525.into();
        let widened = serde_json::to_vec(&json).unwrap();
        assert_eq!(
            err(&widened, TABLE, CONFIG_JSON),
            "the semantic model cannot be loaded: the tokenizer has token id 29525 but the \
             table only 29525 rows"
        );

        let mut json: serde_json::Value = serde_json::from_slice(TOKENIZER_JSON).unwrap();
        json["model"]["type"] = "Unigram".into();
        let unigram = serde_json::to_vec(&json).unwrap();
        assert!(err(&unigram, TABLE, CONFIG_JSON).contains("not WordPiece"));

        let empty = br#"{"model": {"type": "WordPiece", "vocab": {}}}"#;
        assert!(err(empty, TABLE, CONFIG_JSON).contains("empty vocabulary"));
    }

    #[test]
    fn cosine_of_vectors_of_other_lengths_is_zero() {
        assert_eq!(cosine(&[1.0, 0.0], &[1.0]), 0.0);
        assert_eq!(cosine(&[0.6, 0.8], &[0.6, 0.8]), 1.0);
    }
}
