//! A server's `tools/list`, every page. Each page is read as JSON and each tool checked on its
//! own, so that one tool the SDK cannot read is left out and named, not the server's other
//! tools with it; a server whose pages never end is refused at once.

use super::{Trouble, rmcp_words};
use crate::base::json_kind;
use rmcp::RoleClient;
use rmcp::model::{ClientRequest, ServerResult};
use rmcp::service::Peer;
use serde_json::Value;

/// The most tools a server may list (as many as a bundle archive may hold files), and the most
/// pages toolctl reads.
const MAX_LISTED: usize = 20_000;

/// A server's `tools/list`, every page.
#[derive(Debug, Default)]
pub struct Listing {
    /// Its tools, as the SDK reads them, in list order.
    pub tools: Vec<Value>,
    /// What it listed that is no MCP tool (a name that is not a string, an `inputSchema` that
    /// is not an object…), in list order: left out, each with where and why.
    pub skipped: Vec<Skipped>,
}

/// An entry of a `tools/list` page that is no MCP tool.
#[derive(Debug)]
pub struct Skipped {
    /// Its `name`, when that is a string.
    pub name: Option<String>,
    /// The page it is on (1 for the first).
    pub page: usize,
    /// Where in that page's result (`/tools/3/inputSchema`).
    pub pointer: String,
    /// What is wrong there.
    pub message: String,
}

impl Skipped {
    /// `tool 'x' (tools/list page 1, /tools/0/inputSchema): must be an object, and is a string`.
    pub fn describe(&self) -> String {
        let tool = match &self.name {
            Some(name) => format!("tool '{name}'"),
            None => "a tool".to_owned(),
        };
        format!(
            "{tool} (tools/list page {}, {}): {}",
            self.page, self.pointer, self.message
        )
    }
}

/// Every page of the server's `tools/list`. A server that sends a cursor it sent before, or
/// more than [`MAX_LISTED`] tools or pages, is refused at once: its pages would otherwise go on (and
/// fill memory) until the timeout.
///
/// Each page is read as JSON, not as the SDK's list type, so that one tool the SDK cannot read
/// (which would fail the page as an "unexpected response type", naming nothing) is left out
/// and named ([`Listing::skipped`]) rather than losing the server's other tools.
pub(super) async fn every_page(peer: &Peer<RoleClient>) -> Result<Listing, Trouble> {
    let mut listing = Listing::default();
    let mut listed = 0;
    let mut cursors = std::collections::HashSet::new();
    let mut cursor = None;
    let mut page = 0;
    let mut seen = std::collections::HashMap::new();
    loop {
        page += 1;
        let params = rmcp::model::PaginatedRequestParams::default().with_cursor(cursor);
        let answer = peer
            .send_request(ClientRequest::ListToolsRequest(
                rmcp::model::ListToolsRequest::with_param(params),
            ))
            .await
            .map_err(|e| Trouble::Request(rmcp_words(&e)))?;
        let result = match answer {
            ServerResult::CustomResult(custom) => custom.0,
            typed => serde_json::to_value(typed).unwrap_or(Value::Null),
        };
        let (tools, next) = page_of(&result).map_err(|e| {
            Trouble::Request(format!(
                "its tools/list page {page} is no list of tools: {e}"
            ))
        })?;
        listed += tools.len();
        if listed > MAX_LISTED {
            return Err(Trouble::Request(format!(
                "it listed more than {MAX_LISTED} tools, the most toolctl takes"
            )));
        }
        for (at, raw) in tools.iter().enumerate() {
            match tool_of(raw) {
                Ok(tool) => match seen.get(tool_name(&tool)) {
                    // Names are how tools are called: a second tool of a name is left out,
                    // named.
                    Some(first) => listing.skipped.push(Skipped {
                        name: Some(tool_name(&tool).to_owned()),
                        page,
                        pointer: format!("/tools/{at}/name"),
                        message: format!(
                            "a second tool of this name (the first, kept, is at {first}); a call names one tool"
                        ),
                    }),
                    None => {
                        seen.insert(
                            tool_name(&tool).to_owned(),
                            format!("tools/list page {page}, /tools/{at}"),
                        );
                        listing.tools.push(tool);
                    }
                },
                Err((field, message)) => listing.skipped.push(Skipped {
                    name: raw.get("name").and_then(Value::as_str).map(str::to_owned),
                    page,
                    pointer: format!("/tools/{at}{field}"),
                    message,
                }),
            }
        }
        // Empty pages, each with a new cursor, would go on as well: no more pages than tools
        // toolctl takes.
        if cursors.len() >= MAX_LISTED {
            return Err(Trouble::Request(format!(
                "it sent more than {MAX_LISTED} pages, the most toolctl reads"
            )));
        }
        match next {
            None => return Ok(listing),
            Some(next) if !cursors.insert(next.clone()) => {
                return Err(Trouble::Request(format!(
                    "it sent the cursor '{}' a second time, so its pages would never end",
                    next.chars().take(64).collect::<String>()
                )));
            }
            Some(next) => cursor = Some(next),
        }
    }
}

