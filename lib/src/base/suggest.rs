//! "Did you mean …?": the known word closest to a mistyped one.

/// The candidate closest to `word` (Damerau–Levenshtein, case-insensitive) when it is close
/// enough to be a typo: at most 2 edits, and fewer than the word's length. Ties go to the
/// earlier candidate.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let word = word.to_lowercase();
    let limit = match word.chars().count() {
        0 | 1 => 0,
        2..=4 => 1,
        _ => 2,
    };
    candidates
        .into_iter()
        .enumerate()
        .map(|(i, c)| (strsim::damerau_levenshtein(&word, &c.to_lowercase()), i, c))
        .filter(|(distance, _, _)| *distance <= limit)
        .min()
        .map(|(_, _, c)| c)
}

#[cfg(test)]
mod tests {
    use super::closest;

    #[test]
    fn a_typo_finds_its_word_and_noise_finds_nothing() {
        let words = ["forecast", "air-quality", "now"];
        assert_eq!(closest("forcast", words), Some("forecast"));
        assert_eq!(closest("Forecats", words), Some("forecast"));
        assert_eq!(closest("nw", words), Some("now"));
        assert_eq!(closest("zzzzzz", words), None);
        // Two edits make another word of a short one.
        assert_eq!(closest("nope", words), None);
        // A one-letter word is never "close" to another.
        assert_eq!(closest("x", ["y"]), None);
    }
}
