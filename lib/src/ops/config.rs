//! `toolctl.json` one key at a time: read a key, set it, add to or remove from a list.
//!
//! A key is a dotted path (`reap.gracePeriod`, `builtin.tools.exec.isEnabled`) or a JSON
//! pointer (`/reap/gracePeriod`). It must be one the config schema names, so a typo is an
//! error with the closest key, never a field nobody reads. A value is taken as the schema
//! wants it: a string key takes the text as it is; any other key takes JSON (`true`, `20`,
//! `["a"]`). Every change is one locked write of the whole file (atomic rename), checked
//! against the schema and toolctl's own rules before it is written; only the one key changes.

use crate::base::pointer;
use crate::base::same_json::{same_json, same_json_opt};
use crate::catalog::config::{self, CONFIG_FILE, Config};
use crate::catalog::error::{Error, Result, Violation};
use crate::catalog::rules::HostPolicy;
use crate::catalog::schemas::Kind;
use crate::catalog::{Catalog, store};
use serde_json::{Map, Value};

/// A key of `toolctl.json`, checked against the config schema.
#[derive(Debug, Clone)]
pub struct ConfigKey {
    /// The key as a dotted path (`reap.gracePeriod`).
    pub name: String,
    /// The key as a JSON pointer (`/reap/gracePeriod`).
    pub pointer: String,
    tokens: Vec<String>,
    schema: &'static Value,
}

/// A change to one key.
#[derive(Debug, Clone)]
pub enum Edit {
    /// Replace the value.
    Set(String),
    /// Append to a list, unless it holds the value already.
    Add(String),
    /// Remove a value from a list, or (`None`) the key itself.
    Remove(Option<String>),
}

/// What a change did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ConfigChange {
    pub key: String,
    pub pointer: String,
    /// The key's value after the change (`null` once removed).
    pub value: Value,
    /// `false` when the file already said so (nothing was written).
    pub changed: bool,
    /// The problems the file still has (it may have had several, fixed one edit at a time).
    #[serde(skip)]
    pub problems: Vec<Violation>,
}

impl ConfigKey {
    /// Parse a dotted key or a JSON pointer and find it in the config schema.
    pub fn parse(key: &str) -> Result<Self> {
        let tokens: Vec<String> = match key.strip_prefix('/') {
            Some(rest) => rest.split('/').map(pointer::unescape).collect(),
            None => key.split('.').map(str::to_owned).collect(),
        };
        if key.is_empty() || tokens.iter().any(String::is_empty) {
            return Err(bad_key(
                key,
                "a key is a dotted path such as reap.gracePeriod, or a JSON pointer such as /reap/gracePeriod",
            ));
        }
        let mut schema = deref(Kind::Config.document());
        let mut place = String::new();
        for token in &tokens {
            let properties = schema.get("properties").and_then(Value::as_object);
            let next = properties
                .and_then(|p| p.get(token))
                .or_else(|| schema.get("additionalProperties").filter(|s| s.is_object()));
            let Some(next) = next else {
                let known: Vec<&str> = properties
                    .map(|p| p.keys().map(String::as_str).collect())
                    .unwrap_or_default();
                let within = if place.is_empty() {
                    String::new()
                } else {
                    format!(" in {}", dotted(&place))
                };
                let hint = if known.is_empty() {
                    format!("{} is a value, not a group of keys", dotted(&place))
                } else if let Some(close) = crate::base::suggest::closest(token, known.clone()) {
                    format!("did you mean '{}'?", dotted(&pointer::join(&place, close)))
                } else {
                    format!("the keys{within} are: {}", known.join(", "))
                };
                return Err(Error::NotFound {
                    what: "config key",
                    name: key.to_owned(),
                    hint: Some(hint.into()),
                });
            };
            place = pointer::join(&place, token);
            schema = deref(next);
        }
        Ok(Self {
            name: tokens.join("."),
            pointer: place,
            tokens,
            schema,
        })
    }

