//! Per-tool limits of HTTP calls: `maxRequestBytes` and `maxCallsPerMinute`.
//!
//! **`maxRequestBytes`** (default [`DEFAULT_MAX_REQUEST`]; `toolctl.json`'s `http` may set a
//! catalog-wide default, a tool's own field wins): the bytes of the URL, the headers and the
//! body a call would send. More is a `VALIDATION_ERROR` before anything is sent.
//!
//! **`maxCallsPerMinute`** holds across processes: twenty `invoke`s started at once send no
//! more than the limit in any minute. The calls are counted in `.toolctl/limits.sqlite`, one
//! row per call that got a slot, in a transaction that takes SQLite's write lock, so two
//! processes cannot both take the last slot. It is a token bucket of `maxCallsPerMinute`
//! tokens in which a spent token comes back one window after it was spent: unlike a bucket
//! refilled at a steady rate, no window of a minute (sliding, not by the clock) ever holds
//! more than the limit. A call without a slot waits for the oldest one to come back, as long
//! as its time (`timeoutMs`, or a batch's `wait_ms`) allows; when it cannot get one in time
//! it fails at once with `RATE_LIMITED` (exit 7) and sends nothing. The window is a minute;
//! `http.rateLimitWindow` in `toolctl.json` shortens it (for tests). The slot is taken right
//! before the request is sent (after the client is made and the credentials are on it), so
//! the server sees the calls spaced as counted; a request sent again after a 401 to an OAuth2
//! token takes a slot of its own; the retries of `maxRetries` ride on their call's slot.

use super::http::Clock;
use super::{Failure, Options};
use crate::base::error_code::ErrorCode;
use crate::catalog::ToolEntry;
use crate::catalog::model::Tool;
use rusqlite::TransactionBehavior;
use serde_json::json;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The most bytes a call may send unless its tool (or `toolctl.json`) says otherwise.
pub const DEFAULT_MAX_REQUEST: u64 = 1024 * 1024;

/// The file the calls are counted in, inside `.toolctl/`.
pub const FILE: &str = "limits.sqlite";

/// Refuse a request larger than `maxRequestBytes`.
pub(super) fn check_size(
    tool: &Tool,
    request: &super::http::Request,
    options: &Options,
) -> Result<(), Failure> {
    let cap = tool
        .max_request_bytes
        .or(options.http.max_request_bytes)
        .unwrap_or(DEFAULT_MAX_REQUEST);
    let headers: usize = request
        .headers
        .iter()
        .map(|(name, value)| name.as_str().len() + value.len() + 4)
        .sum();
    let size =
        (request.url.as_str().len() + headers + request.body.as_ref().map_or(0, Vec::len)) as u64;
    if size > cap {
        return Err(Failure::new(
            ErrorCode::ValidationError,
            format!(
                "the request would send {size} bytes (URL, headers and body), more than maxRequestBytes ({cap})"
            ),
        )
        .with_details(json!({ "bytes": size, "maxRequestBytes": cap })));
    }
    Ok(())
}

/// Take a slot of the tool's `maxCallsPerMinute` (nothing to do without one), waiting for
/// one as long as the call's clock allows.
pub(super) fn acquire(entry: &ToolEntry, options: &Options, clock: &Clock) -> Result<(), Failure> {
    let limit = entry
        .tool
        .max_calls_per_minute
        .or(options.http.max_calls_per_minute)
        .unwrap_or(0);
    if limit == 0 {
        return Ok(());
    }
    let window = options.rate_window;
    let key = entry.tool.tool_id.to_string();
    let failed = |e: &dyn std::fmt::Display| {
        Failure::new(
            ErrorCode::Internal,
            format!(
                "cannot count calls in {}: {e}",
                options.state_dir.join(FILE).display()
            ),
        )
    };
    crate::catalog::store::create_state_dir(&options.state_dir).map_err(|e| failed(&e))?;
    let busy = clock.left().max(Duration::from_millis(100));
    crate::catalog::store::refuse_link_out(&options.state_dir.join(FILE))
        .map_err(|e| Failure::new(ErrorCode::Internal, format!("cannot count calls: {e}")))?;
    let path = options.state_dir.join(FILE);
    let mut conn = match open_counts(&path, busy) {
        // Counts are only of the last window: a damaged file is made again, with a warning.
        Err(e) if crate::base::state_db::is_damaged(&e) => {
            crate::base::state_db::remove(&path).map_err(|e| failed(&e))?;
            options.notes.state_remade(
                &path,
                &format!("{e}; the calls counted in the last window are forgotten"),
            );
            open_counts(&path, busy)
        }
        other => other,
    }
    .map_err(|e| failed(&e))?;
    loop {
        let wait = take_slot(&mut conn, &key, limit, window).map_err(|e| {
            if crate::base::state_db::is_busy(&e) {
                clock.timed_out("no slot of maxCallsPerMinute could be counted")
            } else {
                failed(&e)
            }
        })?;
        let Some(wait) = wait else { return Ok(()) };
        if wait >= clock.left() {
            return Err(Failure::new(
                ErrorCode::RateLimited,
                format!(
                    "{}: {limit} calls in the last {} ms already (maxCallsPerMinute {limit}); the next slot is free in {} ms, after the call's time",
                    entry.reference(),
                    window.as_millis(),
                    wait.as_millis()
                ),
            )
            .with_details(json!({
                "maxCallsPerMinute": limit,
                "retryAfterMs": wait.as_millis() as u64,
            })));
        }
        std::thread::sleep(wait);
    }
}

/// The database of call counts at `path`, made when missing.
fn open_counts(path: &std::path::Path, busy: Duration) -> rusqlite::Result<rusqlite::Connection> {
    let conn = crate::base::state_db::open(path, true, busy, "NORMAL")?;
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS calls (tool TEXT NOT NULL, at REAL NOT NULL);
         CREATE INDEX IF NOT EXISTS calls_by_tool ON calls (tool, at);",
    )?;
    Ok(conn)
}

/// One attempt at a slot: `None` when one was taken, else how long until the oldest call
/// of the window leaves it.
fn take_slot(
    conn: &mut rusqlite::Connection,
    key: &str,
    limit: u32,
    window: Duration,
) -> rusqlite::Result<Option<Duration>> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs_f64();
    let start = now - window.as_secs_f64();
    tx.execute(
        "DELETE FROM calls WHERE tool = ?1 AND at <= ?2",
        rusqlite::params![key, start],
    )?;
    let (count, oldest): (u32, Option<f64>) = tx.query_row(
        "SELECT COUNT(*), MIN(at) FROM calls WHERE tool = ?1",
        [key],
        |row| Ok((row.get(0)?, row.get(1)?)),
    )?;
    let wait = if count < limit {
        tx.execute(
            "INSERT INTO calls (tool, at) VALUES (?1, ?2)",
            rusqlite::params![key, now],
        )?;
        None
    } else {
        let back = oldest.unwrap_or(now) - start;
        // A little past the moment, so the slot is free when the call looks again.
        Some(Duration::from_secs_f64(back.max(0.0)) + Duration::from_millis(2))
    };
    tx.commit()?;
    Ok(wait)
}
