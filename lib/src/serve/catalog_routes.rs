//! The catalog routes under `/tools`: bundles and tool versions written, toggled, deleted and
//! read, a version invoked, the catalog listed and searched.
//!
//! Each route runs the operation its command runs and answers with that command's `--json`
//! output: `PUT /tools/bundles/{bundleID}` is `bundle put` (`201` when it created the bundle),
//! `PATCH` is `bundle enable|disable`, `DELETE` is `bundle delete` (a soft delete);
//! `PUT /tools/bundles/{bundle}/tools/{slug}/version/{v}` is `tool put` (`201`; `409
//! CONFLICT` when that version exists), `PATCH` is `tool enable|disable`, `DELETE` is `tool
//! delete`, `GET` is `tool get`, `POST …/invoke` is `invoke` (`{"ok": true, "value"}`, or the
//! failure's status with `{"ok": false, "error"}`); `GET /tools/bundles`, `GET /tools/tools`
//! and `GET /tools/tools/search` are `bundle list`, `tool list` and `search`.
//!
//! A bundle in a path is a bundleID or a slug (as on the command line), except in a bundle
//! `PUT`, whose path names the bundleID it creates or replaces. Query parameters the route
//! does not know, and values that do not read, are `400 VALIDATION_ERROR` naming the
//! parameter; a list parameter (`bundleIDs`, `tags`) may repeat or hold values separated by
//! commas. Beside the contract's parameters, the list routes take `includeDeleted` (tools
//! and bundles of soft-deleted bundles) as the commands do, and search takes `bundleIDs` and
//! `tags`.

use super::{ApiError, App, Caller, JsonBody, blocking, blocking_call};
use crate::base::error_code::ErrorCode;
use crate::catalog::view::{BundleView, ToolView};
use crate::catalog::{self, BundleFilter, Catalog, ToolFilter, VersionChoice, page};
use crate::index::{self, Index, SearchRequest};
use crate::invoke::{self, Options, batch};
use crate::ops::{BundleInput, Toggle};
use crate::pick;
use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use serde_json::{Value, json};
use std::sync::Arc;

const BUNDLES: &str = "/tools/bundles";
const TOOLS: &str = "/tools/tools";
const SEARCH: &str = "/tools/tools/search";
/// What error messages call a request's body (`request body: /slug …`).
const BODY: &str = "request body";

type Answer = Result<(StatusCode, Json<Value>), ApiError>;

