//! Gemini `functionDeclarations[].parameters`: a transformed copy of a tool's argument schema.
//!
//! Gemini takes a subset of OpenAPI 3.0, not JSON Schema, and answers anything outside it with
//! "Invalid JSON payload received. Unknown name …". [`gemini_schema`] computes that form from the
//! canonical `argSchema`, which is never changed, and refuses — with every reason at once —
//! whatever the subset cannot say with the same meaning. Unknown keywords are refused too: what
//! this module cannot vouch for, it does not send.
//!
//! What changes, and why the meaning stays:
//! - `$ref` is replaced by a copy of its target (`$defs` then go): the same schema, spelled out.
//!   A recursive `$ref` cannot be spelled out and is refused.
//! - `const: "v"` becomes `enum: ["v"]`; `type: ["T", "null"]` becomes `type: T, nullable: true`
//!   (and `null` in an `enum` becomes `nullable: true`); `type: [A, B]` becomes `anyOf` of `A` and
//!   `B`; `oneOf` becomes `anyOf` only where no value can match two branches
//!   (`strict::exclusive`). An `anyOf`/`oneOf` with a `{"type": "null"}` branch (pydantic's
//!   `Optional[T]`) loses that branch and says `nullable` instead: one other branch is merged
//!   into the schema holding it (`{"type": T, "nullable": true, …}`, as Google's own SDK does),
//!   several stay an `anyOf` whose branches are each `nullable` (OpenAPI 3.0.3 reads `nullable`
//!   only beside a `type`, and Gemini has refused other fields beside `anyOf`). Each accepts
//!   exactly the same values.
//! - On an integer, `exclusiveMinimum: n` is `minimum: n + 1` (and `exclusiveMaximum` likewise).
//! - Keywords that only narrow the values (`uniqueItems`, `multipleOf`, `contains`,
//!   `dependentRequired`, an exclusive bound on a number) are dropped and their rule is added
//!   to the field's description ("Items must be unique."): the view accepts a little more, the
//!   model is told the rule, and every call is checked against the canonical schema anyway.
//! - Pure annotations Gemini lacks (`$schema`, `$comment`, `examples` — whose first entry becomes
//!   `example` — …) are dropped: they never decide whether a value is valid.
//! - `additionalProperties: true` is dropped with no change at all. `additionalProperties: false`
//!   is dropped too, which lets Gemini's model see an open object: that is the one deliberate
//!   widening, and it is safe because every call is validated against the canonical schema,
//!   which still refuses undeclared keys, before a tool runs. A schema for extra keys is refused.
//!
//! Each error names the keyword and the JSON pointer of the canonical schema object holding it;
//! an error inside a `$ref` target points into the target, once however often it is used.

use super::Unexpressible;
use super::strict::{
    ANNOTATIONS, TYPING, accepts_null, exclusive, finish, has_type, join, local_pointer,
};
use serde_json::{Map, Value, json};

/// Keywords Gemini takes with the meaning JSON Schema gives them: copied as they are.
const KEPT: &[&str] = &[
    "title",
    "description",
    "default",
    "example",
    "pattern",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "propertyOrdering",
];

/// The JSON Schema types Gemini has (`null` only as `nullable`).
const TYPES: &[&str] = &["string", "number", "integer", "boolean", "array", "object"];

/// Whether Gemini takes `format` on a schema of `types`: `date-time` (and `enum`) on a string,
/// `float`/`double` on a number, `int32`/`int64` on an integer; it refuses the whole request
/// for any other.
fn gemini_format(types: Option<&(Vec<String>, bool)>, format: &str) -> bool {
    let Some((types, _)) = types else {
        return false;
    };
    match types.as_slice() {
        [t] if t == "string" => matches!(format, "date-time" | "enum"),
        [t] if t == "number" => matches!(format, "float" | "double"),
        [t] if t == "integer" => matches!(format, "int32" | "int64"),
        _ => false,
    }
}

/// How many `$ref`s may be inlined in all; past this the copy would grow out of proportion.
const MAX_INLINED: usize = 1_000;

/// Why a type list or `oneOf` cannot become `anyOf` beside another one.
const SECOND_ANY_OF: &str = "this would need a second `anyOf` beside the one the schema has";

