//! The tool calls of every provider, in and out: where a model's answer holds its calls, how
//! each provider spells one call, and the messages that answer them in that provider's shape.
//!
//! In: toolctl's own `{"calls":[…]}`; OpenAI Chat `tool_calls` (arguments a JSON string), a
//! message or a whole completion holding them; Ollama's (arguments an object, no id), a message
//! or a `/api/chat` answer; OpenAI Responses `function_call` items or a response's `output`;
//! Anthropic `tool_use` blocks, an assistant message or a whole `Message`; Gemini
//! `functionCall` parts, a `Content` or a whole `GenerateContentResponse` (camelCase as the API
//! sends them, snake_case as the Python SDK dumps them). Blocks that are not calls (text,
//! thinking, reasoning) are passed over.
//!
//! Out ([`tool_messages`]): what goes back into the conversation, ready to append to its
//! messages — OpenAI Chat `role: tool` messages (with `name`, which Chat Completions takes),
//! Ollama `role: tool` messages with `tool_name`, Responses `function_call_output` items, one
//! Anthropic `user` message of `tool_result` blocks (`tool_use_id`, `is_error`), one Gemini
//! `user` content of `functionResponse` parts (`{"output": …}` or `{"error": …}`, as Gemini
//! asks).

use super::{Call, Failure, body, invalid};
use serde_json::{Map, Value, json};

/// Whose tool calls a batch holds, and so whose messages answer it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// toolctl's own batch request, `{"calls":[{call_id, name, arguments}]}`: answered as
    /// OpenAI Chat messages.
    Toolctl,
    Openai,
    OpenaiResponses,
    Anthropic,
    Gemini,
    Ollama,
}

/// The provider a shape belongs to, as messages name it.
pub fn provider_name(shape: Shape) -> &'static str {
    match shape {
        Shape::Toolctl => "toolctl",
        Shape::Openai => "OpenAI",
        Shape::OpenaiResponses => "OpenAI Responses",
        Shape::Anthropic => "Anthropic",
        Shape::Gemini => "Gemini",
        Shape::Ollama => "Ollama",
    }
}

/// Where a document keeps its calls.
#[derive(Debug)]
pub struct Located<'a> {
    pub items: &'a [Value],
    /// The JSON pointer of `items`.
    pub base: String,
    /// The shape the wrapper says, when it says one (`{"calls"}`, a `tool_use` message).
    pub shape: Option<Shape>,
}

/// The list of calls in `doc`, and the pointer to it. `wait_ms` and `mode` belong to the
/// `{"calls"}` form and are read by the caller.
pub fn locate(doc: &Value) -> Result<Located<'_>, Failure> {
    let Value::Object(map) = doc else {
        return match doc {
            Value::Array(items) => Ok(Located {
                items,
                base: String::new(),
                shape: None,
            }),
            _ => Err(not_a_batch("")),
        };
    };
    if map.contains_key("calls") {
        return array(map.get("calls"), "/calls".into(), Some(Shape::Toolctl));
    }
    if map.contains_key("tool_calls") {
        return array(map.get("tool_calls"), "/tool_calls".into(), None);
    }
    // A whole answer: OpenAI Chat's first choice, Ollama's message, Gemini's first candidate.
    if let Some(Value::Array(choices)) = map.get("choices") {
        return inner(choices.first(), "/choices/0/message", &["message"]);
    }
    if let Some(Value::Array(candidates)) = map.get("candidates") {
        return inner(candidates.first(), "/candidates/0/content", &["content"]);
    }
    if let Some(message @ Value::Object(_)) = map.get("message") {
        return within(message, "/message");
    }
    if map.contains_key("parts") {
        return array(map.get("parts"), "/parts".into(), Some(Shape::Gemini));
    }
    if map.contains_key("output") && map.get("object").and_then(Value::as_str) == Some("response") {
        return array(
            map.get("output"),
            "/output".into(),
            Some(Shape::OpenaiResponses),
        );
    }
    if let Some(Value::Array(_)) = map.get("content") {
        return array(
            map.get("content"),
            "/content".into(),
            Some(Shape::Anthropic),
        );
    }
    // One call on its own: an Anthropic block, a Gemini part, a Responses item.
    if map.get("type").and_then(Value::as_str) == Some("tool_use")
        || map.get("type").and_then(Value::as_str) == Some("function_call")
        || function_call(map).is_some()
    {
        return Ok(Located {
            items: std::slice::from_ref(doc),
            base: String::new(),
            shape: None,
        });
    }
    Err(not_a_batch(""))
}

/// `value` as the list of calls at `base`.
fn array(
    value: Option<&Value>,
    base: String,
    shape: Option<Shape>,
) -> Result<Located<'_>, Failure> {
    match value {
        Some(Value::Array(items)) => Ok(Located { items, base, shape }),
        _ => Err(invalid(
            format!("'{}' must be an array", last(&base)),
            &base,
        )),
    }
}