/// The status a failure of this kind answers with.
fn status_of(code: ErrorCode) -> StatusCode {
    match code {
        ErrorCode::ValidationError => StatusCode::BAD_REQUEST,
        ErrorCode::NotFound | ErrorCode::UnknownTool | ErrorCode::CatalogNotFound => {
            StatusCode::NOT_FOUND
        }
        ErrorCode::Conflict => StatusCode::CONFLICT,
        ErrorCode::Forbidden | ErrorCode::ToolDisabled | ErrorCode::HostNotAllowed => {
            StatusCode::FORBIDDEN
        }
        ErrorCode::LockTimeout => StatusCode::SERVICE_UNAVAILABLE,
        ErrorCode::Timeout => StatusCode::GATEWAY_TIMEOUT,
        ErrorCode::RateLimited => StatusCode::TOO_MANY_REQUESTS,
        ErrorCode::UpstreamError | ErrorCode::OutputInvalid => StatusCode::BAD_GATEWAY,
        ErrorCode::Internal => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

fn catalog_error(error: &catalog::Error, path: &str) -> ApiError {
    let code = error.code();
    let details = error.details();
    let refusal = ApiError::new(status_of(code), code.as_str(), error.to_string(), path);
    if details.as_object().is_some_and(serde_json::Map::is_empty) {
        refusal
    } else {
        refusal.with_details(details)
    }
}

fn index_error(error: &index::Error, path: &str) -> ApiError {
    match error {
        index::Error::Catalog(e) => catalog_error(e, path),
        index::Error::EmptyQuery => invalid(
            "q",
            "the search query is empty; give words to search for",
            path,
        ),
        index::Error::Database { .. } => ApiError::internal(error, path),
    }
}

/// A `400 VALIDATION_ERROR` about one query parameter, path segment or body field.
fn invalid(name: &str, message: impl std::fmt::Display, path: &str) -> ApiError {
    let details = if name.starts_with('/') {
        json!({ "pointer": name })
    } else {
        json!({ "parameter": name })
    };
    ApiError::new(
        StatusCode::BAD_REQUEST,
        "VALIDATION_ERROR",
        format!("{name}: {message}"),
        path,
    )
    .with_details(details)
}

fn open(app: &App, path: &str) -> Result<Catalog, ApiError> {
    Catalog::open(app.settings.root.clone())
        .map(|catalog| catalog.with_lock_timeout(app.settings.lock_timeout))
        .map_err(|e| catalog_error(&e, path))
}

/// Read the index, brought up to date with the files, as the commands do.
fn read_index<T>(
    catalog: &Catalog,
    path: &str,
    read: impl FnMut(&Index) -> index::Result<T>,
) -> Result<T, ApiError> {
    Index::read(catalog, &mut |_, _| {}, read).map_err(|e| index_error(&e, path))
}

/// A route's query parameters, each checked against the names it takes.
#[derive(Debug)]
struct Params {
    pairs: Vec<(String, String)>,
    path: &'static str,
}

impl Params {
    fn new(
        pairs: Vec<(String, String)>,
        known: &[&str],
        path: &'static str,
    ) -> Result<Self, ApiError> {
        if let Some((name, _)) = pairs
            .iter()
            .find(|(name, _)| !known.contains(&name.as_str()))
        {
            return Err(invalid(
                name,
                format!(
                    "this route takes no such query parameter; it takes {}",
                    known.join(", ")
                ),
                path,
            ));
        }
        Ok(Self { pairs, path })
    }

    fn one(&self, name: &str) -> Result<Option<&str>, ApiError> {
        let mut values = self.pairs.iter().filter(|(n, _)| n == name);
        let first = values.next().map(|(_, value)| value.as_str());
        if values.next().is_some() {
            return Err(invalid(name, "is given more than once", self.path));
        }
        Ok(first)
    }

    /// Every value of a list parameter: repeated, or separated by commas.
    fn list(&self, name: &str) -> Vec<String> {
        self.pairs
            .iter()
            .filter(|(n, _)| n == name)
            .flat_map(|(_, value)| value.split(','))
            .map(str::trim)
            .filter(|value| !value.is_empty())
            .map(str::to_owned)
            .collect()
    }

    fn flag(&self, name: &str) -> Result<bool, ApiError> {
        match self.one(name)? {
            None | Some("false") => Ok(false),
            Some("true" | "") => Ok(true),
            Some(other) => Err(invalid(
                name,
                format!("{other:?} is not a boolean; give true or false"),
                self.path,
            )),
        }
    }

    /// The page size of `name` (1 to 1000; default 50).
    fn size(&self, name: &str) -> Result<usize, ApiError> {
        let Some(text) = self.one(name)? else {
            return Ok(page::DEFAULT_PAGE_SIZE);
        };
        let size = text.parse::<usize>().map_err(|_| {
            invalid(
                name,
                format!(
                    "{text:?} is not a page size; give 1 to {}",
                    page::MAX_PAGE_SIZE
                ),
                self.path,
            )
        })?;
        page::check_size(size).map_err(|_| {
            invalid(
                name,
                format!(
                    "{size} is out of range; a page holds 1 to {} items",
                    page::MAX_PAGE_SIZE
                ),
                self.path,
            )
        })
    }

    fn token(&self) -> Result<Option<String>, ApiError> {
        Ok(self.one("pageToken")?.map(str::to_owned))
    }
}

/// A bundle or tool named in a path: one segment, no `/` or `@` in it (they would change
/// what the reference names).
fn segment<'a>(name: &str, value: &'a str, path: &str) -> Result<&'a str, ApiError> {
    if value.is_empty() || value.contains(['/', '@']) {
        return Err(invalid(
            name,
            format!("{value:?} is not a name: it must be one path segment without '/' or '@'"),
            path,
        ));
    }
    Ok(value)
}

/// A body holding only `{"isEnabled": bool}`.
fn enabled_of(body: &Value, path: &str) -> Result<bool, ApiError> {
    let Some(fields) = body.as_object() else {
        return Err(invalid("/", "the body must be an object", path));
    };
    if let Some(other) = fields.keys().find(|key| *key != "isEnabled") {
        return Err(invalid(
            &format!("/{other}"),
            "only isEnabled may be changed here; PUT replaces the rest",
            path,
        ));
    }
    match fields.get("isEnabled") {
        Some(Value::Bool(enabled)) => Ok(*enabled),
        Some(_) => Err(invalid("/isEnabled", "must be true or false", path)),
        None => Err(invalid(
            "/isEnabled",
            "is missing; give {\"isEnabled\": true} or false",
            path,
        )),
    }
}