    /// The key's value in `doc`, if set.
    pub fn get<'a>(&self, doc: &'a Value) -> Option<&'a Value> {
        doc.pointer(&self.pointer)
    }

    /// `text` as a value of this key (a list key: as one of its items).
    fn value(&self, text: &str, item: bool) -> Result<Value> {
        let schema = if item {
            match self.schema.get("items") {
                Some(items) => deref(items),
                None => {
                    return Err(self.invalid(format!(
                        "{} is {}, not a list: set it with `set`",
                        self.name,
                        expected(self.schema)
                    )));
                }
            }
        } else {
            self.schema
        };
        let types = types(schema);
        if types == ["string"] {
            return Ok(Value::String(text.to_owned()));
        }
        match serde_json::from_str::<Value>(text) {
            Ok(value) => Ok(value),
            Err(_) if types.is_empty() || types.contains(&"string") => {
                Ok(Value::String(text.to_owned()))
            }
            Err(_) => Err(self.invalid(format!("'{text}' is not {}", expected(schema)))),
        }
    }

    fn invalid(&self, message: String) -> Error {
        Error::invalid(CONFIG_FILE, vec![Violation::new(&self.pointer, message)])
    }
}

fn bad_key(key: &str, message: &str) -> Error {
    Error::Config {
        message: format!("'{key}' is not a config key"),
        hint: Some(message.into()),
    }
}

fn dotted(pointer: &str) -> String {
    pointer
        .split('/')
        .skip(1)
        .map(pointer::unescape)
        .collect::<Vec<_>>()
        .join(".")
}

/// A schema with its `$ref` (to the config schema's own `$defs`) followed.
fn deref(schema: &'static Value) -> &'static Value {
    match schema.get("$ref").and_then(Value::as_str) {
        Some(target) => target
            .strip_prefix('#')
            .and_then(|p| Kind::Config.document().pointer(p))
            .unwrap_or(schema),
        None => schema,
    }
}

/// The JSON types a schema allows (its `type`, or those of its `enum`/`const`); empty: any.
fn types(schema: &Value) -> Vec<&'static str> {
    let name = |v: &Value| match v {
        Value::String(_) => "string",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
        Value::Null => "null",
    };
    let known = |t: &str| {
        [
            "string", "integer", "number", "boolean", "array", "object", "null",
        ]
        .into_iter()
        .find(|k| *k == t)
    };
    match schema.get("type") {
        Some(Value::String(t)) => known(t).into_iter().collect(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .filter_map(known)
            .collect(),
        _ => match (schema.get("enum"), schema.get("const")) {
            (Some(Value::Array(values)), _) => {
                let mut found: Vec<_> = values.iter().map(name).collect();
                found.dedup();
                found
            }
            (_, Some(value)) => vec![name(value)],
            _ => Vec::new(),
        },
    }
}

/// What a schema takes, in words.
fn expected(schema: &Value) -> String {
    if let Some(Value::Array(values)) = schema.get("enum") {
        let values: Vec<String> = values.iter().map(Value::to_string).collect();
        return format!("one of {}", values.join(", "));
    }
    let words: Vec<&str> = types(schema)
        .into_iter()
        .map(|t| match t {
            "string" => "a string",
            "integer" => "an integer",
            "number" => "a number",
            "boolean" => "true or false",
            "array" => "a JSON list",
            "object" => "a JSON object",
            _ => "null",
        })
        .collect();
    if words.is_empty() {
        "a JSON value".to_owned()
    } else {
        words.join(" or ")
    }
}

/// The object holding `tokens`' last key, created on the way.
fn parent_of<'a>(doc: &'a mut Value, tokens: &[String]) -> Option<&'a mut Map<String, Value>> {
    let mut node = doc;
    for token in tokens.iter().take(tokens.len().saturating_sub(1)) {
        let map = node.as_object_mut()?;
        node = map
            .entry(token.clone())
            .or_insert_with(|| Value::Object(Map::new()));
    }
    node.as_object_mut()
}

