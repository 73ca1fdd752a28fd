//! The agent-tools API: `GET /v1/agent-tools` (the tools a model may call, in OpenAI's
//! shape), `POST /v1/agent-tools/invoke-batch` (calls run as jobs), and the job routes.
//!
//! The registry is what `export --provider openai` prints of the catalog: enabled, usable
//! tools, one version per slug, those OpenAI cannot take left out. A batch is read as
//! `invoke --batch` reads one (1–20 calls, `call_id` at most 120 characters, `wait_ms`
//! 100–60000, `queue` `^[a-z0-9._:-]{1,80}$`); a call whose tool is unknown or disabled is
//! answered at once (`UNKNOWN_TOOL`, `JOB_TYPE_DISABLED`, with `200`), every other call
//! becomes a job. In sync mode the answer waits until every job is over or `wait_ms` has
//! passed: a job still running then is `pending` with its `job_id`, and goes on. In async
//! mode the answer holds the jobs at once. Results and tool messages use the contract's names
//! (`output`; `{"ok":true,"result":…}` in a message's content).

use super::{ApiError, App, Caller, JsonBody, blocking};
use crate::catalog::Catalog;
use crate::index::Index;
use crate::invoke::batch::{self, Mode};
use crate::jobs::enqueue::{self, Slot};
use crate::jobs::{self, Status};
use crate::provider::Provider;
use crate::provider::export::{self, ExportError, ExportRequest};
use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

const LIST: &str = "/v1/agent-tools";
const BATCH: &str = "/v1/agent-tools/invoke-batch";

/// `GET /v1/agent-tools`.
#[utoipa::path(
    get,
    path = "/v1/agent-tools",
    tag = "agent-tools",
    operation_id = "list_agent_tools",
    responses((status = 200, description = "{ok, tools, count}: the tools in OpenAI shape", body = Object), (status = 401, description = "no API key, or an unknown one", body = Object))
)]
pub(super) async fn list(
    State(app): State<Arc<App>>,
    _caller: Caller,
) -> Result<Response, ApiError> {
    let cached = Arc::clone(&app);
    let body = blocking(LIST, move || {
        registry(&cached.settings.root, &cached.registry).map_err(|e| ApiError::internal(e, LIST))
    })
    .await?;
    Ok(([(header::CONTENT_TYPE, "application/json")], body).into_response())
}

/// The last registry answered, under the stamp of the catalog state it was made from.
#[derive(Debug, Default)]
pub(super) struct Registry {
    last: std::sync::Mutex<Option<(crate::mcp::cache::Stamp, axum::body::Bytes)>>,
}

/// The body of `GET /v1/agent-tools`: `export --provider openai` of the whole catalog, tools
/// OpenAI cannot take left out, as `{ok, tools, count}`. Each request checks the catalog for
/// changes (as every command does); the export is made again only when the index file or
/// `toolctl.json` was written since the last one (their stamps, as `mcp serve` tells a change),
/// else the last body is answered. An index in memory is exported every time.
fn registry(root: &std::path::Path, cache: &Registry) -> Result<axum::body::Bytes, String> {
    let catalog = Catalog::open(root).map_err(|e| e.to_string())?;
    let request = ExportRequest {
        provider: Provider::Openai,
        bundles: Vec::new(),
        tags: Vec::new(),
        tools: Vec::new(),
        include_disabled: false,
        strict: false,
        lenient: true,
        force: true,
    };
    let body = Index::read(&catalog, &mut |_, _| {}, |index| {
        // Taken after the change check and before the export: a write in between makes the
        // next request export again.
        let stamp = index.stored_at().map(|file| {
            crate::mcp::cache::stamp_of(
                file,
                &catalog.root().join(crate::catalog::config::CONFIG_FILE),
            )
        });
        let mut last = cache.last.lock().unwrap_or_else(|e| e.into_inner());
        if let (Some(stamp), Some((at, body))) = (&stamp, last.as_ref())
            && stamp == at
        {
            return Ok(Ok(body.clone()));
        }
        let exported = match export::export(&catalog, index, &request) {
            Err(ExportError::Index(e)) => return Err(e),
            Err(e) => return Ok(Err(e.to_string())),
            Ok(exported) => exported,
        };
        let tools = match exported.list {
            Value::Array(tools) => tools,
            _ => Vec::new(),
        };
        let count = tools.len();
        let body = axum::body::Bytes::from(
            serde_json::to_vec(&json!({ "ok": true, "tools": tools, "count": count }))
                .unwrap_or_default(),
        );
        *last = stamp.map(|stamp| (stamp, body.clone()));
        Ok(Ok(body))
    })
    .map_err(|e| e.to_string())??;
    Ok(body)
}

