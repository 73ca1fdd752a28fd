//! OpenAI strict mode (`strict: true`), also used for Anthropic's strict tool use: a
//! transformed copy of a tool's argument schema.
//!
//! Strict mode makes OpenAI sample arguments that follow the schema exactly, but it takes only a
//! subset of JSON Schema, in one shape: every object closed and every property required.
//! [`openai_strict`] computes that shape from the canonical `argSchema`, which is never changed,
//! and refuses — with every reason at once — whatever the subset cannot say with the same
//! meaning, so the user can export that tool without strict mode instead.
//!
//! What changes, and why the meaning stays:
//! - Every object gets `additionalProperties: false`. A tool's arguments are its declared
//!   properties; forbidding undeclared keys never makes a call with declared arguments invalid.
//!   A schema for the extra keys (a map), or a nested object that declares no properties at all
//!   (a free-form map), would lose every key it accepts, so both are refused.
//! - Every property is required; an optional one also accepts `null`, and **`null` means "not
//!   given"**: before validating a strict-mode call against the canonical schema, the caller
//!   removes each `null` property the canonical schema does not require. That is unambiguous
//!   only because a property that is optional *and* already accepts `null` is refused here.
//! - `oneOf` becomes `anyOf` only where no value can match two branches (`exclusive` below):
//!   then both accept the same values.
//! - Pure annotations (`ANNOTATIONS`) are dropped: they never decide whether a value is valid.
//!   `description` stays, except beside a `$ref`, which strict mode wants alone.
//!
//! Each error names the keyword and the JSON pointer of the canonical schema object holding it.

use super::Unexpressible;
use percent_encoding::percent_decode_str;
use serde_json::{Map, Value, json};

/// Keywords that only annotate: removing one never changes which values are valid. `description`
/// is an annotation too, but it is what the model reads, so each view keeps it where it can.
pub(super) const ANNOTATIONS: &[&str] = &[
    "title",
    "default",
    "$schema",
    "examples",
    "$comment",
    "discriminator",
    "deprecated",
    "readOnly",
    "writeOnly",
];

/// The `format` values strict mode accepts.
const FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// Keywords strict mode supports with their JSON Schema meaning: copied as they are.
const KEPT: &[&str] = &[
    "type",
    "const",
    "enum",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
];

/// Keywords that say what type a value has, or that are refused on their own anyway. A
/// subschema with none of them accepts any value, which strict mode has no way to say.
pub(super) const TYPING: &[&str] = &[
    "type", "$ref", "anyOf", "oneOf", "enum", "const", "allOf", "not", "if",
];

/// The deepest object nesting strict mode accepts. The root object is level 1; a property or
/// array item that is an object adds a level; `$ref` targets and `anyOf`/`oneOf` branches
/// describe the same value as the schema using them, so they add none.
const MAX_DEPTH: usize = 5;

/// How many subschemas the depth check visits before it gives up (a `$ref` graph can fan out).
const MAX_STEPS: usize = 10_000;

/// The strict-mode view of `schema`, or everything that keeps it from having one.
///
/// The view makes every property required; a model answering it sends `null` for an argument
/// it leaves out. Remove those before validating the call against `schema`: a `null` property
/// that `schema` does not require means "not given".
pub fn openai_strict(schema: &Value) -> Result<Value, Vec<Unexpressible>> {
    let mut view = Strict {
        root: schema,
        errors: Vec::new(),
    };
    let out = match schema {
        Value::Object(map) => {
            if map.get("type").and_then(Value::as_str) != Some("object") {
                view.fail(
                    "type",
                    "",
                    "strict mode needs `\"type\": \"object\"` at the root",
                );
            }
            view.schema(map, "", true)
        }
        _ => {
            view.fail(
                "type",
                "",
                "the schema is not an object with `\"type\": \"object\"`",
            );
            schema.clone()
        }
    };
    let mut steps = 0;
    view.depth(schema, "", 0, &mut Vec::new(), &mut steps);
    // Definitions nobody uses still go to OpenAI, so they are measured on their own as well.
    for defs in ["$defs", "definitions"] {
        if let Some(Value::Object(entries)) = schema.get(defs) {
            for (name, entry) in entries {
                let at = join(&join("", defs), name);
                view.depth(entry, &at, 0, &mut Vec::new(), &mut steps);
            }
        }
    }
    finish(out, view.errors)
}

