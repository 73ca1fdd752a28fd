//! Text as the index sees it: identifiers split into words, and user queries turned into
//! tokens that are safe to put in an FTS5 query.
//!
//! Identifiers are split on `_`, `-`, `.` (FTS5's `unicode61` tokenizer already treats them as
//! separators) and on camelCase boundaries, which the tokenizer does not see: `getWeather` is
//! indexed as `getWeather get Weather`, so "weather", "get weather" and "getweather" all find
//! it. Diacritics are folded by the tokenizer (`remove_diacritics 2`) and, for fuzzy matching
//! against the vocabulary, by [`fold`].
//!
//! A query is never passed to FTS5 as typed. It is cut into tokens of letters and digits only
//! (everything else, quotes, `*`, `-`, `:`, `(`, emoji, is a separator), and each token goes
//! into the FTS5 expression as a quoted string. `AND`, `OR`, `NOT` and `NEAR` typed by a user
//! are just the words "and", "or", "not", "near". So no text can make an FTS5 syntax error.

use unicode_normalization::UnicodeNormalization;
use unicode_properties::{GeneralCategoryGroup, UnicodeGeneralCategory};

/// At most this many tokens of a query are used (a 10 KB paste is cut, not rejected).
pub const MAX_QUERY_TOKENS: usize = 32;
/// Tokens longer than this are cut.
pub const MAX_TOKEN_CHARS: usize = 64;

/// Words of `text` split at camelCase boundaries (`getHTTPResponse` → `get HTTP Response`),
/// or `None` when there is no such boundary.
fn camel_split(text: &str) -> Option<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len() + 8);
    let mut split = false;
    for (i, &c) in chars.iter().enumerate() {
        if i > 0 && c.is_uppercase() {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            if prev.is_lowercase() || prev.is_ascii_digit() || (prev.is_uppercase() && next_lower) {
                out.push(' ');
                split = true;
            }
        }
        out.push(c);
    }
    split.then_some(out)
}

/// The text to index for an identifier or a sentence: itself, plus its camelCase words.
pub fn index_text(text: &str) -> String {
    let mut out = text.to_owned();
    for word in text.split(|c: char| !c.is_alphanumeric()) {
        if let Some(words) = camel_split(word) {
            out.push(' ');
            out.push_str(&words);
        }
    }
    out
}

/// Lower-case and strip diacritics (`Météo` → `meteo`), as the tokenizer does.
pub fn fold(word: &str) -> String {
    word.nfd()
        .filter(|c| c.general_category_group() != GeneralCategoryGroup::Mark)
        .flat_map(char::to_lowercase)
        .collect()
}

/// The tokens of a user query: runs of letters and digits, camelCase split, folded, without
/// duplicates, at most [`MAX_QUERY_TOKENS`] of at most [`MAX_TOKEN_CHARS`] characters.
pub fn query_tokens(query: &str) -> Vec<String> {
    let mut tokens: Vec<String> = Vec::new();
    // Combining marks belong to their word: "me\u{301}te\u{301}o" (decomposed, as some
    // keyboards and macOS file names give it) is one word, "météo", folded to "meteo".
    let is_mark = |c: char| c.general_category_group() == GeneralCategoryGroup::Mark;
    for word in query
        .split(|c: char| !(c.is_alphanumeric() || is_mark(c)))
        .filter(|w| !w.is_empty())
    {
        let words = camel_split(word).unwrap_or_else(|| word.to_owned());
        for part in words.split(' ') {
            let token: String = fold(part).chars().take(MAX_TOKEN_CHARS).collect();
            // Folding can leave nothing (a lone combining mark) or non-alphanumerics.
            if token.is_empty() || !token.chars().all(char::is_alphanumeric) {
                continue;
            }
            if !tokens.contains(&token) {
                tokens.push(token);
            }
            if tokens.len() == MAX_QUERY_TOKENS {
                return tokens;
            }
        }
    }
    tokens
}

/// Common English words that say nothing about what a tool does ("how", "will", "this"). A
/// question in plain language is mostly these; in the "some words" tier they would rank tools
/// by whichever description happens to use them. Sorted, for a binary search.
const STOP_WORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be",
    "been", "before", "but", "by", "can", "could", "did", "do", "does", "doing", "for", "from",
    "had", "has", "have", "having", "he", "her", "here", "him", "his", "how", "i", "if", "in",
    "into", "is", "it", "its", "just", "me", "might", "my", "no", "not", "of", "on", "or", "our",
    "please", "she", "should", "so", "some", "than", "that", "the", "their", "them", "then",
    "there", "these", "they", "this", "those", "to", "too", "us", "very", "was", "we", "were",
    "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with", "would",
    "you", "your",
];

/// Whether a query token is a [`STOP_WORDS`] word.
pub fn is_stop_word(token: &str) -> bool {
    STOP_WORDS.binary_search(&token).is_ok()
}

/// A token as an FTS5 string literal. Tokens hold only letters and digits, so quoting is all
/// it takes; the doubling of `"` is there so this stays safe if that ever changes.
pub fn quoted(token: &str) -> String {
    format!("\"{}\"", token.replace('"', "\"\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_words_are_sorted_for_binary_search() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
        assert!(is_stop_word("will") && is_stop_word("a") && !is_stop_word("weather"));
    }

    #[test]
    fn identifiers_are_split_for_indexing() {
        assert_eq!(index_text("getWeather"), "getWeather get Weather");
        assert_eq!(index_text("get_weather"), "get_weather");
        assert_eq!(index_text("HTTPServer v2"), "HTTPServer v2 HTTP Server");
        assert_eq!(index_text("plain words"), "plain words");
    }

    #[test]
    fn queries_become_plain_tokens() {
        assert_eq!(
            query_tokens("getWeather in Oslo"),
            ["get", "weather", "in", "oslo"]
        );
        assert_eq!(query_tokens("Météo"), ["meteo"]);
        assert_eq!(
            query_tokens("\"a*\" -b :c (NEAR AND OR NOT)"),
            ["a", "b", "c", "near", "and", "or", "not"]
        );
        assert!(query_tokens("🔧 !!! ' \" * ( )").is_empty());
        assert_eq!(query_tokens(&"word ".repeat(5000)), ["word"]);
        let many: String = (0..100).map(|i| format!("w{i} ")).collect();
        assert_eq!(query_tokens(&many).len(), MAX_QUERY_TOKENS);
        assert_eq!(query_tokens(&"x".repeat(1000))[0].len(), MAX_TOKEN_CHARS);
    }
}