/// `doc` with `edit` applied to `key`; `None` when it already says so.
fn apply(doc: &Value, key: &ConfigKey, edit: &Edit) -> Result<Option<Value>> {
    let mut doc = doc.clone();
    let last = key.tokens.last().cloned().unwrap_or_default();
    let current = key.get(&doc).cloned();
    let not_an_object = || {
        key.invalid(format!(
            "cannot reach {}: a key on the way holds a value that is not an object",
            key.name
        ))
    };
    let new = match edit {
        Edit::Set(text) => {
            let value = key.value(text, false)?;
            if same_json_opt(current.as_ref(), Some(&value)) {
                return Ok(None);
            }
            Some(value)
        }
        Edit::Add(text) => {
            let item = key.value(text, true)?;
            let mut list = match current {
                None => Vec::new(),
                Some(Value::Array(list)) => list,
                Some(other) => {
                    return Err(key.invalid(format!(
                        "holds {other}, not a list: fix it with `set` first"
                    )));
                }
            };
            if list.iter().any(|v| same_json(v, &item)) {
                return Ok(None);
            }
            list.push(item);
            Some(Value::Array(list))
        }
        Edit::Remove(None) => {
            if current.is_none() {
                return Ok(None);
            }
            None
        }
        Edit::Remove(Some(text)) => {
            let item = key.value(text, true)?;
            match current {
                Some(Value::Array(mut list)) if list.iter().any(|v| same_json(v, &item)) => {
                    list.retain(|v| !same_json(v, &item));
                    Some(Value::Array(list))
                }
                _ => return Ok(None),
            }
        }
    };
    let parent = parent_of(&mut doc, &key.tokens).ok_or_else(not_an_object)?;
    match new {
        Some(value) => {
            parent.insert(last, value);
        }
        None => {
            parent.shift_remove(&last);
        }
    }
    Ok(Some(doc))
}

/// `pointer` into `doc` with each index into a list written `-`: a problem of a list's item
/// is the same problem when an edit of the list moves the item (removing `*` from
/// `["*", "a.com", 5]` moves the bad `5` from `/allowedHosts/2` to `/allowedHosts/1`).
fn list_free(doc: &Value, pointer: &str) -> String {
    let mut at = Some(doc);
    let mut out = String::with_capacity(pointer.len());
    for token in pointer.split('/').skip(1) {
        let in_list = matches!(at, Some(Value::Array(_)));
        at = at.and_then(|node| match node {
            Value::Array(items) => token.parse::<usize>().ok().and_then(|i| items.get(i)),
            Value::Object(map) => map.get(&pointer::unescape(token)),
            _ => None,
        });
        out.push('/');
        out.push_str(if in_list { "-" } else { token });
    }
    out
}

impl Catalog {
    /// Change one key of `toolctl.json` under the catalog lock, reading the file as it is
    /// ([`Config::load_as_is`]), so a config toolctl refuses can be repaired key by key.
    ///
    /// The new document is written unless it has a problem (config schema, toolctl's own
    /// rules: [`config::problems`]) the file did not have already: an edit may fix one problem
    /// and leave the others for the next. A new problem is refused with its pointer, and
    /// nothing is written.
    pub fn edit_config(&mut self, key: &ConfigKey, edit: &Edit) -> Result<ConfigChange> {
        self.write_with(
            Config::load_as_is,
            |catalog| {
                let path = catalog.root().join(CONFIG_FILE);
                let before = &catalog.config().doc;
                let changed = match apply(before, key, edit)? {
                    None => false,
                    Some(doc) => {
                        // Each problem the file had stands for one of the result's (so
                        // `[5]` made `[5, 5]` adds one); taking a host out of allowedHosts is
                        // the policy's own edit, so a server it leaves off-limits is said
                        // (its tools are unavailable), not refused.
                        let mut had: Vec<Option<(String, Violation)>> =
                            config::problems(before, &path)
                                .into_iter()
                                .map(|problem| Some((list_free(before, &problem.pointer), problem)))
                                .collect();
                        let revokes = key.tokens.first().is_some_and(|t| t == "allowedHosts");
                        let new: Vec<Violation> = config::problems(&doc, &path)
                            .into_iter()
                            .filter(|problem| !(revokes && problem.rule == Some("host")))
                            .filter(|problem| {
                                let place = list_free(&doc, &problem.pointer);
                                let same = had.iter_mut().find(|old| {
                                    old.as_ref().is_some_and(|(was, old)| {
                                        *was == place
                                            && old.message == problem.message
                                            && old.rule == problem.rule
                                    })
                                });
                                match same {
                                    Some(old) => {
                                        *old = None;
                                        false
                                    }
                                    None => true,
                                }
                            })
                            .collect();
                        if !new.is_empty() {
                            return Err(Error::invalid(path.display().to_string(), new));
                        }
                        store::write_json(&path, &doc)?;
                        true
                    }
                };
                let doc = Config::load_as_is(catalog.root())?.doc;
                Ok(ConfigChange {
                    key: key.name.clone(),
                    pointer: key.pointer.clone(),
                    value: key.get(&doc).cloned().unwrap_or(Value::Null),
                    changed,
                    problems: config::problems(&doc, &path),
                })
            },
            |_| None,
        )
    }
}