fn with_changed(view: Value, toggle: Toggle) -> Json<Value> {
    let mut json = view;
    json["changed"] = (toggle == Toggle::Changed).into();
    Json(json)
}

fn bundle_json(entry: &catalog::BundleEntry) -> Value {
    serde_json::to_value(BundleView::new(entry, None)).unwrap_or_default()
}

fn tool_json(entry: &catalog::ToolEntry) -> Value {
    serde_json::to_value(ToolView::new(entry)).unwrap_or_default()
}

/// `PUT /tools/bundles/{bundleID}`: create or replace the bundle with this ID.
#[utoipa::path(
    put,
    path = "/tools/bundles/{bundle}",
    tag = "catalog",
    params(("bundle" = String, Path, description = "the bundleID (a UUID v7) to create or replace")),
    request_body(content = Object, description = "a bundle.json: {slug, displayName, isEnabled, description}"),
    responses((status = 200, description = "replaced: the bundle", body = Object), (status = 201, description = "created: the bundle", body = Object), (status = 400, description = "VALIDATION_ERROR: the parameter or body field named in `details`", body = Object), (status = 401, description = "no API key, or an unknown one", body = Object), (status = 403, description = "FORBIDDEN: a read key on a write, or the built-in bundle changed", body = Object))
)]
pub(super) async fn put_bundle(
    State(app): State<Arc<App>>,
    caller: Caller,
    Path(bundle_id): Path<String>,
    JsonBody(mut body): JsonBody,
) -> Answer {
    caller.admin()?;
    let id = uuid::Uuid::try_parse(&bundle_id).map_err(|_| {
        invalid(
            "bundleID",
            format!("{bundle_id:?} is not a UUID; a bundle is created under its bundleID"),
            BUNDLES,
        )
    })?;
    let Some(fields) = body.as_object_mut() else {
        return Err(invalid("/", "the body must be a bundle object", BUNDLES));
    };
    match fields.get("bundleID") {
        None => {
            fields.insert("bundleID".to_owned(), id.to_string().into());
        }
        Some(given) if given.as_str() == Some(id.to_string().as_str()) => {}
        Some(given) => {
            return Err(invalid(
                "/bundleID",
                format!("{given} differs from the bundleID of the path ({id})"),
                BUNDLES,
            ));
        }
    }
    blocking(BUNDLES, move || {
        let mut catalog = open(&app, BUNDLES)?;
        let (entry, created) = catalog
            .put_bundle(BundleInput::Document {
                doc: body,
                source_name: BODY.to_owned(),
            })
            .map_err(|e| catalog_error(&e, BUNDLES))?;
        let mut json = bundle_json(&entry);
        json["created"] = created.into();
        let status = if created {
            StatusCode::CREATED
        } else {
            StatusCode::OK
        };
        Ok((status, Json(json)))
    })
    .await
}

/// `PATCH /tools/bundles/{bundleID}`: `{"isEnabled": bool}`.
#[utoipa::path(
    patch,
    path = "/tools/bundles/{bundle}",
    tag = "catalog",
    params(("bundle" = String, Path, description = "a bundleID, or a bundle slug")),
    request_body(content = Object, description = "{isEnabled}"),
    responses((status = 200, description = "the bundle, with changed", body = Object), (status = 400, description = "VALIDATION_ERROR: the parameter or body field named in `details`", body = Object), (status = 401, description = "no API key, or an unknown one", body = Object), (status = 403, description = "FORBIDDEN: a read key on a write, or the built-in bundle changed", body = Object), (status = 404, description = "NOT_FOUND: no such bundle or tool", body = Object))
)]
pub(super) async fn patch_bundle(
    State(app): State<Arc<App>>,
    caller: Caller,
    Path(bundle): Path<String>,
    JsonBody(body): JsonBody,
) -> Result<Json<Value>, ApiError> {
    caller.admin()?;
    let enabled = enabled_of(&body, BUNDLES)?;
    segment("bundleID", &bundle, BUNDLES)?;
    blocking(BUNDLES, move || {
        let mut catalog = open(&app, BUNDLES)?;
        let (entry, toggle) = catalog
            .set_bundle_enabled(&bundle, enabled)
            .map_err(|e| catalog_error(&e, BUNDLES))?;
        Ok(with_changed(bundle_json(&entry), toggle))
    })
    .await
}

