//! A batch of calls made into jobs, as `POST /v1/agent-tools/invoke-batch` and `invoke --batch
//! --async` both make them: each call's tool read first; a call whose tool is unknown, disabled
//! or unusable answered at once (`UNKNOWN_TOOL`, `JOB_TYPE_DISABLED`), every other call queued
//! as a job, all in one transaction.

use super::{Job, NewJob, Store};
use crate::base::error_code::ErrorCode;
use crate::catalog::{Catalog, VersionChoice};
use crate::invoke::batch;
use serde_json::{Value, json};
use std::path::PathBuf;

/// How one call of a batch stands once it is read.
#[derive(Debug, Clone)]
pub enum Slot {
    /// Answered at once: the error of its result.
    Refused(Value),
    /// Queued as this job (its `name` is the tool's `bundle/slug@version`).
    Queued(Box<Job>),
}

/// Queue the calls of `request` that can run, on `request.queue`, working in `workspace`
/// (none: the worker's).
pub fn enqueue(
    store: &Store,
    catalog: &Catalog,
    request: &batch::Request,
    workspace: Option<PathBuf>,
) -> super::Result<Vec<Slot>> {
    let mut refused: Vec<Option<Value>> = Vec::with_capacity(request.calls.len());
    let mut new = Vec::new();
    for call in &request.calls {
        let entry = match catalog.resolve_tool(&call.name, VersionChoice::Default) {
            Ok((entry, _)) => entry,
            Err(e) => {
                let failure = batch::not_resolved(&call.name, e);
                let mut error = batch::error(&failure);
                if failure.code == ErrorCode::UnknownTool {
                    error["message"] = format!("Tool '{}' not found in registry", call.name).into();
                }
                refused.push(Some(error));
                continue;
            }
        };
        let reference = entry.reference();
        if !entry.is_effectively_enabled() || entry.unavailable.is_some() {
            refused.push(Some(json!({
                "code": "JOB_TYPE_DISABLED",
                "message": match entry.status().as_str() {
                    "disabled" => format!("Job type '{reference}' is disabled"),
                    status => format!("Job type '{reference}' is disabled ({status})"),
                },
            })));
            continue;
        }
        new.push(NewJob {
            queue: request.queue.clone(),
            call_id: call.call_id.clone(),
            name: reference,
            arguments: call.arguments.clone(),
            workspace: workspace.clone(),
        });
        refused.push(None);
    }
    let mut created = store.create(&new)?.into_iter();
    Ok(refused
        .into_iter()
        .filter_map(|slot| match slot {
            Some(error) => Some(Slot::Refused(error)),
            None => created.next().map(|job| Slot::Queued(Box::new(job))),
        })
        .collect())
}

/// A call answered at once, as `results[]` holds it.
pub fn refused(call: &batch::Call, error: &Value) -> Value {
    json!({
        "call_id": call.call_id,
        "name": call.name,
        "ok": false,
        "error": error,
    })
}

/// The answer of an async batch: each call's job (or its error), at once.
pub fn async_answer(request: &batch::Request, slots: &[Slot]) -> Value {
    let results: Vec<Value> = request
        .calls
        .iter()
        .zip(slots)
        .map(|(call, slot)| match slot {
            Slot::Refused(error) => refused(call, error),
            Slot::Queued(job) => json!({
                "call_id": call.call_id,
                "name": call.name,
                "ok": true,
                "job_id": job.id,
                "job_type": job.name,
            }),
        })
        .collect();
    json!({
        "ok": true,
        "results": results,
        "tool_messages": [],
        "mode": "async",
    })
}