/// What a user can do about one problem of `toolctl.json` (the CLI words each as a command).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fix {
    /// Remove `item` from the list `key`.
    RemoveItem { key: String, item: String },
    /// Set `key` to a good value, or remove it for the default.
    SetOrRemove { key: String },
    /// Set `key` to a good value, or remove the MCP server `server` it belongs to: a server's
    /// `command` or `url` (or the entry itself) has no default to fall back on.
    SetOrRemoveServer { key: String, server: String },
    /// Remove the MCP server `server` and declare it again under a good name: its name is its
    /// key, which no `set` changes.
    RenameServer { server: String },
    /// Edit the file by hand: no key names the place.
    EditFile,
}

/// The fixes of `problems` of `doc`, each once, in the problems' order.
pub fn fixes(doc: &Value, problems: &[Violation]) -> Vec<Fix> {
    let mut fixes = Vec::new();
    let mut add = |fix: Fix| {
        if !fixes.contains(&fix) {
            fixes.push(fix);
        }
    };
    for problem in problems {
        // The entries of allowedHosts toolctl refuses, each on its own.
        if problem.pointer == "/allowedHosts"
            && let Some(list) = doc.get("allowedHosts").and_then(Value::as_array)
        {
            let bad: Vec<&str> = list
                .iter()
                .filter_map(Value::as_str)
                .filter(|host| HostPolicy::new([*host]).is_err())
                .collect();
            if !bad.is_empty() {
                for host in bad {
                    add(Fix::RemoveItem {
                        key: "allowedHosts".to_owned(),
                        item: host.to_owned(),
                    });
                }
                continue;
            }
        }
        // The innermost key that holds the place (an item's list, an entry's group).
        let mut place = problem.pointer.as_str();
        let key = loop {
            if place.is_empty() {
                break None;
            }
            if let Ok(key) = ConfigKey::parse(place) {
                break Some(key);
            }
            place = place.rsplit_once('/').map_or("", |(parent, _)| parent);
        };
        // A bad string in a list (`secrets`' "bad name"): take that item out, as the list's
        // own `remove` does; removing the list would break what its other items serve.
        if let Some((list, index)) = problem.pointer.rsplit_once('/')
            && let Ok(index) = index.parse::<usize>()
            && let Some(Value::String(item)) = doc
                .pointer(list)
                .and_then(Value::as_array)
                .and_then(|items| items.get(index))
            && let Ok(key) = ConfigKey::parse(list)
        {
            let dotted = key.tokens.iter().any(|t| t.contains('.'));
            add(Fix::RemoveItem {
                key: if dotted { key.pointer } else { key.name },
                item: item.clone(),
            });
            continue;
        }
        add(match key {
            None => Fix::EditFile,
            // Only the whole of mcpServers holds the place (a server named ""): removing it
            // would drop every server, so the file is edited.
            Some(key) if key.tokens == ["mcpServers"] && key.pointer != problem.pointer => {
                Fix::EditFile
            }
            Some(key)
                if key.tokens.len() == 2
                    && key.tokens[0] == "mcpServers"
                    && problem.message.starts_with("server name:") =>
            {
                Fix::RenameServer {
                    server: if key.tokens[1].contains('.') {
                        key.pointer
                    } else {
                        key.name
                    },
                }
            }
            Some(key) => {
                // A key with a dot in one of its names (`mcpServers` `files.v2`) is named by
                // its pointer: dotted, it would name another key.
                let dotted = key.tokens.iter().any(|t| t.contains('.'));
                let named = |key: &ConfigKey| {
                    if dotted {
                        key.pointer.clone()
                    } else {
                        key.name.clone()
                    }
                };
                match key.tokens.as_slice() {
                    [group, _] | [group, _, _]
                        if group == "mcpServers"
                            && key
                                .tokens
                                .get(2)
                                .is_none_or(|f| f == "command" || f == "url") =>
                    {
                        let server =
                            ConfigKey::parse(&pointer::join("/mcpServers", &key.tokens[1]));
                        Fix::SetOrRemoveServer {
                            key: named(&key),
                            server: server.as_ref().map_or_else(|_| named(&key), named),
                        }
                    }
                    _ => Fix::SetOrRemove { key: named(&key) },
                }
            }
        });
    }
    fixes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::error::Hint;
    use serde_json::json;

    /// The text of a hint that names no command (config keys' hints are all such).
    fn text(hint: Option<Hint>) -> Option<String> {
        match hint {
            Some(Hint::Text(text)) => Some(text.into()),
            other => panic!("not a text hint: {other:?}"),
        }
    }

    #[test]
    fn keys_are_dotted_or_pointers_and_must_be_in_the_schema() {
        let key = ConfigKey::parse("reap.gracePeriod").unwrap();
        assert_eq!(key.pointer, "/reap/gracePeriod");
        assert_eq!(
            ConfigKey::parse("/reap/gracePeriod").unwrap().name,
            key.name
        );
        // Through additionalProperties and a $ref.
        assert_eq!(
            ConfigKey::parse("builtin.tools.exec.isEnabled")
                .unwrap()
                .pointer,
            "/builtin/tools/exec/isEnabled"
        );
        assert_eq!(
            types(ConfigKey::parse("pick.llm.timeoutMs").unwrap().schema),
            ["integer"]
        );
        let typo = ConfigKey::parse("alowedHosts").unwrap_err();
        assert_eq!(
            text(typo.hint()).as_deref(),
            Some("did you mean 'allowedHosts'?")
        );
        let deep = ConfigKey::parse("reap.gracePeriod.x").unwrap_err();
        assert_eq!(
            text(deep.hint()).as_deref(),
            Some("reap.gracePeriod is a value, not a group of keys")
        );
        assert!(ConfigKey::parse("reap..x").is_err());
    }

    #[test]
    fn values_follow_the_schema_type() {
        let doc = json!({ "allowedHosts": ["a.example"] });
        let set =
            |k: &str, v: &str| apply(&doc, &ConfigKey::parse(k).unwrap(), &Edit::Set(v.into()));
        // A string key takes the text as it is, even when it looks like JSON.
        assert_eq!(
            set("reap.gracePeriod", "7").unwrap().unwrap()["reap"]["gracePeriod"],
            "7"
        );
        assert_eq!(
            set("attach.maxTotalTools", "20").unwrap().unwrap()["attach"]["maxTotalTools"],
            20
        );
        assert!(set("attach.maxTotalTools", "many").is_err());
        let add = |v: &str| {
            apply(
                &doc,
                &ConfigKey::parse("allowedHosts").unwrap(),
                &Edit::Add(v.into()),
            )
        };
        assert_eq!(
            add("b.example").unwrap().unwrap()["allowedHosts"],
            json!(["a.example", "b.example"])
        );
        assert!(
            add("a.example").unwrap().is_none(),
            "already there: unchanged"
        );
        let remove = apply(
            &doc,
            &ConfigKey::parse("allowedHosts").unwrap(),
            &Edit::Remove(Some("a.example".into())),
        );
        assert_eq!(remove.unwrap().unwrap()["allowedHosts"], json!([]));
        assert!(
            apply(
                &doc,
                &ConfigKey::parse("reap").unwrap(),
                &Edit::Add("x".into())
            )
            .is_err()
        );
    }
}