/// `DELETE /tools/bundles/{bundleID}`: a soft delete (`bundle reap` removes it later).
#[utoipa::path(
    delete,
    path = "/tools/bundles/{bundle}",
    tag = "catalog",
    params(("bundle" = String, Path, description = "a bundleID, or a bundle slug")),
    responses((status = 200, description = "the bundle soft-deleted, with changed", body = Object), (status = 401, description = "no API key, or an unknown one", body = Object), (status = 403, description = "FORBIDDEN: a read key on a write, or the built-in bundle changed", body = Object), (status = 404, description = "NOT_FOUND: no such bundle or tool", body = Object))
)]
pub(super) async fn delete_bundle(
    State(app): State<Arc<App>>,
    caller: Caller,
    Path(bundle): Path<String>,
) -> Result<Json<Value>, ApiError> {
    caller.admin()?;
    segment("bundleID", &bundle, BUNDLES)?;
    blocking(BUNDLES, move || {
        let mut catalog = open(&app, BUNDLES)?;
        let (entry, toggle) = catalog
            .delete_bundle(&bundle)
            .map_err(|e| catalog_error(&e, BUNDLES))?;
        Ok(with_changed(bundle_json(&entry), toggle))
    })
    .await
}

/// `GET /tools/bundles`: `bundleIDs`, `includeDisabled`, `includeDeleted`, `pageSize`,
/// `pageToken`.
#[utoipa::path(
    get,
    path = "/tools/bundles",
    tag = "catalog",
    params(("bundleIDs" = Option<String>, Query, description = "bundles by ID or slug, comma-separated or repeated"), ("includeDisabled" = Option<bool>, Query, description = "also disabled bundles"), ("includeDeleted" = Option<bool>, Query, description = "also soft-deleted bundles"), ("pageSize" = Option<usize>, Query, description = "1 to 1000 (50)"), ("pageToken" = Option<String>, Query, description = "the nextPageToken of the page before")),
    responses((status = 200, description = "{items, nextPageToken, problems}", body = Object), (status = 400, description = "VALIDATION_ERROR: the parameter or body field named in `details`", body = Object), (status = 401, description = "no API key, or an unknown one", body = Object))
)]
pub(super) async fn list_bundles(
    State(app): State<Arc<App>>,
    _caller: Caller,
    Query(pairs): Query<Vec<(String, String)>>,
) -> Result<Json<Value>, ApiError> {
    let params = Params::new(
        pairs,
        &[
            "bundleIDs",
            "includeDisabled",
            "includeDeleted",
            "pageSize",
            "pageToken",
        ],
        BUNDLES,
    )?;
    let filter = BundleFilter {
        bundles: params.list("bundleIDs"),
        include_disabled: params.flag("includeDisabled")?,
        include_deleted: params.flag("includeDeleted")?,
    };
    let size = params.size("pageSize")?;
    let token = params.token()?;
    blocking(BUNDLES, move || {
        let catalog = open(&app, BUNDLES)?;
        let page = read_index(&catalog, BUNDLES, |index| {
            index.list_bundles(&catalog, &filter, size, token.as_deref())
        })?;
        let items: Vec<BundleView> = page
            .items
            .iter()
            .map(|(entry, count)| BundleView::new(entry, Some(*count)))
            .collect();
        Ok(Json(json!({
            "items": items,
            "nextPageToken": page.next_page_token,
            "problems": page.problems,
        })))
    })
    .await
}

/// The path of a tool version route, and the reference it names.
#[derive(serde::Deserialize)]
pub(super) struct VersionPath {
    bundle: String,
    slug: String,
    version: String,
}

impl VersionPath {
    const ROUTE: &str = "/tools/bundles/{bundle}/tools/{slug}/version/{version}";

    fn reference(&self) -> Result<String, ApiError> {
        let route = Self::ROUTE;
        segment("bundleID", &self.bundle, route)?;
        segment("toolSlug", &self.slug, route)?;
        segment("version", &self.version, route)?;
        Ok(format!("{}/{}@{}", self.bundle, self.slug, self.version))
    }
}

