//! A JSON syntax error as every report gives it: a message, and a 1-based line and column.
//!
//! serde_json counts columns from 1 but says column 0 for an error at the start of a line
//! (most often the end of a file after its last newline: `{` then a newline is "line 2
//! column 0"). Editors, GitHub annotations and people count from 1, so column 0 is read as 1.

/// Where and what a JSON syntax error is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    /// serde_json's message without its position ("EOF while parsing an object").
    pub message: String,
    /// 1-based.
    pub line: usize,
    /// 1-based: the start of a line is column 1.
    pub column: usize,
}

impl SyntaxError {
    pub fn of(error: &serde_json::Error) -> Self {
        let said = error.to_string();
        // serde_json ends its message with the position, which is given here on its own.
        let suffix = format!(" at line {} column {}", error.line(), error.column());
        let message = said.strip_suffix(&suffix).unwrap_or(&said).to_owned();
        Self {
            message,
            line: error.line(),
            column: error.column().max(1),
        }
    }
}

impl std::fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} at line {} column {}",
            self.message, self.line, self.column
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(text: &str) -> SyntaxError {
        SyntaxError::of(&serde_json::from_str::<serde_json::Value>(text).unwrap_err())
    }

    #[test]
    fn columns_count_from_one_at_the_start_of_a_line() {
        let eof = of("{\n");
        assert_eq!((eof.line, eof.column), (2, 1));
        assert_eq!(eof.message, "EOF while parsing an object");
        assert_eq!(
            eof.to_string(),
            "EOF while parsing an object at line 2 column 1"
        );
        let inside = of("{\"a\": x}");
        assert_eq!((inside.line, inside.column), (1, 7));
    }
}