/// The Gemini view of `schema`, or everything that keeps it from having one.
///
/// A tool without arguments comes out as `{"type":"object","properties":{}}`. Gemini has
/// answered an empty `properties` with "should be non-empty for OBJECT type", so a caller may
/// leave `parameters` out for such a tool.
pub fn gemini_schema(schema: &Value) -> Result<Value, Vec<Unexpressible>> {
    let mut view = Gemini {
        root: schema,
        errors: Vec::new(),
        refs: Vec::new(),
        inlined: 0,
    };
    if schema.is_object() && schema.get("type").and_then(Value::as_str) != Some("object") {
        view.fail(
            "type",
            "",
            "Gemini takes the parameters as one object: the root needs `\"type\": \"object\"`",
        );
    }
    let out = view.schema(schema, "", "type", true);
    finish(out, view.errors)
}

struct Gemini<'a> {
    root: &'a Value,
    errors: Vec<Unexpressible>,
    /// The `$ref` targets being inlined, outermost first.
    refs: Vec<String>,
    inlined: usize,
}

impl Gemini<'_> {
    fn fail(&mut self, keyword: &str, pointer: &str, message: impl Into<String>) {
        self.errors
            .push(Unexpressible::new(keyword, pointer, message));
    }

    /// Reports what Gemini cannot say: `problem` (a statement), then the two ways out, `fix`
    /// (an imperative: what to change in the schema) or another provider. Kept apart so every
    /// message reads "<problem>; <fix>, or export this tool …".
    fn refuse(
        &mut self,
        keyword: &str,
        pointer: &str,
        problem: impl std::fmt::Display,
        fix: impl std::fmt::Display,
    ) {
        let message =
            format!("{problem}; {fix}, or export this tool for a provider that takes JSON Schema");
        self.fail(keyword, pointer, message);
    }

    /// The Gemini form of the subschema at `ptr`, found under the keyword `via`.
    fn schema(&mut self, node: &Value, ptr: &str, via: &str, root: bool) -> Value {
        match node {
            Value::Object(map) if map.contains_key("$ref") => self.inline(map, ptr),
            Value::Object(map) => {
                if !root && !TYPING.iter().any(|k| map.contains_key(*k)) {
                    self.refuse(
                        "type",
                        ptr,
                        "this schema has no `type` (nor `enum`, `const`, `anyOf`), so it accepts \
                            any value, which Gemini cannot say",
                        "give it a type",
                    );
                }
                self.keywords(map, ptr, root)
            }
            Value::Bool(b) => {
                self.refuse(
                    via,
                    ptr,
                    format!("this schema is `{b}`, and Gemini has no boolean schemas"),
                    "write it out as an object",
                );
                node.clone()
            }
            _ => {
                self.fail(via, ptr, "this is not a schema (a JSON object)");
                node.clone()
            }
        }
    }

    /// A copy of the `$ref` target, with the annotations beside the `$ref` laid over it (they
    /// describe this use of the target).
    fn inline(&mut self, map: &Map<String, Value>, ptr: &str) -> Value {
        let reference = map.get("$ref").and_then(Value::as_str).unwrap_or_default();
        let Some(target) = local_pointer(reference) else {
            self.refuse(
                "$ref",
                ptr,
                format!(
                    "Gemini has no `$ref`, and `{reference}` is not in this schema, so it cannot \
                        be inlined"
                ),
                "copy the schema it names in its place",
            );
            return Value::Null;
        };
        let Some(schema) = self.root.pointer(&target) else {
            self.fail(
                "$ref",
                ptr,
                format!("`{reference}` points at nothing in this schema"),
            );
            return Value::Null;
        };
        if self.refs.contains(&target) {
            self.refuse(
                "$ref",
                ptr,
                format!(
                    "`{reference}` is recursive, and Gemini has no `$ref`: a recursive schema \
                        cannot be inlined"
                ),
                "write out a fixed number of levels by hand",
            );
            return Value::Null;
        }
        self.inlined += 1;
        if self.inlined > MAX_INLINED {
            if self.inlined == MAX_INLINED + 1 {
                self.refuse(
                    "$ref",
                    "",
                    format!("inlining the `$ref`s would copy more than {MAX_INLINED} schemas"),
                    "simplify the schema",
                );
            }
            return Value::Null;
        }
        let mut notes = Map::new();
        for (key, value) in map {
            // `$defs` beside a `$ref` go like all others: their users are inlined.
            if key == "$ref" || key == "$defs" || key == "definitions" {
                continue;
            }
            if key == "description" || key == "example" || ANNOTATIONS.contains(&key.as_str()) {
                notes.insert(key.clone(), value.clone());
            } else {
                self.refuse(
                    "$ref",
                    ptr,
                    format!(
                        "`{key}` beside `$ref` would have to be merged into the inlined target"
                    ),
                    "merge them by hand",
                );
            }
        }
        self.refs.push(target.clone());
        let view = self.schema(schema, &target, "$ref", false);
        self.refs.pop();
        let (Value::Object(mut out), Value::Object(notes)) =
            (view, self.keywords(&notes, ptr, false))
        else {
            return Value::Null;
        };
        out.extend(notes);
        Value::Object(out)
    }

    /// The Gemini form of the schema object `map` (without `$ref`) at `ptr`.
    fn keywords(&mut self, map: &Map<String, Value>, ptr: &str, root: bool) -> Value {
        let types = self.types(map, ptr);
        // `nullable` only where the whole schema accepts null: a `type` with `null` beside an
        // `enum` without it, or a `const`, still refuses null.
        let nullable =
            types.as_ref().is_none_or(|(_, null)| *null) && accepts_null(map, self.root, 0);
        let integer = types.as_ref().is_some_and(|(ts, _)| ts == &["integer"]);
        let mut rules = Vec::new();
        let bounds = [
            ("minimum", "exclusiveMinimum"),
            ("maximum", "exclusiveMaximum"),
        ];
        let mut lower = self.bound(map, ptr, bounds[0], integer, &mut rules);
        let mut upper = self.bound(map, ptr, bounds[1], integer, &mut rules);
        let mut out = Map::new();
        // The one branch left of an `anyOf`/`oneOf` whose other branches accept only null.
        let mut merged = None;
        for (key, value) in map {
            let here = join(ptr, key);
            match key.as_str() {
                "type" => match &types {
                    Some((ts, _)) if ts.len() == 1 => {
                        out.insert(key.clone(), json!(ts[0]));
                        if nullable {
                            out.insert("nullable".to_owned(), Value::Bool(true));
                        }
                    }
                    Some(_) if map.contains_key("anyOf") || map.contains_key("oneOf") => {
                        self.refuse(key, ptr, SECOND_ANY_OF, "combine them by hand");
                    }
                    Some((ts, _)) => {
                        let branches = ts.iter().map(|t| {
                            if nullable {
                                json!({"type": t, "nullable": true})
                            } else {
                                json!({"type": t})
                            }
                        });
                        out.insert("anyOf".to_owned(), branches.collect());
                    }
                    None => {}
                },
                "enum" | "const" => {
                    self.values(map, key, value, ptr, types.is_none() && nullable, &mut out)
                }
                "minimum" | "exclusiveMinimum" => {
                    out.extend(lower.take().map(|v| ("minimum".to_owned(), v)))
                }
                "maximum" | "exclusiveMaximum" => {
                    out.extend(upper.take().map(|v| ("maximum".to_owned(), v)))
                }
                k if KEPT.contains(&k) => {
                    out.insert(key.clone(), value.clone());
                }
                // Gemini refuses the whole request for a format it does not have (`email` on a
                // string); a format is an annotation in JSON Schema, so it is said in words.
                "format" => match value.as_str() {
                    Some(format) if gemini_format(types.as_ref(), format) => {
                        out.insert(key.clone(), value.clone());
                    }
                    Some(format) => rules.push(format!("Format: {format}.")),
                    None => {}
                },
                "properties" => {
                    let Value::Object(props) = value else {
                        self.fail(key, ptr, "`properties` is not an object");
                        continue;
                    };
                    let props = props.iter().map(|(name, p)| {
                        (name.clone(), self.schema(p, &join(&here, name), key, false))
                    });
                    out.insert(key.clone(), Value::Object(props.collect()));
                }
                "required" => {
                    self.required(map, value, ptr);
                    out.insert(key.clone(), value.clone());
                }
                "items" if value.is_object() => {
                    let items = self.schema(value, &here, key, false);
                    out.insert(key.clone(), items);
                }
                "items" => self.refuse(
                    key,
                    ptr,
                    "Gemini takes `items` only as one schema (no tuples, no `true`/`false`)",
                    "write one `items` schema for every item",
                ),
                "anyOf" => {
                    self.alternatives(value, &here, key, nullable, &mut out, &mut merged);
                }
                "oneOf" if map.contains_key("anyOf") || out.contains_key("anyOf") => {
                    self.refuse(key, ptr, SECOND_ANY_OF, "combine them by hand");
                }
                // Exclusivity is proven on the canonical branches; dropping `additionalProperties:
                // false` inside them widens the view only by undeclared keys, as everywhere else.
                "oneOf" => {
                    if value.as_array().is_some_and(|b| exclusive(b, self.root)) {
                        self.alternatives(value, &here, key, nullable, &mut out, &mut merged);
                    } else {
                        self.refuse(
                            key,
                            ptr,
                            "Gemini has only `anyOf`, which would also accept a value matching \
                                several of these branches",
                            "make the branches exclusive (e.g. a required property with a \
                                different `const` in each)",
                        );
                    }
                }
                "additionalProperties" => match value {
                    // Dropped: `true` changes nothing; `false` see the module comment.
                    Value::Bool(_) => {}
                    Value::Object(extra) if extra.is_empty() => {}
                    _ => self.refuse(
                        key,
                        ptr,
                        "Gemini has no schema for extra keys (a map)",
                        "list the keys as properties",
                    ),
                },
                // Inlined wherever a `$ref` uses them.
                "$defs" | "definitions" => {}
                "examples" => {
                    if !map.contains_key("example")
                        && let Some(first) = value.as_array().and_then(|e| e.first())
                    {
                        out.insert("example".to_owned(), first.clone());
                    }
                }
                k if ANNOTATIONS.contains(&k) => {}
                k if NARROWING.contains(&k) => match narrowing_rule(k, value) {
                    Some(rule) if rule.is_empty() => {}
                    Some(rule) => rules.push(rule),
                    None => self.refuse(k, ptr, no_keyword(k), unsupported(k)),
                },
                // A root `$id` only names the document: `#…` references resolve the same without.
                "$id" if root => {}
                other => self.refuse(other, ptr, no_keyword(other), unsupported(other)),
            }
        }
        if let Some(branch) = merged {
            out = self.merge(branch, out, ptr, nullable);
        }
        if !rules.is_empty() {
            let said = out.get("description").and_then(Value::as_str).unwrap_or("");
            let mut text = said.trim_end().to_owned();
            for rule in rules {
                if !text.is_empty() {
                    text.push(' ');
                }
                text.push_str(&rule);
            }
            out.insert("description".to_owned(), Value::String(text));
        }
        if has_type(map, "array") && !map.contains_key("items") {
            self.refuse(
                "items",
                ptr,
                "Gemini needs `items` on every array, and this one has none (any items)",
                "add `items`",
            );
        }
        Value::Object(out)
    }

    /// The types `map` allows besides `null`, and whether it allows `null`; `None` without a
    /// `type`, or with one Gemini cannot say (reported).
    fn types(&mut self, map: &Map<String, Value>, ptr: &str) -> Option<(Vec<String>, bool)> {
        let names: Vec<&Value> = match map.get("type")? {
            Value::Array(names) => names.iter().collect(),
            name => vec![name],
        };
        let mut types = Vec::new();
        let mut null = false;
        for name in names {
            match name.as_str() {
                Some("null") => null = true,
                Some(t) if TYPES.contains(&t) => types.push(t.to_owned()),
                _ => {
                    self.fail("type", ptr, format!("`{name}` is not a type Gemini knows"));
                    return None;
                }
            }
        }
        if types.is_empty() {
            self.refuse(
                "type",
                ptr,
                "this schema accepts only null, which Gemini cannot say",
                "give it a type besides `null`, or remove it",
            );
            return None;
        }
        Some((types, null))
    }

    /// Writes `enum` (from `enum` or `const`), Gemini's enums holding strings only. Without a
    /// `type`, it adds `type: string` (what the values are anyway), and `nullable` if asked.
    fn values(
        &mut self,
        map: &Map<String, Value>,
        key: &str,
        value: &Value,
        ptr: &str,
        nullable: bool,
        out: &mut Map<String, Value>,
    ) {
        let values = if key == "const" {
            std::slice::from_ref(value)
        } else if let Some(values) = value.as_array() {
            values.as_slice()
        } else {
            return self.fail(key, ptr, "`enum` is not an array");
        };
        if let Some(other) = values
            .iter()
            .find(|v| !(v.is_string() || key == "enum" && v.is_null()))
        {
            return self.refuse(
                key,
                ptr,
                format!(
                    "Gemini's enums hold only strings, and this `{key}` holds {}",
                    kind_of(other)
                ),
                "make the values strings",
            );
        }
        if key == "const" && map.contains_key("enum") {
            return self.refuse(
                key,
                ptr,
                "`const` becomes `enum`, and this schema has both",
                "keep one",
            );
        }
        let strings: Vec<&Value> = values.iter().filter(|v| v.is_string()).collect();
        if strings.is_empty() {
            return self.refuse(
                key,
                ptr,
                format!("this `{key}` allows only null, which Gemini cannot say"),
                "allow a string too, or remove it",
            );
        }
        if !map.contains_key("type") {
            out.insert("type".to_owned(), json!("string"));
            if nullable {
                out.insert("nullable".to_owned(), Value::Bool(true));
            }
        }
        out.insert("enum".to_owned(), json!(strings));
    }

    /// The bound `minimum` (or `maximum`) to write: the inclusive one, the exclusive one turned
    /// inclusive on an integer (`> n` is `>= n + 1` there), or the stricter of both. On other
    /// numbers an exclusive bound `n` is written inclusive and its rule ("greater than n") goes
    /// to `rules`: only `n` itself is widened, and the canonical schema still refuses it.
    fn bound(
        &mut self,
        map: &Map<String, Value>,
        ptr: &str,
        (inclusive, exclusive): (&str, &str),
        integer: bool,
        rules: &mut Vec<String>,
    ) -> Option<Value> {
        let lower = inclusive == "minimum";
        let strict = map.get(exclusive).and_then(|bound| {
            let step = bound
                .as_f64()
                .filter(|n| integer && n.fract() == 0.0 && n.abs() < 9.0e15);
            let step = step.map(|n| if lower { n + 1.0 } else { n - 1.0 });
            if step.is_none() && !integer && bound.is_number() {
                let than = if lower { "greater" } else { "less" };
                rules.push(format!("Must be {than} than {bound}."));
                return Some(bound.clone());
            }
            if step.is_none() {
                let wanted = if lower { "n + 1" } else { "n - 1" };
                self.refuse(
                    exclusive,
                    ptr,
                    format!(
                        "Gemini has no `{exclusive}`, and only on an `integer` with a \
                            whole-number bound n can it become `{inclusive}: {wanted}`"
                    ),
                    format!("use `{inclusive}` if the bound itself may be accepted"),
                );
            }
            // Whole numbers below 2^53 are exact as f64, so the step loses nothing.
            step.map(|n| json!(n as i64))
        });
        let plain = map.get(inclusive).cloned();
        match (plain, strict) {
            (Some(a), Some(b)) => {
                let (x, y) = (
                    a.as_f64().unwrap_or(f64::NAN),
                    b.as_f64().unwrap_or(f64::NAN),
                );
                Some(if (x >= y) == lower { a } else { b })
            }
            (a, b) => a.or(b),
        }
    }

    fn required(&mut self, map: &Map<String, Value>, value: &Value, ptr: &str) {
        let props = map.get("properties").and_then(Value::as_object);
        let Value::Array(names) = value else {
            return self.fail(
                "required",
                ptr,
                "`required` is not an array of property names",
            );
        };
        for name in names {
            let Some(name) = name.as_str() else {
                self.fail(
                    "required",
                    ptr,
                    format!("{name} in `required` is not a name"),
                );
                continue;
            };
            if !props.is_some_and(|p| p.contains_key(name)) {
                self.refuse(
                    "required",
                    ptr,
                    format!(
                        "`{name}` is required but not defined in `properties`, which Gemini \
                            rejects"
                    ),
                    "define the property",
                );
            }
        }
    }

    /// The Gemini form of the `anyOf` (or exclusive `oneOf`, `via`) `value` at `here`, put in
    /// `out` as `anyOf`. Branches that accept only null (`{"type": "null"}`) are left out when
    /// others remain, and the rest made `nullable` if the whole schema (`nullable`) accepts
    /// null: one branch left goes to `merged`, for [`Self::merge`] once the schema's other
    /// keywords are known; several stay an `anyOf`, each branch `nullable`.
    fn alternatives(
        &mut self,
        value: &Value,
        here: &str,
        via: &str,
        nullable: bool,
        out: &mut Map<String, Value>,
        merged: &mut Option<Value>,
    ) {
        let rest: Vec<(usize, &Value)> = match value {
            Value::Array(branches) if branches.iter().any(only_null) => branches
                .iter()
                .enumerate()
                .filter(|(_, b)| !only_null(b))
                .collect(),
            _ => Vec::new(),
        };
        if rest.is_empty() {
            let branches = self.branches(value, here, via);
            out.insert("anyOf".to_owned(), branches);
            return;
        }
        let mut views: Vec<Value> = rest
            .into_iter()
            .map(|(i, b)| self.schema(b, &join(here, &i.to_string()), via, false))
            .collect();
        if views.len() == 1 {
            *merged = views.pop();
            return;
        }
        if nullable {
            views.iter_mut().for_each(make_nullable);
        }
        out.insert("anyOf".to_owned(), Value::Array(views));
    }

    /// The schema at `ptr` whose keywords are `outer`, with the one branch left of its
    /// `anyOf`/`oneOf` (`branch`, already in Gemini form) merged in and `nullable` as the whole
    /// schema accepts null. The branch's keywords come first; the outer schema's annotations
    /// win over the branch's (they describe this use), both descriptions are kept, and a
    /// keyword both give differently is refused (both apply, and one field cannot say that).
    fn merge(
        &mut self,
        branch: Value,
        outer: Map<String, Value>,
        ptr: &str,
        nullable: bool,
    ) -> Map<String, Value> {
        let Value::Object(mut out) = branch else {
            return outer;
        };
        out.remove("nullable");
        for (key, value) in outer {
            match out.get(&key) {
                None => {
                    out.insert(key, value);
                }
                Some(same) if *same == value => {}
                Some(Value::String(inner)) if key == "description" => {
                    let both = format!("{} {inner}", value.as_str().unwrap_or_default());
                    out.insert(key, Value::String(both));
                }
                Some(_) if key == "example" || ANNOTATIONS.contains(&key.as_str()) => {
                    out.insert(key, value);
                }
                Some(_) => self.refuse(
                    &key,
                    ptr,
                    format!(
                        "`{key}` is both beside the `anyOf`/`oneOf` and in its one branch that \
                            is not null, which becomes this schema for Gemini"
                    ),
                    "keep one",
                ),
            }
        }
        let mut view = Value::Object(out);
        if nullable {
            make_nullable(&mut view);
        }
        match view {
            Value::Object(out) => out,
            _ => Map::new(),
        }
    }

    fn branches(&mut self, value: &Value, here: &str, via: &str) -> Value {
        let Value::Array(branches) = value else {
            self.fail(via, here, format!("`{via}` is not an array of schemas"));
            return value.clone();
        };
        let out = branches.iter().enumerate();
        Value::Array(
            out.map(|(i, b)| self.schema(b, &join(here, &i.to_string()), via, false))
                .collect(),
        )
    }
}