/// `PUT …/version/{v}`: the body is a tool.json; its `slug` and `version` may be left out
/// (the path gives them) but must match the path when given.
#[utoipa::path(
    put,
    path = "/tools/bundles/{bundle}/tools/{slug}/version/{version}",
    tag = "catalog",
    params(("bundle" = String, Path, description = "a bundleID, or a bundle slug"), ("slug" = String, Path, description = "the tool slug"), ("version" = String, Path, description = "the version")),
    request_body(content = Object, description = "a tool.json (slug and version from the path when left out)"),
    responses((status = 201, description = "the tool with its document", body = Object), (status = 400, description = "VALIDATION_ERROR: the parameter or body field named in `details`", body = Object), (status = 401, description = "no API key, or an unknown one", body = Object), (status = 403, description = "FORBIDDEN: a read key on a write, or the built-in bundle changed", body = Object), (status = 404, description = "NOT_FOUND: no such bundle or tool", body = Object), (status = 409, description = "CONFLICT: this version exists; it is left unchanged", body = Object))
)]
pub(super) async fn put_tool(
    State(app): State<Arc<App>>,
    caller: Caller,
    Path(at): Path<VersionPath>,
    JsonBody(mut body): JsonBody,
) -> Answer {
    caller.admin()?;
    let route = VersionPath::ROUTE;
    at.reference()?;
    let Some(fields) = body.as_object_mut() else {
        return Err(invalid("/", "the body must be a tool object", route));
    };
    for (key, value) in [("slug", &at.slug), ("version", &at.version)] {
        match fields.get(key) {
            None => {
                fields.insert(key.to_owned(), value.clone().into());
            }
            Some(given) if given.as_str() == Some(value.as_str()) => {}
            Some(given) => {
                return Err(invalid(
                    &format!("/{key}"),
                    format!("{given} differs from the {key} of the path ({value:?})"),
                    route,
                ));
            }
        }
    }
    blocking(route, move || {
        let mut catalog = open(&app, route)?;
        let entry = catalog
            .put_tool(body, BODY, Some(&at.bundle))
            .map_err(|e| catalog_error(&e, route))?;
        Ok((StatusCode::CREATED, Json(ToolView::with_document(&entry))))
    })
    .await
}

/// `PATCH …/version/{v}`: `{"isEnabled": bool}`.
#[utoipa::path(
    patch,
    path = "/tools/bundles/{bundle}/tools/{slug}/version/{version}",
    tag = "catalog",
    params(("bundle" = String, Path, description = "a bundleID, or a bundle slug"), ("slug" = String, Path, description = "the tool slug"), ("version" = String, Path, description = "the version")),
    request_body(content = Object, description = "{isEnabled}"),
    responses((status = 200, description = "the tool, with changed", body = Object), (status = 400, description = "VALIDATION_ERROR: the parameter or body field named in `details`", body = Object), (status = 401, description = "no API key, or an unknown one", body = Object), (status = 403, description = "FORBIDDEN: a read key on a write, or the built-in bundle changed", body = Object), (status = 404, description = "NOT_FOUND: no such bundle or tool", body = Object))
)]
pub(super) async fn patch_tool(
    State(app): State<Arc<App>>,
    caller: Caller,
    Path(at): Path<VersionPath>,
    JsonBody(body): JsonBody,
) -> Result<Json<Value>, ApiError> {
    caller.admin()?;
    let route = VersionPath::ROUTE;
    let enabled = enabled_of(&body, route)?;
    let reference = at.reference()?;
    blocking(route, move || {
        let mut catalog = open(&app, route)?;
        let (entry, toggle) = catalog
            .set_tool_enabled(&reference, enabled)
            .map_err(|e| catalog_error(&e, route))?;
        Ok(with_changed(tool_json(&entry), toggle))
    })
    .await
}

/// `DELETE …/version/{v}`: the version's folder removed.
#[utoipa::path(
    delete,
    path = "/tools/bundles/{bundle}/tools/{slug}/version/{version}",
    tag = "catalog",
    params(("bundle" = String, Path, description = "a bundleID, or a bundle slug"), ("slug" = String, Path, description = "the tool slug"), ("version" = String, Path, description = "the version")),
    responses((status = 200, description = "the tool deleted, with deleted: true", body = Object), (status = 401, description = "no API key, or an unknown one", body = Object), (status = 403, description = "FORBIDDEN: a read key on a write, or the built-in bundle changed", body = Object), (status = 404, description = "NOT_FOUND: no such bundle or tool", body = Object))
)]
pub(super) async fn delete_tool(
    State(app): State<Arc<App>>,
    caller: Caller,
    Path(at): Path<VersionPath>,
) -> Result<Json<Value>, ApiError> {
    caller.admin()?;
    let route = VersionPath::ROUTE;
    let reference = at.reference()?;
    blocking(route, move || {
        let mut catalog = open(&app, route)?;
        let entry = catalog
            .delete_tool(&reference)
            .map_err(|e| catalog_error(&e, route))?;
        let mut json = tool_json(&entry);
        json["deleted"] = true.into();
        Ok(Json(json))
    })
    .await
}

