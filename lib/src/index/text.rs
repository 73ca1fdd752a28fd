//! Text as the index sees it: identifiers split into words, and user queries turned into
//! tokens that are safe to put in an FTS5 query.
//!
//! Identifiers are split on `_`, `-`, `.` (FTS5's `unicode61` tokenizer already treats them as
//! separators) and on camelCase boundaries, which the tokenizer does not see: `getWeather` is
//! indexed as the words `get weather` (so "weather" and "get weather" find it, and a word counts
//! once), and its joined form `getweather` apart, in a column of its own that only matches
//! ("getweather" finds it by name) and weighs nothing in relevance. Diacritics are folded by
//! the tokenizer (`remove_diacritics 2`) and, for fuzzy matching against the vocabulary, by
//! [`fold`].
//!
//! A query is never passed to FTS5 as typed. It is cut into tokens of letters and digits only
//! (everything else, quotes, `*`, `-`, `:`, `(`, emoji, is a separator), and each token goes
//! into the FTS5 expression as a quoted string. `AND`, `OR`, `NOT` and `NEAR` typed by a user
//! are just the words "and", "or", "not", "near". So no text can make an FTS5 syntax error.

use unicode_normalization::UnicodeNormalization;
use unicode_properties::{GeneralCategoryGroup, UnicodeGeneralCategory};

/// At most this many tokens of a query are used (a 10 KB paste is cut, not rejected).
pub const MAX_QUERY_TOKENS: usize = 32;
/// At most this many content words of a query are weighed ([`content_tokens`]): the first, read
/// from the whole query, however many stop words come before them (a request of 50 words is
/// not cut to its first 32 words, which left out most of what long requests are about).
pub const MAX_CONTENT_TOKENS: usize = 64;
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

/// The words of `text` as the index holds them: runs of letters and digits, split at camelCase
/// boundaries too, folded (`getHTTPResponse v2` → `get http response v2`). Every field of a
/// tool is indexed as its words, so a word counts once where the tool says it once.
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for word in text.split(|c: char| !c.is_alphanumeric()) {
        let split = camel_split(word).unwrap_or_else(|| word.to_owned());
        for part in split.split(' ').filter(|p| !p.is_empty()) {
            out.push(fold(part));
        }
    }
    out
}

/// The words of `text` joined by spaces ([`words`]).
pub fn index_text(text: &str) -> String {
    words(text).join(" ")
}

/// The camelCase identifiers of `text` as one word each, folded (`getWeather` → `getweather`),
/// those [`words`] splits: indexed apart so "getweather" typed as one word still finds the
/// tool by name, without counting its words twice.
pub fn joined_identifiers(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| camel_split(w).is_some())
        .map(fold)
        .collect()
}

/// The name of a tool as one bag of words: its slug's words, then those of its display name
/// that the slug does not already hold (`search-hotels`, "Search Hotels" → `search hotels`).
pub fn name_words(slug: &str, display_name: &str) -> String {
    let mut out = words(slug);
    let own = out.len();
    for word in words(display_name) {
        if !out[..own].contains(&word) {
            out.push(word);
        }
    }
    out.join(" ")
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
    distinct_tokens(query, MAX_QUERY_TOKENS, |_| true)
}

/// The distinct tokens of `query` that `keep` keeps, at most `max` of them (the first).
fn distinct_tokens(query: &str, max: usize, keep: impl Fn(&str) -> bool) -> Vec<String> {
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
            if token.is_empty() || !token.chars().all(char::is_alphanumeric) || !keep(&token) {
                continue;
            }
            if !tokens.contains(&token) {
                tokens.push(token);
            }
            if tokens.len() == max {
                return tokens;
            }
        }
    }
    tokens
}

/// Words that say nothing about what a tool does: common English function words ("how",
/// "will", "this") and chat phrasing, the words of how a person asks rather than what for
/// ("please", "can you", "I want", "I need", "I'd like", "help me", "let me know", "first",
/// "then"). A question in plain language is mostly these; counted, they would rank tools by
/// whichever description happens to use them. Sorted, for a binary search.
const STOP_WORDS: &[&str] = &[
    "a",
    "able",
    "about",
    "after",
    "afterwards",
    "again",
    "against",
    "all",
    "also",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "could",
    "d",
    "did",
    "do",
    "does",
    "doing",
    "don",
    "down",
    "during",
    "each",
    "etc",
    "few",
    "finally",
    "first",
    "for",
    "from",
    "further",
    "had",
    "has",
    "have",
    "having",
    "he",
    "hello",
    "help",
    "her",
    "here",
    "hers",
    "herself",
    "hey",
    "hi",
    "him",
    "himself",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "just",
    "kindly",
    "know",
    "later",
    "let",
    "lets",
    "like",
    "ll",
    "m",
    "may",
    "me",
    "might",
    "more",
    "most",
    "must",
    "my",
    "myself",
    "need",
    "needs",
    "next",
    "no",
    "nor",
    "not",
    "now",
    "of",
    "ok",
    "okay",
    "on",
    "once",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "please",
    "possible",
    "re",
    "s",
    "same",
    "shall",
    "she",
    "should",
    "so",
    "some",
    "such",
    "sure",
    "t",
    "tell",
    "than",
    "thank",
    "thanks",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "us",
    "ve",
    "very",
    "via",
    "want",
    "wanted",
    "wants",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "wondering",
    "would",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
];

