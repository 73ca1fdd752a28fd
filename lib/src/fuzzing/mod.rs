//! What the fuzz targets (`fuzz/`) run: one function per target, taking the fuzzer's bytes,
//! driving the library the way a command would and checking what must hold whatever the input.
//! A broken invariant panics, which the fuzzer reports as a crash. Hidden from the docs: not
//! an API, only the targets' way in (and the tests that run the seed corpora, `cargo test
//! fuzzing`).
//!
//! The inputs are text where the library reads text, so the seed corpora (`fuzz/seeds/`) are
//! readable files; the two structured targets ([`templates`], [`extract`]) read lines.

use crate::catalog::Catalog;
use crate::catalog::model::{self, HttpImpl, Tool};
use crate::catalog::rules::HostPolicy;
use crate::index::{Index, SearchRequest, text};
use crate::invoke::{batch, http};
use crate::validate::{self, Place, Severity};
use serde_json::{Map, Value, json};
use std::path::Path;

/// The host every HTTP tool of the targets calls.
const HOST: &str = "api.test";

/// `tool.json` text: parsed, typed and checked as `tool put` and the index do, then checked as
/// `validate` does and exported to every provider. What `Tool::check` accepts, `validate` must
/// not call an error.
pub fn tool_json(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(doc) = model::parse_doc(text, Path::new("tool.json")) else {
        return;
    };
    let findings = validate::check_documents(&[("tool.json".into(), Place::Loose, text)]);
    let Ok(tool) = model::typed::<Tool>(&doc, "tool.json") else {
        return;
    };
    let violations = tool.check(&doc);
    let Ok(config) = crate::catalog::config::Config::from_doc(
        json!({ "allowedHosts": [HOST] }),
        Path::new("toolctl.json"),
    ) else {
        return;
    };
    let unavailable = tool.unavailable_reason(&config);
    if !violations.is_empty() {
        return;
    }
    let errors: Vec<_> = findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .collect();
    assert!(
        errors.is_empty(),
        "Tool::check accepts what validate rejects: {errors:?}"
    );
    let entry = crate::catalog::ToolEntry {
        is_enabled: tool.is_enabled,
        tool,
        doc,
        path: None,
        bundle_slug: "fuzz".to_owned(),
        bundle_enabled: true,
        bundle_deleted: false,
        unavailable,
    };
    for provider in crate::provider::Provider::ALL {
        for strict in [false, true] {
            let _ = crate::provider::tool_definition(provider, &entry.tool.slug, &entry, strict);
        }
    }
}

/// One line of a structured input, `""` past the end.
fn line<'a>(lines: &[&'a str], i: usize) -> &'a str {
    lines.get(i).copied().unwrap_or_default()
}