/// `GET …/version/{v}`: the tool.json, its status and its usage.
#[utoipa::path(
    get,
    path = "/tools/bundles/{bundle}/tools/{slug}/version/{version}",
    tag = "catalog",
    params(("bundle" = String, Path, description = "a bundleID, or a bundle slug"), ("slug" = String, Path, description = "the tool slug"), ("version" = String, Path, description = "the version")),
    responses((status = 200, description = "the tool with its document and usage", body = Object), (status = 401, description = "no API key, or an unknown one", body = Object), (status = 404, description = "NOT_FOUND: no such bundle or tool", body = Object))
)]
pub(super) async fn get_tool(
    State(app): State<Arc<App>>,
    _caller: Caller,
    Path(at): Path<VersionPath>,
) -> Result<Json<Value>, ApiError> {
    let route = VersionPath::ROUTE;
    let reference = at.reference()?;
    blocking_call(route, move || {
        let catalog = open(&app, route)?;
        let (entry, _problems) = catalog
            .resolve_tool(&reference, VersionChoice::Default)
            .map_err(|e| catalog_error(&e, route))?;
        let usage = invoke::usage::for_tool(&catalog, &entry.tool.tool_id.to_string());
        let mut json = ToolView::with_document(&entry);
        json["usage"] = serde_json::to_value(&usage).unwrap_or_default();
        Ok(Json(json))
    })
    .await
}

/// `POST …/version/{v}/invoke`: `{"args": {…}}` (no `args`: none). Answers `{"ok": true,
/// "value"}`, or the failure's status with `{"ok": false, "error"}` (its message and details
/// cut at 12 KB, as a batch cuts them).
#[utoipa::path(
    post,
    path = "/tools/bundles/{bundle}/tools/{slug}/version/{version}/invoke",
    tag = "catalog",
    params(("bundle" = String, Path, description = "a bundleID, or a bundle slug"), ("slug" = String, Path, description = "the tool slug"), ("version" = String, Path, description = "the version")),
    request_body(content = Object, description = "{args}"),
    responses((status = 200, description = "{ok: true, value}", body = Object), (status = 400, description = "VALIDATION_ERROR: the args do not match argSchema", body = Object), (status = 401, description = "no API key, or an unknown one", body = Object), (status = 403, description = "FORBIDDEN or TOOL_DISABLED", body = Object), (status = 404, description = "UNKNOWN_TOOL", body = Object), (status = 502, description = "UPSTREAM_ERROR or OUTPUT_INVALID", body = Object), (status = 504, description = "TIMEOUT", body = Object))
)]
pub(super) async fn invoke_tool(
    State(app): State<Arc<App>>,
    caller: Caller,
    Path(at): Path<VersionPath>,
    JsonBody(body): JsonBody,
) -> Answer {
    caller.admin()?;
    let route = VersionPath::ROUTE;
    let reference = at.reference()?;
    let Some(fields) = body.as_object() else {
        return Err(invalid("/", "the body must be {\"args\": {…}}", route));
    };
    if let Some(other) = fields.keys().find(|key| *key != "args") {
        return Err(invalid(
            &format!("/{other}"),
            "is not a field of an invoke request; give {\"args\": {…}}",
            route,
        ));
    }
    let args = fields.get("args").cloned().unwrap_or_else(|| json!({}));
    blocking(route, move || {
        let catalog = open(&app, route)?;
        let (entry, _problems) = catalog
            .resolve_tool(&reference, VersionChoice::Default)
            .map_err(|e| {
                let mut refusal = catalog_error(&e, route);
                if e.code() == ErrorCode::NotFound {
                    refusal.code = ErrorCode::UnknownTool.as_str();
                }
                refusal
            })?;
        let options = Options::new(&catalog, app.settings.workspace.clone());
        match invoke::call_and_record(&catalog, &entry, args, &options) {
            Ok(success) => Ok((StatusCode::OK, Json(success.envelope()))),
            Err(failure) => Ok((
                status_of(failure.code),
                Json(json!({ "ok": false, "error": batch::error(&failure) })),
            )),
        }
    })
    .await
}