/// `POST /v1/agent-tools/invoke-batch`.
#[utoipa::path(
    post,
    path = "/v1/agent-tools/invoke-batch",
    tag = "agent-tools",
    request_body(content = Object, description = "{calls, mode, wait_ms, queue}"),
    responses((status = 200, description = "{ok, results, tool_messages, mode}", body = Object), (status = 400, description = "VALIDATION_ERROR: the parameter or body field named in `details`", body = Object), (status = 401, description = "no API key, or an unknown one", body = Object), (status = 403, description = "FORBIDDEN: a read key", body = Object), (status = 413, description = "the body is over 1 MiB", body = Object))
)]
pub(super) async fn invoke_batch(
    State(app): State<Arc<App>>,
    caller: Caller,
    JsonBody(doc): JsonBody,
) -> Result<Json<Value>, ApiError> {
    caller.admin()?;
    let request = batch::parse(&doc, Some(batch::Shape::Toolctl)).map_err(|failure| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "VALIDATION_ERROR",
            failure.message(),
            BATCH,
        )
        .with_details(failure.details().clone())
    })?;
    let mut changes = app.runner.subscribe();
    let creating = Arc::clone(&app);
    let creating_request = request.clone();
    let slots = blocking(BATCH, move || create(&creating, &creating_request)).await?;
    if request.mode == Mode::Async {
        return Ok(Json(enqueue::async_answer(&request, &slots)));
    }
    // Wait until every job is over, or wait_ms.
    let deadline = tokio::time::Instant::now() + Duration::from_millis(request.wait_ms);
    let mut open: HashMap<String, ()> = slots
        .iter()
        .filter_map(|slot| match slot {
            Slot::Queued(job) => Some((job.id.clone(), ())),
            Slot::Refused(_) => None,
        })
        .collect();
    let store = Arc::clone(app.runner.store());
    let ids: Vec<String> = open.keys().cloned().collect();
    let finished = blocking(BATCH, move || {
        ids.into_iter()
            .map(|id| store.get(&id).map(|job| (id, job.status)))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| ApiError::internal(e, BATCH))
    })
    .await?;
    for (id, status) in finished {
        if status.is_final() {
            open.remove(&id);
        }
    }
    while !open.is_empty() {
        match tokio::time::timeout_at(deadline, changes.recv()).await {
            Err(_) => break,
            Ok(Ok(change)) if change.status.is_final() => {
                open.remove(&change.id);
            }
            Ok(Ok(_)) => {}
            // Changes were missed: read the jobs again.
            Ok(Err(tokio::sync::broadcast::error::RecvError::Lagged(_))) => {
                let store = Arc::clone(app.runner.store());
                let ids: Vec<String> = open.keys().cloned().collect();
                let over = blocking(BATCH, move || {
                    Ok(ids
                        .into_iter()
                        .filter(|id| store.get(id).is_ok_and(|j| j.status.is_final()))
                        .collect::<Vec<_>>())
                })
                .await?;
                for id in over {
                    open.remove(&id);
                }
            }
            Ok(Err(tokio::sync::broadcast::error::RecvError::Closed)) => break,
        }
    }
    let store = Arc::clone(app.runner.store());
    let answered = blocking(BATCH, move || {
        let mut results = Vec::with_capacity(slots.len());
        let mut messages = Vec::with_capacity(slots.len());
        for (call, slot) in request.calls.iter().zip(&slots) {
            let body = match slot {
                Slot::Refused(error) => json!({ "ok": false, "error": error }),
                Slot::Queued(job) => {
                    let job = store
                        .get(&job.id)
                        .map_err(|e| ApiError::internal(e, BATCH))?;
                    match (&job.result, job.status.is_final()) {
                        (Some(result), true) => result.clone(),
                        _ => json!({
                            "ok": false,
                            "pending": true,
                            "job_id": job.id,
                            "error": {
                                "code": "TIMEOUT",
                                "message": "Job did not complete within wait_ms",
                            },
                        }),
                    }
                }
            };
            let mut result = json!({ "call_id": call.call_id, "name": call.name });
            if let (Value::Object(result), Value::Object(body)) = (&mut result, &body) {
                result.extend(body.clone());
            }
            let content = match body.get("output") {
                Some(output) if body["ok"] == true => json!({ "ok": true, "result": output }),
                _ => body,
            };
            results.push(result);
            messages.push(json!({
                "role": "tool",
                "tool_call_id": call.call_id,
                "name": call.name,
                "content": content.to_string(),
            }));
        }
        Ok((results, messages))
    })
    .await?;
    let (results, messages) = answered;
    Ok(Json(json!({
        "ok": true,
        "results": results,
        "tool_messages": messages,
        "mode": "sync",
    })))
}