/// `out` when nothing was wrong, otherwise the problems, each once, in the order found.
pub(super) fn finish(out: Value, errors: Vec<Unexpressible>) -> Result<Value, Vec<Unexpressible>> {
    let mut unique: Vec<Unexpressible> = Vec::new();
    for error in errors {
        if !unique.contains(&error) {
            unique.push(error);
        }
    }
    if unique.is_empty() {
        Ok(out)
    } else {
        Err(unique)
    }
}

pub(super) use crate::base::pointer::join;

/// The JSON pointer a local `$ref` (`#`, `#/$defs/x`, percent-encoded or not) points at.
pub(super) fn local_pointer(reference: &str) -> Option<String> {
    let fragment = reference.strip_prefix('#')?;
    let decoded = percent_decode_str(fragment).decode_utf8().ok()?;
    (decoded.is_empty() || decoded.starts_with('/')).then(|| decoded.into_owned())
}

/// Whether the `type` of `map` is, or lists, `name`.
pub(super) fn has_type(map: &Map<String, Value>, name: &str) -> bool {
    match map.get("type") {
        Some(Value::String(t)) => t == name,
        Some(Value::Array(ts)) => ts.iter().any(|t| t.as_str() == Some(name)),
        _ => false,
    }
}

struct Strict<'a> {
    root: &'a Value,
    errors: Vec<Unexpressible>,
}