/// `GET /tools/tools`: `tags`, `bundleIDs`, `includeDisabled`, `includeDeleted`,
/// `recommendedPageSize` (or `pageSize`), `pageToken`.
#[utoipa::path(
    get,
    path = "/tools/tools",
    tag = "catalog",
    params(("tags" = Option<String>, Query, description = "tags a tool must all have, comma-separated or repeated"), ("bundleIDs" = Option<String>, Query, description = "bundles by ID or slug"), ("includeDisabled" = Option<bool>, Query, description = "also disabled tools"), ("includeDeleted" = Option<bool>, Query, description = "also tools of soft-deleted bundles"), ("recommendedPageSize" = Option<usize>, Query, description = "1 to 1000 (50)"), ("pageSize" = Option<usize>, Query, description = "the same as recommendedPageSize"), ("pageToken" = Option<String>, Query, description = "the nextPageToken of the page before")),
    responses((status = 200, description = "{items, nextPageToken, problems}", body = Object), (status = 400, description = "VALIDATION_ERROR: the parameter or body field named in `details`", body = Object), (status = 401, description = "no API key, or an unknown one", body = Object))
)]
pub(super) async fn list_tools(
    State(app): State<Arc<App>>,
    _caller: Caller,
    Query(pairs): Query<Vec<(String, String)>>,
) -> Result<Json<Value>, ApiError> {
    let params = Params::new(
        pairs,
        &[
            "tags",
            "bundleIDs",
            "includeDisabled",
            "includeDeleted",
            "recommendedPageSize",
            "pageSize",
            "pageToken",
        ],
        TOOLS,
    )?;
    let filter = ToolFilter {
        bundles: params.list("bundleIDs"),
        tags: params.list("tags"),
        include_disabled: params.flag("includeDisabled")?,
        include_deleted: params.flag("includeDeleted")?,
    };
    let size = match (params.one("recommendedPageSize")?, params.one("pageSize")?) {
        (Some(_), Some(_)) => {
            return Err(invalid(
                "pageSize",
                "give recommendedPageSize or pageSize, not both",
                TOOLS,
            ));
        }
        (_, Some(_)) => params.size("pageSize")?,
        _ => params.size("recommendedPageSize")?,
    };
    let token = params.token()?;
    blocking(TOOLS, move || {
        let catalog = open(&app, TOOLS)?;
        let page = read_index(&catalog, TOOLS, |index| {
            index.list_tools(&catalog, &filter, size, token.as_deref())
        })?;
        let items: Vec<ToolView> = page.items.iter().map(ToolView::new).collect();
        Ok(Json(json!({
            "items": items,
            "nextPageToken": page.next_page_token,
            "problems": page.problems,
        })))
    })
    .await
}