/// Read each call's tool; queue a job for each one that can run, on this server's workers.
fn create(app: &Arc<App>, request: &batch::Request) -> Result<Vec<Slot>, ApiError> {
    let catalog = Catalog::open(&app.settings.root).map_err(|e| ApiError::internal(e, BATCH))?;
    let slots = enqueue::enqueue(app.runner.store(), &catalog, request, None)
        .map_err(|e| ApiError::internal(e, BATCH))?;
    for slot in &slots {
        if let Slot::Queued(job) = slot {
            app.runner.submit(job);
        }
    }
    Ok(slots)
}

fn job_error(error: jobs::Error, path: &str) -> ApiError {
    match error {
        jobs::Error::NotFound(_) => {
            ApiError::new(StatusCode::NOT_FOUND, "NOT_FOUND", error.to_string(), path)
        }
        jobs::Error::Finished { .. } => {
            ApiError::new(StatusCode::CONFLICT, "CONFLICT", error.to_string(), path)
        }
        other => ApiError::internal(other, path),
    }
}

/// `GET /v1/jobs/{id}`.
#[utoipa::path(
    get,
    path = "/v1/jobs/{id}",
    tag = "jobs",
    operation_id = "get_job",
    params(("id" = String, Path, description = "the job id")),
    responses((status = 200, description = "{ok, job}", body = Object), (status = 401, description = "no API key, or an unknown one", body = Object), (status = 404, description = "NOT_FOUND", body = Object))
)]
pub(super) async fn job(
    State(app): State<Arc<App>>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let store = Arc::clone(app.runner.store());
    let path = caller.path;
    blocking(&path.clone(), move || {
        let job = store.get(&id).map_err(|e| job_error(e, &path))?;
        Ok(Json(json!({ "ok": true, "job": job })))
    })
    .await
}

#[derive(Debug, serde::Deserialize)]
pub(super) struct JobsQuery {
    status: Option<String>,
    limit: Option<usize>,
}

/// `GET /v1/jobs?status=&limit=`: the newest jobs first.
#[utoipa::path(
    get,
    path = "/v1/jobs",
    tag = "jobs",
    operation_id = "list_jobs",
    params(("status" = Option<String>, Query, description = "queued, running, succeeded, failed or cancelled"), ("limit" = Option<usize>, Query, description = "at most this many")),
    responses((status = 200, description = "{ok, jobs, count}, newest first", body = Object), (status = 400, description = "VALIDATION_ERROR: the parameter or body field named in `details`", body = Object), (status = 401, description = "no API key, or an unknown one", body = Object))
)]
pub(super) async fn jobs(
    State(app): State<Arc<App>>,
    caller: Caller,
    Query(query): Query<JobsQuery>,
) -> Result<Json<Value>, ApiError> {
    let path = caller.path;
    let status = match query.status.as_deref() {
        None => None,
        Some(text) => Some(Status::parse_name(text).ok_or_else(|| {
            ApiError::new(
                StatusCode::BAD_REQUEST,
                "VALIDATION_ERROR",
                format!(
                    "status '{text}' is not a job status: queued, running, succeeded, failed or cancelled"
                ),
                &path,
            )
        })?),
    };
    let limit = query.limit.unwrap_or(100).clamp(1, 1000);
    let store = Arc::clone(app.runner.store());
    blocking(&path.clone(), move || {
        let jobs = store.list(status, limit).map_err(|e| job_error(e, &path))?;
        let count = jobs.len();
        Ok(Json(json!({ "ok": true, "jobs": jobs, "count": count })))
    })
    .await
}