impl Strict<'_> {
    fn fail(&mut self, keyword: &str, pointer: &str, message: impl Into<String>) {
        self.errors
            .push(Unexpressible::new(keyword, pointer, message));
    }

    /// Reports what strict mode cannot say; `fix` ends the message, and the way out follows.
    fn refuse(&mut self, keyword: &str, pointer: &str, fix: impl std::fmt::Display) {
        let message = format!("{fix}, or export this tool without strict mode");
        self.fail(keyword, pointer, message);
    }

    /// The strict form of the schema object `map` found at `ptr`.
    fn schema(&mut self, map: &Map<String, Value>, ptr: &str, root: bool) -> Value {
        if let Some(reference) = map.get("$ref") {
            return self.reference(map, reference, ptr);
        }
        let mut out = Map::new();
        for (key, value) in map {
            let here = join(ptr, key);
            match key.as_str() {
                k if ANNOTATIONS.contains(&k) => {}
                // A root `$id` only names the document: `#…` references resolve the same without.
                "$id" if root => {}
                k if k == "description" || KEPT.contains(&k) => {
                    out.insert(key.clone(), value.clone());
                }
                "pattern" => {
                    if value.as_str().is_none_or(has_lookaround) {
                        self.refuse(
                            key,
                            ptr,
                            "strict mode has no regex look-around (`(?=`, `(?!`, `(?<=`, `(?<!`); \
                                rewrite the pattern without it",
                        );
                    }
                    out.insert(key.clone(), value.clone());
                }
                "format" => {
                    if !value.as_str().is_some_and(|f| FORMATS.contains(&f)) {
                        self.refuse(
                            key,
                            ptr,
                            format!(
                                "strict mode knows only the formats {}; remove this `format`",
                                FORMATS.join(", ")
                            ),
                        );
                    }
                    out.insert(key.clone(), value.clone());
                }
                "properties" => {
                    let props = self.properties(map, value, ptr);
                    out.insert(key.clone(), props);
                }
                // Inserted to keep its place; `close` writes it once all properties are known.
                "required" => {
                    out.insert(key.clone(), Value::Null);
                }
                "additionalProperties" => match value {
                    Value::Bool(_) => {
                        out.insert(key.clone(), Value::Bool(false));
                    }
                    Value::Object(extra) if extra.is_empty() => {
                        out.insert(key.clone(), Value::Bool(false));
                    }
                    _ => self.refuse(
                        key,
                        ptr,
                        "strict mode has no schema for extra keys (a map); list the keys as \
                            properties",
                    ),
                },
                "items" => {
                    let items = self.items(value, ptr);
                    out.insert(key.clone(), items);
                }
                "anyOf" | "oneOf" if root => self.refuse(
                    key,
                    ptr,
                    format!(
                        "strict mode needs a plain object at the root, without `{key}`; move the \
                            alternatives into a property"
                    ),
                ),
                "anyOf" => {
                    let branches = self.branches(value, &here, key);
                    out.insert(key.clone(), branches);
                }
                "oneOf" if map.contains_key("anyOf") => self.refuse(
                    key,
                    ptr,
                    "`oneOf` would become `anyOf`, and this schema has one already; combine them \
                        by hand",
                ),
                "oneOf" => {
                    if value.as_array().is_some_and(|b| exclusive(b, self.root)) {
                        let branches = self.branches(value, &here, key);
                        out.insert("anyOf".to_owned(), branches);
                    } else {
                        self.refuse(
                            key,
                            ptr,
                            "strict mode has only `anyOf`, which would also accept a value \
                                matching several of these branches; make the branches exclusive \
                                (e.g. a required property with a different `const` in each)",
                        );
                    }
                }
                "$defs" | "definitions" if root => {
                    let defs = self.definitions(value, &here, key);
                    out.insert(key.clone(), defs);
                }
                other => self.refuse(other, ptr, unsupported(other)),
            }
        }
        if is_object(map) {
            self.close(map, &mut out, ptr, root);
        }
        if has_type(map, "array") && !map.contains_key("items") {
            self.refuse(
                "items",
                ptr,
                "strict mode needs typed `items` on every array; add `items` with a `type`",
            );
        }
        Value::Object(out)
    }

    /// Gives the object schema `out` all its properties as `required`, and closes it.
    fn close(
        &mut self,
        map: &Map<String, Value>,
        out: &mut Map<String, Value>,
        ptr: &str,
        root: bool,
    ) {
        let props = match map.get("properties") {
            Some(Value::Object(props)) => props.keys().map(String::as_str).collect(),
            _ => Vec::new(),
        };
        if !root
            && !map.contains_key("properties")
            && map
                .get("additionalProperties")
                .is_none_or(|extra| extra == true || extra == &json!({}))
        {
            self.refuse(
                "additionalProperties",
                ptr,
                "this object declares no properties and takes any keys; strict mode would close \
                    it, leaving only `{}`; declare its properties",
            );
        }
        match map.get("required") {
            None => {}
            Some(Value::Array(names)) => {
                for name in names {
                    match name.as_str() {
                        Some(name) if props.contains(&name) => {}
                        Some(name) => self.refuse(
                            "required",
                            ptr,
                            format!(
                                "`{name}` is required but not among `properties`, and a closed \
                                    object could never have it; define the property"
                            ),
                        ),
                        None => self.fail(
                            "required",
                            ptr,
                            "`required` lists something that is not a property name",
                        ),
                    }
                }
            }
            Some(_) => self.fail(
                "required",
                ptr,
                "`required` is not an array of property names",
            ),
        }
        if !out.contains_key("properties") {
            out.insert("properties".to_owned(), Value::Object(Map::new()));
        }
        out.insert("required".to_owned(), json!(props));
        if !out.contains_key("additionalProperties") {
            out.insert("additionalProperties".to_owned(), Value::Bool(false));
        }
    }

    /// The strict `properties`: each one transformed, the optional ones made nullable.
    fn properties(&mut self, map: &Map<String, Value>, value: &Value, ptr: &str) -> Value {
        let Value::Object(props) = value else {
            self.fail("properties", ptr, "`properties` is not an object");
            return value.clone();
        };
        let required: Vec<&str> = match map.get("required") {
            Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let mut out = Map::new();
        for (name, prop) in props {
            let here = join(&join(ptr, "properties"), name);
            let mut view = self.subschema(prop, &here, "properties");
            let typed = prop
                .as_object()
                .is_some_and(|p| TYPING.iter().any(|k| p.contains_key(*k)));
            if typed && !required.contains(&name.as_str()) {
                if may_accept_null(prop, self.root, 0) {
                    self.refuse(
                        "required",
                        &here,
                        format!(
                            "`{name}` is optional and also accepts null; strict mode must require \
                                it, and null would then mean both \"not given\" and null; make it \
                                required or not nullable"
                        ),
                    );
                } else {
                    view = nullable(view, prop);
                }
            }
            out.insert(name.clone(), view);
        }
        Value::Object(out)
    }

    /// The strict form of a subschema found under the keyword `via`.
    fn subschema(&mut self, value: &Value, ptr: &str, via: &str) -> Value {
        match value {
            Value::Object(map) => {
                if !TYPING.iter().any(|k| map.contains_key(*k)) {
                    self.refuse(
                        "type",
                        ptr,
                        "this schema has no `type` (nor `$ref`, `anyOf`, `enum`, `const`), so it \
                            accepts any value, which strict mode cannot say; give it a type",
                    );
                }
                self.schema(map, ptr, false)
            }
            Value::Bool(true) => {
                self.refuse(
                    via,
                    ptr,
                    "the schema `true` accepts any value, which strict mode cannot say; give it a \
                        typed schema",
                );
                value.clone()
            }
            Value::Bool(false) => {
                self.fail(
                    via,
                    ptr,
                    "the schema `false` accepts no value, which strict mode cannot say; remove it",
                );
                value.clone()
            }
            _ => {
                self.fail(via, ptr, "this is not a schema (a JSON object)");
                value.clone()
            }
        }
    }

    fn items(&mut self, value: &Value, ptr: &str) -> Value {
        let here = join(ptr, "items");
        match value {
            Value::Object(map) => {
                if !TYPING.iter().any(|k| map.contains_key(*k)) {
                    self.refuse(
                        "items",
                        ptr,
                        "the array's `items` have no `type` (nor `$ref`, `anyOf`, `enum`, \
                            `const`); strict mode needs typed items; add a type",
                    );
                }
                self.schema(map, &here, false)
            }
            _ => {
                self.refuse(
                    "items",
                    ptr,
                    "strict mode needs `items` to be one typed schema, not a tuple nor \
                        `true`/`false`; make it one",
                );
                value.clone()
            }
        }
    }

    fn branches(&mut self, value: &Value, here: &str, via: &str) -> Value {
        let Value::Array(branches) = value else {
            self.fail(via, here, format!("`{via}` is not an array of schemas"));
            return value.clone();
        };
        let out = branches.iter().enumerate();
        Value::Array(
            out.map(|(i, b)| self.subschema(b, &join(here, &i.to_string()), via))
                .collect(),
        )
    }

    fn definitions(&mut self, value: &Value, here: &str, via: &str) -> Value {
        let Value::Object(defs) = value else {
            self.fail(via, here, format!("`{via}` is not an object of schemas"));
            return value.clone();
        };
        let out = defs
            .iter()
            .map(|(name, d)| (name.clone(), self.subschema(d, &join(here, name), via)));
        Value::Object(out.collect())
    }

    /// A `$ref` alone: annotations beside it are dropped (they never decide validity), anything
    /// else beside it is refused, as is a `$ref` that does not point into this schema.
    fn reference(&mut self, map: &Map<String, Value>, reference: &Value, ptr: &str) -> Value {
        for key in map.keys() {
            if key != "$ref" && key != "description" && !ANNOTATIONS.contains(&key.as_str()) {
                self.refuse(
                    "$ref",
                    ptr,
                    format!(
                        "strict mode wants `$ref` alone, and it has `{key}` beside it; move \
                            `{key}` into the referenced schema"
                    ),
                );
            }
        }
        let target = reference.as_str().and_then(local_pointer);
        if target.is_none_or(|p| self.root.pointer(&p).is_none()) {
            self.refuse(
                "$ref",
                ptr,
                "this `$ref` does not point into this schema (remote and dangling references \
                    cannot be sent); inline the schema",
            );
        }
        json!({ "$ref": reference })
    }

    /// Reports objects nested deeper than [`MAX_DEPTH`]; `outer` is the level of the object the
    /// value at `ptr` is inside of (0 for the root). `refs` are the `$ref`s being followed, so a
    /// recursive schema is measured once round its loop.
    fn depth(
        &mut self,
        node: &Value,
        ptr: &str,
        outer: usize,
        refs: &mut Vec<String>,
        steps: &mut usize,
    ) {
        let Value::Object(map) = node else { return };
        *steps += 1;
        if *steps > MAX_STEPS {
            if *steps == MAX_STEPS + 1 {
                self.refuse(
                    "$ref",
                    "",
                    "the schema's `$ref`s expand too far to measure its nesting; simplify it",
                );
            }
            return;
        }
        let level = if is_object(map) { outer + 1 } else { outer };
        if level > MAX_DEPTH {
            let message = format!(
                "objects nest {level} levels deep here (the root is level 1) and strict mode \
                    allows {MAX_DEPTH}; flatten the arguments"
            );
            return self.refuse("properties", ptr, message);
        }
        if let Some(target) = map
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(local_pointer)
            && !refs.contains(&target)
            && let Some(schema) = self.root.pointer(&target)
        {
            refs.push(target.clone());
            self.depth(schema, &target, outer, refs, steps);
            refs.pop();
        }
        for choice in ["anyOf", "oneOf", "allOf"] {
            for (i, branch) in map
                .get(choice)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                self.depth(
                    branch,
                    &join(&join(ptr, choice), &i.to_string()),
                    outer,
                    refs,
                    steps,
                );
            }
        }
        for (name, prop) in map
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            self.depth(
                prop,
                &join(&join(ptr, "properties"), name),
                level,
                refs,
                steps,
            );
        }
        for inner in ["items", "additionalProperties"] {
            if let Some(schema) = map.get(inner) {
                self.depth(schema, &join(ptr, inner), level, refs, steps);
            }
        }
    }
}