/// An HTTP tool's templates filled in with arguments, as `invoke` builds its request (not
/// sent). The input is lines:
///
/// 1. the URL template after `http://api.test` (`/v1/${city}?days=${days}`);
/// 2. the `Content-Type` header (empty: none);
/// 3. the body template (empty: none);
/// 4. an `X-Extra` header template (empty: none);
/// 5. and on: arguments, `name=JSON` (not JSON: a string); `name` alone is declared and not
///    given; a leading `!` makes it required, a leading `~` gives its value as the schema's
///    `default` instead.
///
/// A tool `Tool::check` refuses is refused at put and never built. One it accepts builds a
/// request that goes to its host, whose path has the segments it has with plain values, whose query and form
/// pairs are the template's (a value never adds one), and whose JSON body is JSON with no
/// member the template does not have.
pub fn templates(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let lines: Vec<&str> = text.split('\n').collect();
    let url_template = format!("http://{HOST}{}", line(&lines, 0));
    let content_type = line(&lines, 1);
    let body = line(&lines, 2);
    let extra = line(&lines, 3);
    let (mut properties, mut required, mut args) = (Map::new(), Vec::new(), Map::new());
    for arg in lines.iter().skip(4) {
        let (flags, rest) = arg.split_at(arg.find(|c| c != '!' && c != '~').unwrap_or(arg.len()));
        let (name, value) = match rest.split_once('=') {
            Some((name, value)) => (
                name,
                Some(serde_json::from_str(value).unwrap_or_else(|_| Value::from(value))),
            ),
            None => (rest, None),
        };
        let mut property = json!({});
        if flags.contains('!') {
            required.push(Value::from(name));
        }
        match value {
            Some(value) if flags.contains('~') => property["default"] = value,
            Some(value) => {
                args.insert(name.to_owned(), value);
            }
            None => {}
        }
        properties.insert(name.to_owned(), property);
    }
    let mut headers = Map::new();
    if !content_type.is_empty() {
        headers.insert("Content-Type".into(), content_type.into());
    }
    if !extra.is_empty() {
        headers.insert("X-Extra".into(), extra.into());
    }
    let mut implementation = json!({
        "method": "POST",
        "urlTemplate": url_template,
        "headers": headers,
    });
    if !body.is_empty() {
        implementation["bodyTemplate"] = body.into();
    }
    let doc = json!({
        "schemaVersion": model::SCHEMA_VERSION,
        "toolID": "0190c000-0000-7000-8000-000000000001",
        "bundleID": "0190c000-0000-7000-8000-0000000000b1",
        "slug": "fuzz",
        "version": "v1",
        "description": "A tool the fuzzer writes",
        "type": "http",
        "argSchema": { "type": "object", "properties": properties, "required": required },
        "impl": implementation,
        "createdAt": "2025-01-01T00:00:00Z",
        "modifiedAt": "2025-01-01T00:00:00Z",
    });
    let Ok(tool) = model::typed::<Tool>(&doc, "tool.json") else {
        return;
    };
    if !tool.check(&doc).is_empty() {
        return;
    }
    let Ok(hosts) = HostPolicy::new([HOST]) else {
        return;
    };
    let Ok((url, sent)) = http::dry_request(&tool, &args, &hosts) else {
        return;
    };
    assert_eq!(url.host_str(), Some(HOST), "{url} leaves {HOST}");
    // The same template with every value (given or default) a plain `x`: the template's own
    // port and the URL parser's rewrites of it (`\` as `/`, dot segments) apply to both alike,
    // so any difference in port or segments is a value's doing.
    let mut neutral = args.clone();
    for (name, property) in &properties {
        if args.contains_key(name) || property.get("default").is_some() {
            neutral.insert(name.clone(), Value::from("x"));
        }
    }
    if let Ok((plain, _)) = http::dry_request(&tool, &neutral, &hosts) {
        assert_eq!(
            url.port(),
            plain.port(),
            "{url} changes the port of {plain}"
        );
        let segments = |path: &str| path.split('/').count();
        assert_eq!(
            segments(url.path()),
            segments(plain.path()),
            "{url}: a value changed the path's segments of {url_template} (with plain values: {plain})"
        );
    }
    if let Some(query) = url.query() {
        let template_query = url_template
            .split_once('?')
            .map_or("", |(_, q)| q.split('#').next().unwrap_or_default());
        assert!(
            query.split('&').count() <= template_query.split('&').count(),
            "{url}: a value added a query pair to {url_template}"
        );
    }
    let Some(sent) = sent else { return };
    let http = tool.http_impl().unwrap_or_else(|| unreachable!("checked"));
    match crate::catalog::templates::BodyKind::of(&http) {
        crate::catalog::templates::BodyKind::Json => {
            let sent: Value = serde_json::from_slice(&sent)
                .unwrap_or_else(|e| panic!("the JSON body is not JSON ({e}): {sent:?}"));
            if let (Ok(Value::Object(template)), Value::Object(sent)) =
                (serde_json::from_str::<Value>(body), &sent)
            {
                for key in sent.keys() {
                    assert!(
                        template.contains_key(key),
                        "a value added member {key:?} to the JSON body {body}"
                    );
                }
            }
        }
        crate::catalog::templates::BodyKind::Form => {
            let sent = String::from_utf8_lossy(&sent);
            assert!(
                sent.split('&').count() <= body.split('&').count(),
                "a value added a form pair: {sent} from {body}"
            );
        }
        crate::catalog::templates::BodyKind::Text => {}
    }
}

/// An HTTP tool's answer made into its value (`extractExpr`, `responseEncoding`,
/// `errorMode`). The input is lines: the `extractExpr` (empty: none), the encoding and error
/// mode (`text`, `json`, with ` empty` for errorMode empty), then the response body.
pub fn extract(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut parts = text.splitn(3, '\n');
    let expr = parts.next().unwrap_or_default();
    let modes = parts.next().unwrap_or_default();
    let body = parts.next().unwrap_or_default();
    let spec = json!({
        "method": "GET",
        "urlTemplate": format!("http://{HOST}/"),
        "extractExpr": expr,
        "responseEncoding": if modes.contains("text") { "text" } else { "json" },
        "errorMode": if modes.contains("empty") { "empty" } else { "fail" },
    });
    let Ok(spec) = serde_json::from_value::<HttpImpl>(spec) else {
        return;
    };
    match http::dry_response(&spec, 200, body.as_bytes()) {
        Ok(Value::String(_)) | Err(_) => return,
        // errorMode empty: a regex that matched nothing is the encoding's empty value, `null`
        // for JSON (as the README says).
        Ok(Value::Null) if modes.contains("empty") => return,
        Ok(_) => {}
    }
    // Anything else comes from a JSONPath or the body as JSON: never from a regex.
    assert!(
        expr.is_empty() || expr.starts_with('$'),
        "a regex extractExpr {expr:?} gave something other than text"
    );
}

thread_local! {
    /// The fixtures' catalog, copied once into a temporary folder, and its index.
    static SEARCH: Option<(tempfile::TempDir, Index)> = search_index();
}

