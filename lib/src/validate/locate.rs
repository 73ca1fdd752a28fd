//! Where a JSON pointer is in a file's text, as the line and column an editor (or a GitHub
//! annotation) jumps to.
//!
//! The text is parsed a second time with `jsonc-parser`, which keeps the byte range of every
//! node (the text already parsed as strict JSON, so its lenient defaults change nothing);
//! this runs only for files that have findings. A pointer to an object member lands on
//! its key (`"slug": …`), to an array element on the element, and a pointer that goes past
//! what exists (a missing required field) on the deepest node that does exist.

use jsonc_parser::ast::{ObjectPropName, Value};
use jsonc_parser::common::Ranged;
use jsonc_parser::{CollectOptions, ParseOptions};

/// A 1-based line and column (in characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    pub line: usize,
    pub column: usize,
}

/// The text of a file, parsed once, to locate any number of pointers in.
#[derive(Debug)]
pub struct Locator<'a> {
    text: &'a str,
    root: Option<Value<'a>>,
}

impl<'a> Locator<'a> {
    pub fn new(text: &'a str) -> Self {
        let root =
            jsonc_parser::parse_to_ast(text, &CollectOptions::default(), &ParseOptions::default())
                .ok()
                .and_then(|parsed| parsed.value);
        Self { text, root }
    }

    /// Where `pointer` (RFC 6901) is; `None` when the text is not JSON.
    pub fn find(&self, pointer: &str) -> Option<Position> {
        let mut node = self.root.as_ref()?;
        let mut at = node.start();
        for token in pointer.split('/').skip(1) {
            let token = crate::base::pointer::unescape(token);
            let next = match node {
                Value::Object(object) => object.properties.iter().find(|p| {
                    let name = match &p.name {
                        ObjectPropName::String(s) => s.value.as_ref(),
                        ObjectPropName::Word(w) => w.value,
                    };
                    name == token
                }),
                _ => None,
            };
            if let Some(prop) = next {
                at = prop.name.start();
                node = &prop.value;
                continue;
            }
            let element = match (node, token.parse::<usize>()) {
                (Value::Array(array), Ok(index)) => array.elements.get(index),
                _ => None,
            };
            match element {
                Some(element) => {
                    at = element.start();
                    node = element;
                }
                None => break,
            }
        }
        Some(position(self.text, at))
    }
}

/// The line and column of byte `offset` in `text`.
pub fn position(text: &str, offset: usize) -> Position {
    let before = &text[..offset.min(text.len())];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    Position {
        line: before.matches('\n').count() + 1,
        column: before[line_start..].chars().count() + 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers_land_on_keys_elements_and_the_deepest_existing_node() {
        let text = "{\n  \"slug\": \"a_b\",\n  \"tags\": [\"x\", \"\"],\n  \"impl\": {\n    \"method\": \"FETCH\"\n  }\n}\n";
        let locator = Locator::new(text);
        let at = |p: &str| locator.find(p).map(|p| (p.line, p.column));
        assert_eq!(at(""), Some((1, 1)));
        assert_eq!(at("/slug"), Some((2, 3)));
        assert_eq!(at("/tags/1"), Some((3, 17)));
        assert_eq!(at("/impl/method"), Some((5, 5)));
        assert_eq!(at("/impl/urlTemplate"), Some((4, 3)));
        assert_eq!(at("/nope"), Some((1, 1)));
        assert_eq!(Locator::new("{ nope").find("/x"), None);
    }

    #[test]
    fn escaped_tokens_and_unicode_columns() {
        let text = "{\"a/b\": {\"é\": 1, \"c~d\": 2}}";
        let locator = Locator::new(text);
        assert_eq!(locator.find("/a~1b/c~0d").map(|p| p.column), Some(18));
    }
}
