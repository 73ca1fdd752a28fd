//! `POST /api/v1/tools/attach`: the attach contract, on the catalog's agents backend (its
//! files, or the Letta server of `agents.letta`), as `toolctl attach --request` runs it. A
//! request the contract refuses is `400` naming each field at its JSON pointer; an agent that
//! does not exist is `400` too (the request named it); anything else that fails is `500`.

use super::{ApiError, App, Caller, JsonBody, blocking_call};
use crate::attach::contract::{self, Scoring};
use crate::attach::letta::{self, LettaError};
use crate::attach::on_letta::Remote;
use crate::attach::request::ContractRequest;
use crate::attach::{AttachError, Settings};
use crate::catalog::Catalog;
use crate::index::Index;
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde_json::Value;
use std::sync::Arc;

const PATH: &str = "/api/v1/tools/attach";

fn bad_request(message: impl Into<String>) -> ApiError {
    ApiError::new(StatusCode::BAD_REQUEST, "VALIDATION_ERROR", message, PATH)
}

#[utoipa::path(
    post,
    path = "/api/v1/tools/attach",
    tag = "attach",
    request_body(content = Object, description = "{agent_id, query, limit, min_score, keep_tools, auto_prune}"),
    responses((status = 200, description = "{success: true, message, details}", body = Object), (status = 400, description = "{success: false, error}", body = Object), (status = 401, description = "no API key, or an unknown one", body = Object), (status = 403, description = "a read key", body = Object), (status = 500, description = "{success: false, error}", body = Object))
)]
pub(super) async fn attach(
    State(app): State<Arc<App>>,
    caller: Caller,
    JsonBody(doc): JsonBody,
) -> Result<Json<Value>, ApiError> {
    caller.admin()?;
    let asked = ContractRequest::from_doc(&doc).map_err(|problems| {
        bad_request(
            problems
                .iter()
                .map(|p| {
                    let at = if p.pointer.is_empty() {
                        "/"
                    } else {
                        &p.pointer
                    };
                    format!("{at}: {}", p.message)
                })
                .collect::<Vec<_>>()
                .join("; "),
        )
    })?;
    blocking_call(PATH, move || run(&app, asked)).await
}

fn run(app: &App, asked: ContractRequest) -> Result<Json<Value>, ApiError> {
    let catalog = Catalog::open(&app.settings.root).map_err(|e| ApiError::internal(e, PATH))?;
    let config = catalog.config();
    let remote = letta::connect(config, None, None, true).map_err(letta_error)?;
    let settings = Settings::resolve(&config.attach, &|name| std::env::var(name).ok())
        .map_err(attach_error)?;
    let min_score = asked.min_score;
    let request = contract::request(asked, &config.pick, &Scoring::default())
        .map_err(|e| ApiError::internal(e, PATH))?;
    let outcome = Index::read(&catalog, &mut |_, _| {}, |index| {
        let remote = remote.as_ref().map(|(letta, server)| Remote {
            letta,
            server: server.as_ref(),
        });
        match contract::run(
            &catalog,
            index,
            &settings,
            &request,
            remote,
            app.settings.lock_timeout,
            &mut |_, _| {},
        ) {
            Err(AttachError::Index(e)) => Err(e),
            other => Ok(other),
        }
    })
    .map_err(|e| ApiError::internal(e, PATH))?
    .map_err(attach_error)?;
    Ok(Json(contract::response(&outcome, min_score, "keep_tools")))
}

fn letta_error(error: LettaError) -> ApiError {
    match error {
        LettaError::NotFound { .. } => bad_request(error.to_string()),
        other => ApiError::internal(other, PATH),
    }
}

fn attach_error(error: AttachError) -> ApiError {
    match error {
        AttachError::Limit { limit, max } => bad_request(format!(
            "limit {limit} is out of range: it must be between 1 and {max}"
        )),
        AttachError::MinScore { min_score } => bad_request(format!(
            "min_score {min_score} is out of range: it must be between 0 and 100"
        )),
        AttachError::Invalid { message, .. } => bad_request(message),
        AttachError::Keep { tool, why, .. } => bad_request(format!("keep_tools '{tool}': {why}")),
        AttachError::Letta(e) => letta_error(e),
        other => ApiError::internal(other, PATH),
    }
}