/// Whether `map` describes objects: it says so, or uses the keywords only objects have.
fn is_object(map: &Map<String, Value>) -> bool {
    has_type(map, "object")
        || ["properties", "required", "additionalProperties"]
            .iter()
            .any(|k| map.contains_key(*k))
}

/// `view` accepting `null` as well, and nothing else more. `type`/`enum` gain `"null"`/`null`
/// where that is exact; a `$ref`, `anyOf` or `const` (which `null` would fail) or an untyped
/// schema is wrapped in `anyOf` with `{"type":"null"}`, taking the canonical description along.
fn nullable(view: Value, canonical: &Value) -> Value {
    let Value::Object(mut map) = view else {
        return view;
    };
    let wrap = ["$ref", "anyOf", "const"]
        .iter()
        .any(|k| map.contains_key(*k))
        || !(map.contains_key("type") || map.contains_key("enum"));
    if wrap {
        map.shift_remove("description");
        let mut out = Map::new();
        out.insert("anyOf".to_owned(), json!([map, { "type": "null" }]));
        if let Some(description) = canonical.get("description") {
            out.insert("description".to_owned(), description.clone());
        }
        return Value::Object(out);
    }
    if let Some(slot) = map.get_mut("type") {
        match slot {
            Value::String(t) => *slot = json!([std::mem::take(t), "null"]),
            Value::Array(ts) if !ts.contains(&json!("null")) => ts.push(json!("null")),
            _ => {}
        }
    }
    if let Some(Value::Array(values)) = map.get_mut("enum") {
        values.push(Value::Null);
    }
    Value::Object(map)
}