/// `POST /v1/jobs/{id}/cancel`.
#[utoipa::path(
    post,
    path = "/v1/jobs/{id}/cancel",
    tag = "jobs",
    operation_id = "cancel_job",
    params(("id" = String, Path, description = "the job id")),
    responses((status = 200, description = "{ok, job}", body = Object), (status = 401, description = "no API key, or an unknown one", body = Object), (status = 403, description = "FORBIDDEN: a read key", body = Object), (status = 404, description = "NOT_FOUND", body = Object), (status = 409, description = "CONFLICT: the job is over", body = Object))
)]
pub(super) async fn cancel(
    State(app): State<Arc<App>>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    caller.admin()?;
    let runner = Arc::clone(&app.runner);
    let path = caller.path;
    blocking(&path.clone(), move || {
        runner.cancel(&id).map_err(|e| job_error(e, &path))?;
        let job = runner.store().get(&id).map_err(|e| job_error(e, &path))?;
        Ok(Json(json!({ "ok": true, "job": job })))
    })
    .await
}

/// An event stream's events, from a channel.
pub(super) struct Events(tokio::sync::mpsc::Receiver<Event>);

impl futures_core::Stream for Events {
    type Item = Result<Event, std::convert::Infallible>;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        self.0.poll_recv(cx).map(|event| event.map(Ok))
    }
}

/// How often a stream reads its job again when no change was heard (a job another process
/// runs).
const STREAM_POLL: Duration = Duration::from_millis(500);

/// `GET /v1/jobs/{id}/stream`: `status` events (`{"id","status"}`) as the job's status
/// changes, the first at once, then one `result` event with the whole job when it is over, and
/// the end of the stream.
#[utoipa::path(
    get,
    path = "/v1/jobs/{id}/stream",
    tag = "jobs",
    operation_id = "stream_job",
    params(("id" = String, Path, description = "the job id")),
    responses((status = 200, description = "Server-Sent Events: status events, then one result event", content_type = "text/event-stream"), (status = 401, description = "no API key, or an unknown one", body = Object), (status = 404, description = "NOT_FOUND", body = Object))
)]
pub(super) async fn stream(
    State(app): State<Arc<App>>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Sse<axum::response::sse::KeepAliveStream<Events>>, ApiError> {
    let path = caller.path;
    let mut changes = app.runner.subscribe();
    let store = Arc::clone(app.runner.store());
    let first = {
        let (store, id, path) = (Arc::clone(&store), id.clone(), path.clone());
        blocking(&path.clone(), move || {
            store.get(&id).map_err(|e| job_error(e, &path))
        })
        .await?
    };
    let (tell, events) = tokio::sync::mpsc::channel(16);
    tokio::spawn(async move {
        let mut last = None;
        let mut job = first;
        loop {
            if last != Some(job.status) {
                last = Some(job.status);
                let event = Event::default()
                    .event("status")
                    .data(json!({ "id": job.id, "status": job.status }).to_string());
                if tell.send(event).await.is_err() {
                    return;
                }
            }
            if job.status.is_final() {
                let event = Event::default()
                    .event("result")
                    .data(json!(job).to_string());
                let _ = tell.send(event).await;
                return;
            }
            let _ = tokio::time::timeout(STREAM_POLL, async {
                loop {
                    match changes.recv().await {
                        Ok(change) if change.id == id => return,
                        Ok(_) => {}
                        Err(_) => return,
                    }
                }
            })
            .await;
            let (store, id) = (Arc::clone(&store), id.clone());
            match tokio::task::spawn_blocking(move || store.get(&id)).await {
                Ok(Ok(read)) => job = read,
                _ => return,
            }
        }
    });
    Ok(Sse::new(Events(events)).keep_alive(KeepAlive::default()))
}