/// `GET /tools/tools/search`: `q`, `includeDisabled`, `includeDeleted`, `bundleIDs`,
/// `tags`, `pageSize`, `pageToken`; ranked as `search` ranks.
#[utoipa::path(
    get,
    path = "/tools/tools/search",
    tag = "catalog",
    operation_id = "search_tools",
    params(("q" = String, Query, description = "the words to search for"), ("includeDisabled" = Option<bool>, Query, description = "also disabled tools"), ("includeDeleted" = Option<bool>, Query, description = "also tools of soft-deleted bundles"), ("bundleIDs" = Option<String>, Query, description = "bundles by ID or slug"), ("tags" = Option<String>, Query, description = "tags a tool must all have"), ("pageSize" = Option<usize>, Query, description = "1 to 1000 (50)"), ("pageToken" = Option<String>, Query, description = "the nextPageToken of the page before")),
    responses((status = 200, description = "{query, items, nextPageToken, corrections, problems}", body = Object), (status = 400, description = "VALIDATION_ERROR: the parameter or body field named in `details`", body = Object), (status = 401, description = "no API key, or an unknown one", body = Object))
)]
pub(super) async fn search(
    State(app): State<Arc<App>>,
    _caller: Caller,
    Query(pairs): Query<Vec<(String, String)>>,
) -> Result<Json<Value>, ApiError> {
    let params = Params::new(
        pairs,
        &[
            "q",
            "includeDisabled",
            "includeDeleted",
            "bundleIDs",
            "tags",
            "pageSize",
            "pageToken",
        ],
        SEARCH,
    )?;
    let Some(query) = params.one("q")? else {
        return Err(invalid(
            "q",
            "is missing; give the words to search for",
            SEARCH,
        ));
    };
    let request = SearchRequest {
        query: query.to_owned(),
        bundles: params.list("bundleIDs"),
        tags: params.list("tags"),
        include_disabled: params.flag("includeDisabled")?,
        include_deleted: params.flag("includeDeleted")?,
    };
    let size = params.size("pageSize")?;
    let token = params.token()?;
    blocking(SEARCH, move || {
        let catalog = open(&app, SEARCH)?;
        let (mut problems, results) = read_index(&catalog, SEARCH, |index| {
            let problems = index.problems(&catalog)?;
            let results = pick::search::search(&catalog, index, &request, size, token.as_deref())?;
            Ok((problems, results))
        })?;
        let found =
            pick::search::found(&catalog, &results, request.include_disabled, &mut problems);
        let items: Vec<Value> = found.iter().map(pick::search::Found::to_json).collect();
        let corrections: Vec<Value> = results
            .corrections
            .iter()
            .map(|(typed, found)| json!({ "typed": typed, "found": found }))
            .collect();
        Ok(Json(json!({
            "query": request.query,
            "items": items,
            "nextPageToken": results.next_page_token,
            "corrections": corrections,
            "problems": problems,
        })))
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(pairs: &[(&str, &str)], known: &[&str]) -> Result<Params, ApiError> {
        let pairs = pairs
            .iter()
            .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
            .collect();
        Params::new(pairs, known, TOOLS)
    }

    #[test]
    fn an_unknown_parameter_is_named() {
        let refused = params(&[("pagesize", "5")], &["pageSize"]).unwrap_err();
        assert_eq!(refused.status, StatusCode::BAD_REQUEST);
        assert!(
            refused.message.starts_with("pagesize: "),
            "{}",
            refused.message
        );
        assert_eq!(refused.details, Some(json!({ "parameter": "pagesize" })));
    }

    #[test]
    fn lists_repeat_or_hold_commas_and_flags_read_true_or_false() {
        let p = params(
            &[
                ("tags", "a,b"),
                ("tags", " c "),
                ("includeDisabled", "true"),
            ],
            &["tags", "includeDisabled", "includeDeleted"],
        )
        .unwrap();
        assert_eq!(p.list("tags"), ["a", "b", "c"]);
        assert!(p.flag("includeDisabled").unwrap());
        assert!(!p.flag("includeDeleted").unwrap());
        let p = params(&[("includeDisabled", "yes")], &["includeDisabled"]).unwrap();
        assert!(
            p.flag("includeDisabled")
                .unwrap_err()
                .message
                .contains("\"yes\"")
        );
    }

    #[test]
    fn a_page_size_is_one_to_a_thousand() {
        let known = ["pageSize"];
        assert_eq!(params(&[], &known).unwrap().size("pageSize").unwrap(), 50);
        for bad in ["0", "1001", "ten", "-1"] {
            let p = params(&[("pageSize", bad)], &known).unwrap();
            assert_eq!(
                p.size("pageSize").unwrap_err().status,
                StatusCode::BAD_REQUEST,
                "{bad}"
            );
        }
        let p = params(&[("pageSize", "1"), ("pageSize", "2")], &known).unwrap();
        assert!(p.size("pageSize").is_err());
    }

    #[test]
    fn a_path_segment_cannot_change_what_a_reference_names() {
        for bad in ["", "a/b", "a@1"] {
            assert!(segment("toolSlug", bad, TOOLS).is_err(), "{bad:?}");
        }
        assert_eq!(segment("toolSlug", "forecast", TOOLS).unwrap(), "forecast");
    }

    #[test]
    fn a_toggle_body_holds_only_is_enabled() {
        assert!(enabled_of(&json!({ "isEnabled": false }), TOOLS).is_ok_and(|e| !e));
        let refused = enabled_of(&json!({ "isEnabled": true, "slug": "x" }), TOOLS).unwrap_err();
        assert_eq!(refused.details, Some(json!({ "pointer": "/slug" })));
        assert!(enabled_of(&json!({ "isEnabled": "yes" }), TOOLS).is_err());
        assert!(enabled_of(&json!({}), TOOLS).is_err());
        assert!(enabled_of(&json!([]), TOOLS).is_err());
    }

    #[test]
    fn every_error_code_has_a_status() {
        assert_eq!(status_of(ErrorCode::Conflict), StatusCode::CONFLICT);
        assert_eq!(status_of(ErrorCode::UnknownTool), StatusCode::NOT_FOUND);
        assert_eq!(
            status_of(ErrorCode::LockTimeout),
            StatusCode::SERVICE_UNAVAILABLE
        );
    }
}