/// Whether `branch` accepts only null and says nothing else: `{"type": "null"}` (or
/// `["null"]`), with annotations at most.
fn only_null(branch: &Value) -> bool {
    let Value::Object(map) = branch else {
        return false;
    };
    let null = match map.get("type") {
        Some(Value::String(t)) => t == "null",
        Some(Value::Array(ts)) => ts.len() == 1 && ts[0] == "null",
        _ => false,
    };
    null && map.keys().all(|k| {
        k == "type" || k == "description" || k == "example" || ANNOTATIONS.contains(&k.as_str())
    })
}

/// Marks a Gemini view as accepting null: `nullable` beside its `type`, or in each branch of its
/// `anyOf` (OpenAPI 3.0.3 reads `nullable` only beside a `type`).
fn make_nullable(view: &mut Value) {
    let Value::Object(map) = view else {
        return;
    };
    if !map.contains_key("type")
        && let Some(Value::Array(branches)) = map.get_mut("anyOf")
    {
        branches.iter_mut().for_each(make_nullable);
        return;
    }
    // After `type`, where the other translations put it.
    let mut out = Map::new();
    for (key, value) in std::mem::take(map) {
        let typed = key == "type";
        out.insert(key, value);
        if typed {
            out.insert("nullable".to_owned(), Value::Bool(true));
        }
    }
    if !out.contains_key("nullable") {
        out.insert("nullable".to_owned(), Value::Bool(true));
    }
    *map = out;
}