/// The name of a tool [`tool_of`] read (it has one: a tool without is skipped there).
fn tool_name(tool: &Value) -> &str {
    tool.get("name").and_then(Value::as_str).unwrap_or_default()
}

/// The tools of a `tools/list` result, and its `nextCursor`.
fn page_of(result: &Value) -> Result<(&[Value], Option<String>), String> {
    let Some(result) = result.as_object() else {
        return Err(format!("the result is {}", json_kind(result)));
    };
    let tools = match result.get("tools") {
        Some(Value::Array(tools)) => tools,
        Some(other) => {
            return Err(format!(
                "/tools must be an array, and is {}",
                json_kind(other)
            ));
        }
        None => return Err("it has no /tools".to_owned()),
    };
    let next = match result.get("nextCursor") {
        None | Some(Value::Null) => None,
        Some(Value::String(next)) => Some(next.clone()),
        Some(other) => {
            return Err(format!(
                "/nextCursor must be a string, and is {}",
                json_kind(other)
            ));
        }
    };
    Ok((tools, next))
}

/// One listed tool as the SDK reads it, or where (a pointer inside the tool) and why it is no
/// MCP tool. The fields toolctl uses are named; anything else the SDK refuses is its message.
fn tool_of(raw: &Value) -> Result<Value, (String, String)> {
    let must = |field: &str, what: &str, value: &Value| {
        (
            format!("/{field}"),
            format!("must be {what}, and is {}", json_kind(value)),
        )
    };
    let Some(fields) = raw.as_object() else {
        return Err((
            String::new(),
            format!("must be an object, and is {}", json_kind(raw)),
        ));
    };
    for (field, what, required, fits) in [
        (
            "name",
            "a string",
            true,
            Value::is_string as fn(&Value) -> bool,
        ),
        ("inputSchema", "an object", true, Value::is_object),
        ("outputSchema", "an object", false, Value::is_object),
        ("annotations", "an object", false, Value::is_object),
        ("title", "a string", false, Value::is_string),
        ("description", "a string", false, Value::is_string),
    ] {
        match fields.get(field) {
            None if required => {
                return Err((format!("/{field}"), format!("is missing ({what})")));
            }
            Some(value) if !fits(value) && (required || !value.is_null()) => {
                return Err(must(field, what, value));
            }
            _ => {}
        }
    }
    let tool: rmcp::model::Tool = serde_json::from_value(raw.clone()).map_err(|e| {
        (
            String::new(),
            format!("is no MCP tool the SDK can read: {e}"),
        )
    })?;
    serde_json::to_value(tool).map_err(|e| (String::new(), e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_listed_tool_is_checked_field_by_field_and_null_is_an_absent_optional_field() {
        let ok = json!({
            "name": "t", "inputSchema": { "type": "object" },
            "outputSchema": null, "annotations": null, "title": null, "description": null,
        });
        let read = tool_of(&ok).unwrap();
        assert_eq!(read["name"], "t");
        assert_eq!(read["inputSchema"], json!({ "type": "object" }));
        let wrong = |tool: Value| tool_of(&tool).unwrap_err();
        assert_eq!(
            wrong(json!({ "name": "t", "inputSchema": {}, "outputSchema": [] })),
            (
                "/outputSchema".to_owned(),
                "must be an object, and is an array".to_owned()
            )
        );
        assert_eq!(
            wrong(json!({ "inputSchema": {} })),
            ("/name".to_owned(), "is missing (a string)".to_owned())
        );
        assert_eq!(
            wrong(json!({ "name": "t", "inputSchema": null })),
            (
                "/inputSchema".to_owned(),
                "must be an object, and is null".to_owned()
            )
        );
        assert_eq!(
            wrong(json!({ "name": "t", "inputSchema": {}, "description": 3 })),
            (
                "/description".to_owned(),
                "must be a string, and is a number".to_owned()
            )
        );
    }

    #[test]
    fn a_page_without_a_tools_array_or_with_a_cursor_that_is_no_string_is_refused() {
        let tools = json!([{ "name": "t" }]);
        let page = json!({ "tools": tools, "nextCursor": "2" });
        let (listed, next) = page_of(&page).unwrap();
        assert_eq!((listed.len(), next.as_deref()), (1, Some("2")));
        let (_, next) = page_of(&json!({ "tools": [], "nextCursor": null })).unwrap();
        assert_eq!(next, None);
        assert_eq!(page_of(&json!({})).unwrap_err(), "it has no /tools");
        assert_eq!(
            page_of(&json!({ "tools": {} })).unwrap_err(),
            "/tools must be an array, and is an object"
        );
        assert_eq!(
            page_of(&json!({ "tools": [], "nextCursor": 2 })).unwrap_err(),
            "/nextCursor must be a string, and is a number"
        );
        assert_eq!(page_of(&json!([])).unwrap_err(), "the result is an array");
    }
}