/// The calls inside `holder`'s `key` (a choice's message, a candidate's content).
fn inner<'a>(holder: Option<&'a Value>, at: &str, key: &[&str]) -> Result<Located<'a>, Failure> {
    match holder.and_then(|h| h.get(key[0])) {
        Some(value @ Value::Object(_)) => within(value, at),
        _ => Err(invalid(format!("'{}' must be an object", key[0]), at)),
    }
}

/// The calls of a message or content found at `at`.
fn within<'a>(message: &'a Value, at: &str) -> Result<Located<'a>, Failure> {
    let located = locate(message)?;
    Ok(Located {
        base: format!("{at}{}", located.base),
        ..located
    })
}

fn last(pointer: &str) -> &str {
    pointer.rsplit('/').next().unwrap_or(pointer)
}

fn not_a_batch(at: &str) -> Failure {
    invalid(
        "a batch is {\"calls\": […]}, or tool calls as a model sends them: OpenAI or Ollama tool_calls (or a message holding them), OpenAI Responses function_call items, Anthropic tool_use blocks (or the assistant message), Gemini functionCall parts (or the content)",
        at,
    )
}

/// Gemini's `functionCall` (or the Python SDK's `function_call`) of a part.
fn function_call(map: &Map<String, Value>) -> Option<&Value> {
    ["functionCall", "function_call"]
        .into_iter()
        .find_map(|key| map.get(key).filter(|v| !v.is_null()))
}

/// Whose call `item` is; `None` for a block that is not a call (text, thinking, reasoning).
pub fn shape_of(item: &Value) -> Option<Shape> {
    let Value::Object(map) = item else {
        return Some(Shape::Toolctl);
    };
    if function_call(map).is_some() {
        return Some(Shape::Gemini);
    }
    match map.get("type").and_then(Value::as_str) {
        Some("tool_use") => return Some(Shape::Anthropic),
        Some("function_call") => return Some(Shape::OpenaiResponses),
        Some("function") | None => {}
        Some(_) => return None,
    }
    if let Some(function) = map.get("function") {
        let openai = match function.get("arguments") {
            Some(Value::String(_)) => true,
            Some(Value::Object(_)) => false,
            _ => map.contains_key("id"),
        };
        return Some(if openai { Shape::Openai } else { Shape::Ollama });
    }
    // A Gemini part holding text or a thought.
    if !map.contains_key("call_id") && !map.contains_key("name") && map.contains_key("text") {
        return None;
    }
    Some(Shape::Toolctl)
}

/// One call of `shape` at `at`; `number` is its place among the calls (`call_<n>` stands in
/// for an id the provider does not send).
pub fn parse_one(item: &Value, shape: Shape, number: usize, at: &str) -> Result<Call, Failure> {
    let Value::Object(map) = item else {
        return Err(invalid("a call must be an object", at));
    };
    let pointer = |key: &str| format!("{at}/{key}");
    match shape {
        Shape::Toolctl => Ok(Call {
            call_id: check_call_id(
                required_id(map.get("call_id"), "call_id", &pointer("call_id"))?,
                &pointer("call_id"),
            )?,
            given_id: true,
            name: name(map.get("name"), &pointer("name"))?,
            arguments: arguments(map.get("arguments"), &pointer("arguments"), true)?,
        }),
        Shape::Openai | Shape::Ollama => {
            let Some(Value::Object(function)) = map.get("function") else {
                return Err(invalid(
                    "'function' must be an object",
                    &pointer("function"),
                ));
            };
            let (call_id, given_id) = optional_id(map.get("id"), number, &pointer("id"))?;
            Ok(Call {
                call_id,
                given_id,
                name: name(function.get("name"), &pointer("function/name"))?,
                arguments: arguments(
                    function.get("arguments"),
                    &pointer("function/arguments"),
                    true,
                )?,
            })
        }
        Shape::OpenaiResponses => Ok(Call {
            call_id: check_call_id(
                required_id(map.get("call_id"), "call_id", &pointer("call_id"))?,
                &pointer("call_id"),
            )?,
            given_id: true,
            name: name(map.get("name"), &pointer("name"))?,
            arguments: arguments(map.get("arguments"), &pointer("arguments"), true)?,
        }),
        Shape::Anthropic => Ok(Call {
            call_id: check_call_id(
                required_id(map.get("id"), "id", &pointer("id"))?,
                &pointer("id"),
            )?,
            given_id: true,
            name: name(map.get("name"), &pointer("name"))?,
            arguments: arguments(map.get("input"), &pointer("input"), false)?,
        }),
        Shape::Gemini => {
            let key = if map.get("functionCall").is_some_and(|v| !v.is_null()) {
                "functionCall"
            } else {
                "function_call"
            };
            let Some(Value::Object(call)) = function_call(map) else {
                return Err(invalid(format!("'{key}' must be an object"), &pointer(key)));
            };
            let (call_id, given_id) =
                optional_id(call.get("id"), number, &pointer(&format!("{key}/id")))?;
            Ok(Call {
                call_id,
                given_id,
                name: name(call.get("name"), &pointer(&format!("{key}/name")))?,
                arguments: arguments(call.get("args"), &pointer(&format!("{key}/args")), false)?,
            })
        }
    }
}