/// Whether a query token is a [`STOP_WORDS`] word.
pub fn is_stop_word(token: &str) -> bool {
    STOP_WORDS.binary_search(&token).is_ok()
}

/// The words of a query that say what it is about, as search and pick weigh them: its tokens
/// (as [`query_tokens`] makes them, each word once however often it is repeated, but read from
/// the whole query) without [`STOP_WORDS`], pure numbers ("3 flights", "in 2024": a number
/// names no tool) and lone letters (the "s" of "what's"), at most [`MAX_CONTENT_TOKENS`].
/// Empty when the query holds nothing else.
pub fn content_tokens(query: &str) -> Vec<String> {
    distinct_tokens(query, MAX_CONTENT_TOKENS, is_content)
}

/// Whether a query token counts for [`content_tokens`].
fn is_content(token: &str) -> bool {
    token.chars().count() > 1 && !is_stop_word(token) && !token.chars().all(|c| c.is_numeric())
}

/// Whether a query reads like a sentence rather than a name: it has a word that says what it
/// is about and either 4 or more such words, or 3 words or more of which one is a stop word
/// or chat phrase ("weather in Oslo", "please convert 20 euros"; not "we se", a name typed). Such a query is ranked by relevance; a
/// short name-like one ("get weather", "wea") by the tiers of [`search`](super::search).
pub fn is_sentence(query: &str) -> bool {
    let tokens = query_tokens(query);
    let content = tokens.iter().filter(|t| is_content(t)).count();
    content > 0 && (content >= 4 || (tokens.len() >= 3 && tokens.iter().any(|t| is_stop_word(t))))
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
    fn queries_are_normalised_to_content_words() {
        assert_eq!(
            content_tokens("Can you please help me book 3 flights to Paris, flights in 2024?"),
            ["book", "flights", "paris"]
        );
        assert_eq!(
            content_tokens("I want the weather, I'd like it now"),
            ["weather"]
        );
        assert_eq!(
            content_tokens("base64 encode v2"),
            ["base64", "encode", "v2"]
        );
        assert!(content_tokens("what is it").is_empty());
    }

    #[test]
    fn sentences_are_told_from_names() {
        assert!(is_sentence("weather in Oslo"));
        assert!(is_sentence("please convert euros"));
        assert!(is_sentence("convert euros dollars today"));
        assert!(!is_sentence("get weather"));
        assert!(!is_sentence("wea"));
        assert!(!is_sentence("convert euros 20"));
        assert!(!is_sentence("what is it"));
        assert!(!is_sentence("we se"));
    }

    #[test]
    fn identifiers_are_split_for_indexing() {
        assert_eq!(index_text("getWeather"), "get weather");
        assert_eq!(index_text("get_weather"), "get weather");
        assert_eq!(index_text("HTTPServer v2"), "http server v2");
        assert_eq!(index_text("Plain  words."), "plain words");
        assert_eq!(
            joined_identifiers("getWeather get_weather HTTPServer"),
            ["getweather", "httpserver"]
        );
    }

    #[test]
    fn a_name_is_one_bag_of_words() {
        // The display name's words count once when the slug already holds them.
        assert_eq!(
            name_words("search-hotels", "Search Hotels"),
            "search hotels"
        );
        assert_eq!(name_words("getWeather", "Weather now"), "get weather now");
        assert_eq!(name_words("gw", "get_weather"), "gw get weather");
        // The slug's own words are kept as they are.
        assert_eq!(name_words("get-get", ""), "get get");
    }

    #[test]
    fn long_requests_keep_their_content_words() {
        // 40 pure numbers first: the tokens of a name-like query stop at 32, before "book".
        let filler: String = (0..40).map(|i| format!("{i} the ")).collect();
        let query = format!("{filler} book flights to Paris");
        assert!(!query_tokens(&query).contains(&"book".to_owned()));
        assert_eq!(content_tokens(&query), ["book", "flights", "paris"]);
        let many: String = (0..200).map(|i| format!("w{i} ")).collect();
        assert_eq!(content_tokens(&many).len(), MAX_CONTENT_TOKENS);
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
