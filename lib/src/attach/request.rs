//! The attach contract's request body (`POST /api/v1/tools/attach`), read as the contract
//! validates it: `agent_id` (required, a UUID, bare or `agent-` prefixed), `query` (a string,
//! `""` by default), `limit` (a whole number, 10 by default), `min_score` (a number, 35 by
//! default), `keep_tools` (an array of tool ID strings) and `auto_prune` (a boolean, true by
//! default). A field of another type, or a field the contract does not have (a misspelling
//! would otherwise be ignored), is refused at its JSON pointer. The ranges of `limit` and
//! `min_score` depend on the settings and are checked by the run.

use super::{AgentId, DEFAULT_LIMIT, DEFAULT_MIN_SCORE};
use serde_json::Value;

/// The fields of the contract's request.
const FIELDS: [&str; 6] = [
    "agent_id",
    "query",
    "limit",
    "min_score",
    "keep_tools",
    "auto_prune",
];

/// A request body, read.
#[derive(Debug, Clone, PartialEq)]
pub struct ContractRequest {
    pub agent: AgentId,
    pub query: String,
    pub limit: i64,
    pub min_score: f64,
    pub keep: Vec<String>,
    pub auto_prune: bool,
}

/// What is wrong with a request body: each problem at its JSON pointer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub pointer: String,
    pub message: String,
}

impl ContractRequest {
    /// Read `doc`, or every problem it has.
    pub fn from_doc(doc: &Value) -> Result<Self, Vec<Problem>> {
        let mut problems = Vec::new();
        let mut problem = |pointer: &str, message: String| {
            problems.push(Problem {
                pointer: pointer.to_owned(),
                message,
            });
        };
        let Some(object) = doc.as_object() else {
            problem("", "the request must be a JSON object".to_owned());
            return Err(problems);
        };
        for key in object.keys() {
            if !FIELDS.contains(&key.as_str()) {
                let near = FIELDS
                    .iter()
                    .find(|f| strsim::levenshtein(f, key) <= 2)
                    .map_or_else(String::new, |f| format!(" (did you mean '{f}'?)"));
                problem(
                    &format!("/{key}"),
                    format!(
                        "'{key}' is not a field of the attach request{near}; it has {}",
                        FIELDS.join(", ")
                    ),
                );
            }
        }
        let agent = match object.get("agent_id") {
            None => {
                problem("/agent_id", "agent_id is required".to_owned());
                None
            }
            Some(Value::String(text)) => match AgentId::parse(text) {
                Ok(id) => Some(id),
                Err(why) => {
                    problem("/agent_id", why);
                    None
                }
            },
            Some(other) => {
                problem(
                    "/agent_id",
                    format!("agent_id must be a string, not {}", kind(other)),
                );
                None
            }
        };
        let query = match object.get("query") {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(q)) => q.clone(),
            Some(other) => {
                problem(
                    "/query",
                    format!("query must be a string, not {}", kind(other)),
                );
                String::new()
            }
        };
        let limit = match object.get("limit") {
            None => DEFAULT_LIMIT,
            Some(Value::Number(n)) if n.as_i64().is_some() => n.as_i64().unwrap_or(DEFAULT_LIMIT),
            Some(other) => {
                problem(
                    "/limit",
                    format!("limit must be a whole number, not {}", shown(other)),
                );
                DEFAULT_LIMIT
            }
        };
        let min_score = match object.get("min_score") {
            None => DEFAULT_MIN_SCORE,
            Some(Value::Number(n)) => n.as_f64().unwrap_or(DEFAULT_MIN_SCORE),
            Some(other) => {
                problem(
                    "/min_score",
                    format!("min_score must be a number, not {}", kind(other)),
                );
                DEFAULT_MIN_SCORE
            }
        };
        let mut keep = Vec::new();
        match object.get("keep_tools") {
            None => {}
            Some(Value::Array(items)) => {
                for (i, item) in items.iter().enumerate() {
                    match item.as_str() {
                        Some(id) if !id.trim().is_empty() => keep.push(id.to_owned()),
                        _ => problem(
                            &format!("/keep_tools/{i}"),
                            format!("each of keep_tools must be a tool ID, not {}", shown(item)),
                        ),
                    }
                }
            }
            Some(other) => problem(
                "/keep_tools",
                format!(
                    "keep_tools must be an array of tool IDs, not {}",
                    kind(other)
                ),
            ),
        }
        let auto_prune = match object.get("auto_prune") {
            None => true,
            Some(Value::Bool(b)) => *b,
            Some(other) => {
                problem(
                    "/auto_prune",
                    format!("auto_prune must be true or false, not {}", shown(other)),
                );
                true
            }
        };
        match agent {
            Some(agent) if problems.is_empty() => Ok(Self {
                agent,
                query,
                limit,
                min_score,
                keep,
                auto_prune,
            }),
            _ => Err(problems),
        }
    }
}

fn kind(value: &Value) -> &'static str {
    crate::base::json_kind(value)
}

/// A short rendering of `value` for a message.
fn shown(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 40 {
        format!("{}…", text.chars().take(40).collect::<String>())
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_contracts_example_reads_and_defaults_fill_the_rest() {
        let read = ContractRequest::from_doc(&json!({
            "agent_id": "agent-123e4567-e89b-12d3-a456-426614174000",
            "query": "I need tools to search documents and create charts",
            "limit": 15,
            "min_score": 50.0,
            "keep_tools": ["tool-abc123", "tool-def456"],
            "auto_prune": true
        }))
        .unwrap();
        assert_eq!(read.limit, 15);
        assert_eq!(read.keep, ["tool-abc123", "tool-def456"]);
        let bare = ContractRequest::from_doc(
            &json!({ "agent_id": "123e4567-e89b-12d3-a456-426614174000" }),
        )
        .unwrap();
        assert_eq!(
            (
                bare.query.as_str(),
                bare.limit,
                bare.min_score,
                bare.auto_prune
            ),
            ("", DEFAULT_LIMIT, DEFAULT_MIN_SCORE, true)
        );
    }

    #[test]
    fn every_problem_is_named_at_its_pointer() {
        let problems = ContractRequest::from_doc(&json!({
            "agent_id": 7,
            "query": ["x"],
            "limit": 2.5,
            "min_score": "high",
            "keep_tools": ["ok", 3],
            "auto_prune": "yes",
            "min_scor": 1
        }))
        .unwrap_err();
        let pointers: Vec<&str> = problems.iter().map(|p| p.pointer.as_str()).collect();
        assert_eq!(
            pointers,
            [
                "/min_scor",
                "/agent_id",
                "/query",
                "/limit",
                "/min_score",
                "/keep_tools/1",
                "/auto_prune"
            ]
        );
        assert!(problems[0].message.contains("did you mean 'min_score'"));
        let missing = ContractRequest::from_doc(&json!({})).unwrap_err();
        assert_eq!(missing[0].pointer, "/agent_id");
        assert!(ContractRequest::from_doc(&json!([])).is_err());
    }
}