/// Keywords that only narrow the values a schema accepts. Gemini lacks them; its view drops
/// each and states its rule in the field's description instead, as OpenAI strict mode's view
/// refuses only what would change meaning. Nothing is lost: every call is checked against the
/// canonical schema before a tool runs.
const NARROWING: &[&str] = &[
    "uniqueItems",
    "multipleOf",
    "contains",
    "minContains",
    "maxContains",
    "dependentRequired",
];

/// The rule of a narrowing keyword, in words for the model (empty when it narrows nothing, as
/// `uniqueItems: false`); `None` when its value is not one this can word (then it is refused).
fn narrowing_rule(keyword: &str, value: &Value) -> Option<String> {
    let count = |v: &Value| v.as_u64();
    Some(match keyword {
        "uniqueItems" => match value.as_bool()? {
            true => "Items must be unique.".to_owned(),
            false => String::new(),
        },
        "multipleOf" => format!("Must be a multiple of {}.", value.as_f64().map(|_| value)?),
        "contains" if value.is_object() => format!(
            "Must contain at least one item matching the JSON Schema {}.",
            serde_json::to_string(value).ok()?
        ),
        "minContains" => format!("At least {} items must match `contains`.", count(value)?),
        "maxContains" => format!("At most {} items may match `contains`.", count(value)?),
        "dependentRequired" => {
            let mut sentences = Vec::new();
            for (key, needs) in value.as_object()? {
                let needs: Vec<&str> = needs
                    .as_array()?
                    .iter()
                    .map(Value::as_str)
                    .collect::<Option<_>>()?;
                if !needs.is_empty() {
                    sentences.push(format!(
                        "When {key} is given, {} must be given too.",
                        needs.join(", ")
                    ));
                }
            }
            sentences.join(" ")
        }
        _ => return None,
    })
}