/// Undo the strict view's "null means not given" on a call's arguments: drop every `null` given
/// for a property the canonical `schema` does not require and whose own schema refuses `null`,
/// in nested objects and arrays too. A strict-mode model must send every property, and sends
/// `null` for the ones it leaves unset; the canonical schema, against which the call is then
/// checked, means them absent. A `null` the canonical schema accepts is kept: it is a value.
pub fn drop_unset_nulls(schema: &Value, args: &mut Value) {
    drop_nulls_at(schema, schema, args, 0);
}

fn drop_nulls_at(node: &Value, root: &Value, value: &mut Value, hops: usize) {
    let Some(map) = node.as_object() else {
        return;
    };
    if hops > 32 {
        return;
    }
    if let Some(target) = map
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(local_pointer)
        .and_then(|p| root.pointer(&p))
    {
        drop_nulls_at(target, root, value, hops + 1);
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        for branch in map.get(key).and_then(Value::as_array).into_iter().flatten() {
            drop_nulls_at(branch, root, value, hops + 1);
        }
    }
    match value {
        Value::Object(fields) => {
            let Some(properties) = map.get("properties").and_then(Value::as_object) else {
                return;
            };
            let required = |name: &str| {
                map.get("required")
                    .and_then(Value::as_array)
                    .is_some_and(|r| r.iter().any(|n| n == name))
            };
            fields.retain(|name, field| {
                !(field.is_null()
                    && !required(name)
                    && properties
                        .get(name)
                        .is_some_and(|p| !may_accept_null(p, root, hops)))
            });
            for (name, field) in fields.iter_mut() {
                if let Some(property) = properties.get(name) {
                    drop_nulls_at(property, root, field, hops + 1);
                }
            }
        }
        Value::Array(items) => {
            if let Some(schema) = map.get("items") {
                for item in items {
                    drop_nulls_at(schema, root, item, hops + 1);
                }
            }
        }
        _ => {}
    }
}

/// Whether `node` might accept `null`; `true` when unsure, so callers err on refusing.
fn may_accept_null(node: &Value, root: &Value, hops: usize) -> bool {
    match node {
        Value::Object(map) => accepts_null(map, root, hops),
        _ => node != &Value::Bool(false),
    }
}

