//! The fields toolctl fills in a document it writes: new IDs, timestamps, and what `tool put`
//! adds to a tool file before checking it (which `validate` does too for a file not yet in a
//! catalog, so both read it the same way).

use crate::catalog::model::SCHEMA_VERSION;
use serde_json::Value;
use uuid::Uuid;

/// A new ID (toolID, bundleID): a UUIDv7, time-ordered.
pub fn new_id() -> Uuid {
    Uuid::now_v7()
}

/// A timestamp as the files write it: RFC 3339, UTC, always with milliseconds
/// (`2026-12-01T22:30:31.120Z`), so a file's length does not depend on the time it was
/// written (`validate FILE` measures put's size rule on the file as put would write it).
pub fn timestamp(t: jiff::Timestamp) -> Value {
    Value::String(format!("{t:.3}"))
}

/// What `tool put` fills in a tool document before it checks it: `schemaVersion`, `toolID` (a
/// new one) and `bundleID` (`bundle_id`, where it goes) when absent, and `createdAt` and
/// `modifiedAt` always (`now`). `validate` fills a tool file that is not in a catalog's
/// bundles tree the same way, so it checks the file as put will.
pub fn fill_for_put(
    fields: &mut serde_json::Map<String, Value>,
    bundle_id: Uuid,
    now: jiff::Timestamp,
) {
    fill_fields(
        fields,
        [
            ("schemaVersion", SCHEMA_VERSION.into()),
            ("toolID", new_id().to_string().into()),
            ("bundleID", bundle_id.to_string().into()),
        ],
        [],
    );
    stamp_created(fields, now);
}

/// What `bundle put` fills in a bundle document it creates before it checks it:
/// `schemaVersion`, `bundleID` (`bundle_id`, a new one when absent), and `displayName` (the
/// slug), `description` (empty) and `isEnabled` (true) when absent; `createdAt` and
/// `modifiedAt` (`now`) always. `validate` fills a bundle file that is not in a catalog's
/// bundles tree the same way, so it checks the file as put will.
pub fn fill_bundle_for_put(
    fields: &mut serde_json::Map<String, Value>,
    bundle_id: Uuid,
    now: jiff::Timestamp,
) {
    fill_bundle_fields(fields, bundle_id);
    stamp_created(fields, now);
}

/// The fields of [`fill_bundle_for_put`] but the timestamps: a replaced bundle keeps its own.
pub fn fill_bundle_fields(fields: &mut serde_json::Map<String, Value>, bundle_id: Uuid) {
    // A slug that is no string is put's error to report; the display name waits for it.
    let slug = fields.get("slug").cloned().unwrap_or(Value::Null);
    fill_fields(
        fields,
        [
            ("schemaVersion", SCHEMA_VERSION.into()),
            ("bundleID", bundle_id.to_string().into()),
            ("slug", slug.clone()),
            ("displayName", slug),
            ("description", "".into()),
            ("isEnabled", true.into()),
        ],
        [],
    );
}

/// Add the fields a document lacks: `head` ones near the top, each after the head fields before
/// it (identity first, as people read files), `tail` ones at the end. Fields already present
/// keep their value and place.
pub fn fill_fields<const H: usize, const T: usize>(
    fields: &mut serde_json::Map<String, Value>,
    head: [(&str, Value); H],
    tail: [(&str, Value); T],
) {
    let mut at = 0;
    for (key, value) in head {
        match fields.keys().position(|k| k == key) {
            Some(index) => at = at.max(index + 1),
            None => {
                fields.shift_insert(at, key.to_owned(), value);
                at += 1;
            }
        }
    }
    for (key, value) in tail {
        if !fields.contains_key(key) {
            fields.insert(key.to_owned(), value);
        }
    }
}

/// Stamp a document being created: `createdAt` and `modifiedAt` are when toolctl wrote it,
/// whatever the input said (a `tool.json` copied from v1 to make v3 must not carry v1's date,
/// which decides which version stands). Values already there keep their place in the file.
pub fn stamp_created(fields: &mut serde_json::Map<String, Value>, now: jiff::Timestamp) {
    for key in ["createdAt", "modifiedAt"] {
        fields.insert(key.to_owned(), timestamp(now));
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn timestamps_are_written_with_milliseconds_always() {
        for (ms, text) in [
            (0, "1970-01-01T00:00:00.000Z"),
            (1_764_628_231_120, "2025-12-01T22:30:31.120Z"),
            (1_764_628_231_123, "2025-12-01T22:30:31.123Z"),
        ] {
            let t = jiff::Timestamp::from_millisecond(ms).unwrap();
            assert_eq!(super::timestamp(t), text);
        }
    }
}