/// What is wrong with a keyword Gemini lacks.
fn no_keyword(keyword: &str) -> String {
    format!("Gemini's schema subset has no `{keyword}`")
}

/// What to do instead of a keyword Gemini lacks (an imperative).
fn unsupported(keyword: &str) -> &'static str {
    match keyword {
        "allOf" => "merge its subschemas into one schema by hand",
        "patternProperties" | "propertyNames" | "unevaluatedProperties" => {
            "list the keys as properties"
        }
        "prefixItems" | "additionalItems" => "use one `items` schema",
        "nullable" => "write `\"type\": [\"T\", \"null\"]`, as JSON Schema says it",
        "$id" | "$anchor" | "$dynamicRef" | "$dynamicAnchor" => {
            "use `$defs` with `#/$defs/…` references"
        }
        "not" | "if" | "then" | "else" | "dependentRequired" | "dependentSchemas"
        | "dependencies" | "unevaluatedItems" => "state the rule in the description instead",
        _ => "remove it",
    }
}

/// A JSON value named for a message: "the number 1", "`null`".
fn kind_of(value: &Value) -> String {
    let kind = match value {
        Value::Null => return "`null`".to_owned(),
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    let mut text = value.to_string();
    if text.chars().count() > 40 {
        text = text.chars().take(40).collect::<String>() + "…";
    }
    format!("the {kind} `{text}`")
}

#[cfg(test)]
mod tests;