/// Whether the schema object `map` might accept `null` (see [`may_accept_null`]).
pub(super) fn accepts_null(map: &Map<String, Value>, root: &Value, hops: usize) -> bool {
    if hops > 32 {
        return true;
    }
    let refuses = map.get("type").is_some_and(|t| match t {
        Value::String(t) => t != "null",
        Value::Array(ts) => !ts.contains(&json!("null")),
        _ => false,
    }) || map.get("const").is_some_and(|c| !c.is_null())
        || map
            .get("enum")
            .and_then(Value::as_array)
            .is_some_and(|e| !e.contains(&Value::Null))
        // A `$ref` that resolves to nothing here is refused on its own; it adds no null.
        || map.get("$ref").is_some_and(|r| {
            let target = r.as_str().and_then(local_pointer);
            target
                .and_then(|p| root.pointer(&p))
                .is_none_or(|target| !may_accept_null(target, root, hops + 1))
        })
        || ["anyOf", "oneOf"].iter().any(|k| {
            map.get(*k)
                .and_then(Value::as_array)
                .is_some_and(|bs| !bs.iter().any(|b| may_accept_null(b, root, hops + 1)))
        })
        || map
            .get("allOf")
            .and_then(Value::as_array)
            .is_some_and(|bs| bs.iter().any(|b| !may_accept_null(b, root, hops + 1)));
    !refuses
}

/// Whether `pattern` uses look-ahead or look-behind, outside escapes and character classes.
fn has_lookaround(pattern: &str) -> bool {
    let bytes = pattern.as_bytes();
    let (mut i, mut class) = (0, false);
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 1,
            b'[' => class = true,
            b']' => class = false,
            b'(' if !class => {
                let rest = &bytes[i + 1..];
                if ["?=", "?!", "?<=", "?<!"]
                    .iter()
                    .any(|l| rest.starts_with(l.as_bytes()))
                {
                    return true;
                }
            }
            _ => {}
        }
        i += 1;
    }
    false
}

fn unsupported(keyword: &str) -> String {
    let hint = match keyword {
        "allOf" => "merge its subschemas into one schema by hand",
        "patternProperties" | "propertyNames" | "unevaluatedProperties" => {
            "list the keys as properties"
        }
        "prefixItems" => "use one `items` schema",
        "$defs" | "definitions" => "move the definitions to the root",
        "minProperties" | "maxProperties" | "uniqueItems" | "contains" | "minContains"
        | "maxContains" | "unevaluatedItems" | "dependentRequired" | "dependentSchemas" | "if"
        | "then" | "else" | "not" => "state the rule in the description instead",
        _ => "remove it",
    };
    format!("strict mode has no `{keyword}`; {hint}")
}

// Exclusivity of `oneOf` branches, shared with the Gemini view. Each branch is reduced to facts
// every value it accepts must satisfy; two branches are exclusive when their facts contradict.

/// JSON value kinds as bits; integers apart from other numbers, so `integer` lies in `number`.
const NULL: u8 = 1;
const BOOLEAN: u8 = 2;
const OBJECT: u8 = 4;
const ARRAY: u8 = 8;
const STRING: u8 = 16;
const INTEGER: u8 = 32;
const FRACTION: u8 = 64;
const ANY: u8 = 127;

/// Whether no value can match two of `branches` (given with the document `root`, for `$ref`s),
/// so `anyOf` of them accepts exactly what `oneOf` does. `false` whenever that is not proven.
/// Proofs: the branches' possible types do not meet (`type`, `const`, `enum`), their
/// `const`/`enum` values do not meet, or — for objects — a property one of them requires has
/// schemas in the two that are exclusive by the same rules (e.g. a different `const` tag).
pub(super) fn exclusive(branches: &[Value], root: &Value) -> bool {
    branches
        .iter()
        .enumerate()
        .all(|(i, a)| branches[i + 1..].iter().all(|b| disjoint(a, b, root, 0)))
}

#[derive(Default)]
struct Constraints<'a> {
    kinds: u8,
    values: Option<Vec<&'a Value>>,
    required: Vec<&'a str>,
    properties: Vec<(&'a str, &'a Value)>,
    /// Property names of each closed object schema (`additionalProperties: false`) involved.
    closed: Vec<Vec<&'a str>>,
}