fn search_index() -> Option<(tempfile::TempDir, Index)> {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/catalog");
    let dir = tempfile::tempdir().ok()?;
    copy_tree(&fixtures, dir.path()).ok()?;
    let catalog = Catalog::open(dir.path()).ok()?;
    let (index, _) = Index::open(&catalog, &mut |_, _| {}).ok()?;
    Some((dir, index))
}

fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue; // An index a command left there.
        }
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}

/// A search query: its tokens are few, short and only letters and digits, and a search of the
/// fixtures' catalog with it never fails (no text makes an FTS5 syntax error).
pub fn fts_query(data: &[u8]) {
    let query = String::from_utf8_lossy(data);
    let tokens = text::query_tokens(&query);
    assert!(tokens.len() <= text::MAX_QUERY_TOKENS);
    for token in &tokens {
        assert!(!token.is_empty() && token.chars().count() <= text::MAX_TOKEN_CHARS);
        assert!(token.chars().all(char::is_alphanumeric), "token {token:?}");
    }
    let _ = text::content_tokens(&query);
    let _ = text::is_sentence(&query);
    SEARCH.with(|search| {
        let Some((_, index)) = search else {
            panic!("the fixtures' catalog could not be indexed");
        };
        let request = SearchRequest {
            query: query.clone().into_owned(),
            ..SearchRequest::default()
        };
        if query.trim().is_empty() {
            return;
        }
        if let Err(e) = index.search(&request, 5, None) {
            panic!("search {query:?} failed: {e}");
        }
    });
}

/// A `--batch` document: parsed as `invoke --batch` parses it. One it accepts holds 1 to
/// [`batch::MAX_CALLS`] calls with distinct call IDs; their answers can be written.
pub fn batch_doc(data: &[u8]) {
    let Ok(doc) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let Ok(request) = batch::parse(&doc, None) else {
        return;
    };
    assert!((1..=batch::MAX_CALLS).contains(&request.calls.len()));
    let mut answers = Vec::with_capacity(request.calls.len());
    for (i, call) in request.calls.iter().enumerate() {
        assert!(
            request.calls[..i].iter().all(|c| c.call_id != call.call_id),
            "call_id {:?} twice",
            call.call_id
        );
        let answer = Ok(batch::truncate(&call.arguments));
        let _ = batch::result(call, &answer);
        answers.push(answer);
    }
    let _ = batch::tool_messages(&request, &answers);
    assert!(batch::WAIT_RANGE_MS.contains(&request.wait_ms) || request.wait_ms == 0);
}

/// A ZIP archive given to `bundle import`: read with its limits, then imported into an empty
/// catalog. An archive the import accepts makes a catalog `validate` finds no error in (but
/// for where its tools may be used).
pub fn archive(data: &[u8]) {
    use crate::ops::archive::{ImportOptions, read_archive};
    let Ok(archive) = read_archive(std::io::Cursor::new(data), "fuzz.zip", &mut |_, _| {}) else {
        return;
    };
    let Ok(dir) = tempfile::tempdir() else { return };
    let Ok(mut catalog) = Catalog::open(dir.path()) else {
        return;
    };
    if catalog
        .import_bundle(&archive, &ImportOptions::default(), |_, _| {})
        .is_err()
    {
        return;
    }
    let report = validate::validate(dir.path(), &validate::Request::default(), &|_, _| {})
        .unwrap_or_else(|e| panic!("validate cannot read the imported catalog: {e:?}"));
    // Where a tool may be used is the catalog's to say, not the archive's: a host this
    // catalog does not allow, or a native function this build lacks, is imported and listed
    // as unavailable (as a copied file is).
    let errors: Vec<_> = report
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Error && !matches!(f.rule, "host" | "native"))
        .collect();
    assert!(
        errors.is_empty(),
        "bundle import accepted what validate rejects: {errors:?}"
    );
}

/// A fuzz target: the fuzzer's bytes in, a panic when an invariant breaks.
pub type Target = fn(&[u8]);

/// The targets by name, for the seed tests.
pub const TARGETS: [(&str, Target); 6] = [
    ("tool_json", tool_json),
    ("templates", templates),
    ("extract", extract),
    ("fts_query", fts_query),
    ("batch_doc", batch_doc),
    ("archive", archive),
];

#[cfg(test)]
mod tests {
    /// Every seed and every input a fuzzer once crashed on (`fuzz/seeds/<target>/`) runs
    /// through its target.
    #[test]
    fn the_fuzz_seeds_pass() {
        let seeds = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/seeds");
        let mut ran = 0;
        for (name, target) in super::TARGETS {
            let dir = seeds.join(name);
            let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{dir:?}: {e}"));
            for entry in entries {
                let path = entry.unwrap().path();
                let bytes = std::fs::read(&path).unwrap();
                eprintln!("{name}: {}", path.display());
                target(&bytes);
                ran += 1;
            }
        }
        assert!(ran >= super::TARGETS.len(), "only {ran} seeds");
    }
}
