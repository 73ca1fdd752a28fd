//! How many argument validations per second `invoke`'s schema check does in-process, on a
//! typical tool schema (the fixture catalog's weather forecast: an object with a required
//! string, a bounded integer, an enum, no additional properties) and on a nested one.
//!
//! `cargo run --release -p toolctl-bench --bin validate-throughput` (bench/invoke.py runs it too).

#![allow(
    clippy::print_stdout,
    clippy::unwrap_used,
    reason = "a benchmark program"
)]

use serde_json::json;
use std::time::Instant;
use toolctl_lib::schema::check::Schema;

fn main() {
    let typical = json!({
        "type": "object",
        "properties": {
            "city": { "type": "string" },
            "days": { "type": "integer", "minimum": 1, "maximum": 7 },
            "units": { "type": "string", "enum": ["metric", "imperial"] }
        },
        "required": ["city"],
        "additionalProperties": false
    });
    let nested = json!({
        "$defs": { "attendee": { "type": "object", "properties": {
            "email": { "type": "string", "pattern": "^[^@]+@[^@]+$" },
            "optional": { "type": "boolean" } }, "required": ["email"] } },
        "type": "object",
        "properties": {
            "title": { "type": "string", "minLength": 1 },
            "attendees": { "type": "array", "items": { "$ref": "#/$defs/attendee" }, "maxItems": 50 },
            "when": { "type": "object", "properties": {
                "start": { "type": "string" }, "minutes": { "type": "integer", "minimum": 5 } },
                "required": ["start"] }
        },
        "required": ["title", "when"]
    });
    let cases = [
        (
            "typical, valid",
            &typical,
            json!({ "city": "Oslo", "days": 3, "units": "metric" }),
        ),
        (
            "typical, 3 errors",
            &typical,
            json!({ "days": 9, "units": "kelvin" }),
        ),
        (
            "nested, valid",
            &nested,
            json!({ "title": "Sync", "when": { "start": "2026-11-23T10:00:00Z", "minutes": 30 },
                    "attendees": [{ "email": "a@example.com" }, { "email": "b@example.com", "optional": true }] }),
        ),
    ];
    println!("{:<22} {:>14} {:>12}", "case", "validations/s", "µs each");
    for (name, schema, value) in cases {
        let compiled = Schema::compile(schema, "argSchema").unwrap();
        let rounds = 200_000;
        let started = Instant::now();
        let mut errors = 0;
        for _ in 0..rounds {
            errors += compiled.errors(std::hint::black_box(&value)).len();
        }
        let seconds = started.elapsed().as_secs_f64();
        std::hint::black_box(errors);
        println!(
            "{name:<22} {:>14.0} {:>12.2}",
            rounds as f64 / seconds,
            seconds * 1e6 / rounds as f64
        );
    }
    let started = Instant::now();
    let rounds = 2_000;
    for _ in 0..rounds {
        std::hint::black_box(Schema::compile(&typical, "argSchema").unwrap());
    }
    println!(
        "compile (typical)      {:>14.0} {:>12.2}",
        rounds as f64 / started.elapsed().as_secs_f64(),
        started.elapsed().as_secs_f64() * 1e6 / rounds as f64
    );
}