impl<'a> Constraints<'a> {
    fn of(node: &'a Value, root: &'a Value) -> Self {
        let mut facts = Constraints {
            kinds: ANY,
            ..Constraints::default()
        };
        facts.add(node, root, 0);
        if let Some(values) = &facts.values {
            facts.kinds &= values.iter().fold(0, |k, v| k | kind(v));
        }
        facts
    }

    fn add(&mut self, node: &'a Value, root: &'a Value, hops: usize) {
        let Value::Object(map) = node else {
            if node == &Value::Bool(false) {
                self.kinds = 0;
            }
            return;
        };
        match map.get("type") {
            Some(Value::String(t)) => self.kinds &= type_kinds(t),
            Some(Value::Array(ts)) => {
                self.kinds &= ts
                    .iter()
                    .fold(0, |k, t| k | t.as_str().map_or(ANY, type_kinds))
            }
            _ => {}
        }
        let listed = map.get("const").map(std::slice::from_ref).or(map
            .get("enum")
            .and_then(|e| e.as_array().map(Vec::as_slice)));
        if let Some(listed) = listed {
            self.values = Some(match self.values.take() {
                None => listed.iter().collect(),
                Some(old) => old
                    .into_iter()
                    .filter(|v| listed.iter().any(|w| loose_eq(v, w)))
                    .collect(),
            });
        }
        if let Some(Value::Array(names)) = map.get("required") {
            self.required.extend(names.iter().filter_map(Value::as_str));
        }
        let props = map.get("properties").and_then(Value::as_object);
        self.properties
            .extend(props.into_iter().flatten().map(|(n, s)| (n.as_str(), s)));
        if map.get("additionalProperties") == Some(&Value::Bool(false))
            && !map.contains_key("patternProperties")
        {
            self.closed.push(
                props
                    .into_iter()
                    .flatten()
                    .map(|(n, _)| n.as_str())
                    .collect(),
            );
        }
        if hops < 16
            && let Some(target) = map
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(local_pointer)
                .and_then(|p| root.pointer(&p))
        {
            self.add(target, root, hops + 1);
        }
        for branch in map
            .get("allOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            self.add(branch, root, hops + 1);
        }
    }
}

fn disjoint(a: &Value, b: &Value, root: &Value, depth: usize) -> bool {
    if depth > 8 {
        return false;
    }
    let (fa, fb) = (Constraints::of(a, root), Constraints::of(b, root));
    let common = fa.kinds & fb.kinds;
    if common == 0 {
        return true;
    }
    if let (Some(va), Some(vb)) = (&fa.values, &fb.values)
        && !va.iter().any(|x| vb.iter().any(|y| loose_eq(x, y)))
    {
        return true;
    }
    // Property facts bind only objects, so they prove nothing while other kinds remain possible.
    common == OBJECT
        && fa.required.iter().chain(&fb.required).any(|name| {
            let absent = |f: &Constraints| f.closed.iter().any(|names| !names.contains(name));
            absent(&fa)
                || absent(&fb)
                || fa
                    .properties
                    .iter()
                    .filter(|(n, _)| n == name)
                    .any(|(_, sa)| {
                        fb.properties
                            .iter()
                            .filter(|(n, _)| n == name)
                            .any(|(_, sb)| disjoint(sa, sb, root, depth + 1))
                    })
        })
}

fn type_kinds(name: &str) -> u8 {
    match name {
        "null" => NULL,
        "boolean" => BOOLEAN,
        "object" => OBJECT,
        "array" => ARRAY,
        "string" => STRING,
        "integer" => INTEGER,
        "number" => INTEGER | FRACTION,
        _ => ANY,
    }
}

fn kind(value: &Value) -> u8 {
    match value {
        Value::Null => NULL,
        Value::Bool(_) => BOOLEAN,
        Value::Object(_) => OBJECT,
        Value::Array(_) => ARRAY,
        Value::String(_) => STRING,
        Value::Number(n) if n.is_f64() && n.as_f64().is_some_and(|f| f.fract() != 0.0) => FRACTION,
        Value::Number(_) => INTEGER,
    }
}

/// JSON Schema equality: `1` and `1.0` are the same number. Numbers compare as `f64`, which can
/// only make two different numbers look equal — the safe direction for proving disjointness.
fn loose_eq(a: &Value, b: &Value) -> bool {
    crate::base::same_json::equal_by(a, b, |x, y| x.as_f64() == y.as_f64())
}

#[cfg(test)]
pub(super) mod tests;