fn required_id(value: Option<&Value>, key: &str, at: &str) -> Result<String, Failure> {
    match value {
        Some(Value::String(id)) => Ok(id.clone()),
        None => Err(invalid(format!("'{key}' is required"), at)),
        Some(_) => Err(invalid(format!("'{key}' must be a string"), at)),
    }
}

/// An id the provider may leave out: the call's number stands in (`call_<n>`).
fn optional_id(value: Option<&Value>, number: usize, at: &str) -> Result<(String, bool), Failure> {
    match value {
        None | Some(Value::Null) => Ok((format!("call_{number}"), false)),
        Some(Value::String(id)) => Ok((check_call_id(id.clone(), at)?, true)),
        Some(_) => Err(invalid("'id' must be a string", at)),
    }
}

fn check_call_id(id: String, at: &str) -> Result<String, Failure> {
    if id.is_empty() || id.chars().count() > super::MAX_CALL_ID {
        return Err(invalid(
            format!("a call_id has 1 to {} characters", super::MAX_CALL_ID),
            at,
        ));
    }
    Ok(id)
}

fn name(value: Option<&Value>, at: &str) -> Result<String, Failure> {
    match value {
        Some(Value::String(name)) if !name.is_empty() => Ok(name.clone()),
        _ => Err(invalid("the tool's name must be a non-empty string", at)),
    }
}

/// A call's arguments: an object, or (where the provider sends text) a JSON string holding one.
fn arguments(value: Option<&Value>, at: &str, text: bool) -> Result<Value, Failure> {
    match value {
        None | Some(Value::Null) => Ok(Value::Object(Map::new())),
        Some(value @ Value::Object(_)) => Ok(value.clone()),
        Some(value @ Value::String(_)) if text => Ok(value.clone()),
        Some(_) if text => Err(invalid(
            "'arguments' must be an object or a JSON string holding one",
            at,
        )),
        Some(_) => Err(invalid(format!("'{}' must be an object", last(at)), at)),
    }
}

/// The messages answering `calls` in `shape`, ready to append to the conversation.
pub fn tool_messages(
    shape: Shape,
    calls: &[Call],
    outcomes: &[Result<Value, Failure>],
) -> Vec<Value> {
    let answered = calls.iter().zip(outcomes);
    match shape {
        Shape::Toolctl | Shape::Openai => answered
            .map(|(call, outcome)| {
                json!({
                    "role": "tool",
                    "tool_call_id": call.call_id,
                    "name": call.name,
                    "content": body(outcome).to_string(),
                })
            })
            .collect(),
        Shape::Ollama => answered
            .map(|(call, outcome)| {
                json!({
                    "role": "tool",
                    "tool_name": call.name,
                    "content": body(outcome).to_string(),
                })
            })
            .collect(),
        Shape::OpenaiResponses => answered
            .map(|(call, outcome)| {
                json!({
                    "type": "function_call_output",
                    "call_id": call.call_id,
                    "output": body(outcome).to_string(),
                })
            })
            .collect(),
        Shape::Anthropic => {
            let blocks: Vec<Value> = answered
                .map(|(call, outcome)| {
                    json!({
                        "type": "tool_result",
                        "tool_use_id": call.call_id,
                        "content": body(outcome).to_string(),
                        "is_error": outcome.is_err(),
                    })
                })
                .collect();
            vec![json!({ "role": "user", "content": blocks })]
        }
        Shape::Gemini => {
            let parts: Vec<Value> = answered
                .map(|(call, outcome)| {
                    let mut response = Map::new();
                    if call.given_id {
                        response.insert("id".into(), call.call_id.clone().into());
                    }
                    response.insert("name".into(), call.name.clone().into());
                    let answer = match outcome {
                        Ok(output) => json!({ "output": super::truncate(output) }),
                        Err(failure) => json!({ "error": super::error(failure) }),
                    };
                    response.insert("response".into(), answer);
                    json!({ "functionResponse": response })
                })
                .collect();
            vec![json!({ "role": "user", "parts": parts })]
        }
    }
}
