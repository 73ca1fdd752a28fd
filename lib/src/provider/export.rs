//! `export`: the catalog's tools in one provider's format, ready to send.
//!
//! The tools are the [`DefaultTools`](crate::index::default_tools::DefaultTools)'s (one version per slug), enabled and
//! usable ones unless disabled ones are asked for, narrowed by bundle, tag and tool. A tool
//! whose schema the provider cannot take is an error naming the tool, keyword and pointer; with
//! `lenient` it is left out and reported instead. OpenAI's 128-tool limit is an error unless
//! forced.

use super::{Provider, Unexpressible, tool_definition, tool_list};
use crate::catalog::{Catalog, Problem, ToolEntry, VersionChoice};
use crate::index::Index;
use crate::index::default_tools::{DefaultTool, DefaultTools};
use serde::Serialize;
use serde_json::Value;

/// What to export.
#[derive(Debug, Clone)]
pub struct ExportRequest {
    pub provider: Provider,
    /// Bundles by slug or ID (any of them; empty: all).
    pub bundles: Vec<String>,
    /// Tags a tool must all have.
    pub tags: Vec<String>,
    /// Tools by reference, toolID or exported name (empty: all).
    pub tools: Vec<String>,
    /// Also disabled and unavailable tools.
    pub include_disabled: bool,
    /// OpenAI strict mode for every tool.
    pub strict: bool,
    /// Leave out tools the provider cannot take, instead of failing.
    pub lenient: bool,
    /// Export past the provider's tool limit.
    pub force: bool,
}

/// One exported tool.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportedTool {
    pub name: String,
    #[serde(rename = "ref")]
    pub reference: String,
    #[serde(rename = "toolID")]
    pub tool_id: String,
}

/// A tool the provider cannot take, and why.
#[derive(Debug, Clone, Serialize)]
pub struct Refused {
    #[serde(rename = "ref")]
    pub reference: String,
    pub problems: Vec<Unexpressible>,
    /// Whether the tool asks for strict mode itself (`"strict": true` in its file), so that
    /// the caller not asking for strict mode would not change what it is refused for.
    #[serde(skip)]
    pub own_strict: bool,
}

/// What `export` made.
#[derive(Debug)]
pub struct Export {
    /// The provider's tool list.
    pub list: Value,
    pub tools: Vec<ExportedTool>,
    /// Tools left out (only with `lenient`).
    pub left_out: Vec<Refused>,
    /// Files that could not be read.
    pub problems: Vec<Problem>,
}

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error(transparent)]
    Catalog(#[from] crate::catalog::Error),
    #[error(transparent)]
    Index(#[from] crate::index::Error),
    #[error("{} cannot take {} of the tools: {}", .provider, .refused.len(), summary(.refused))]
    Unexpressible {
        provider: Provider,
        refused: Vec<Refused>,
    },
    #[error("{reference} cannot be exported: {status}")]
    NotUsable { reference: String, status: String },
    #[error("{count} tools is more than {provider} takes in one request ({max})")]
    TooMany {
        provider: Provider,
        count: usize,
        max: usize,
    },
}

fn summary(refused: &[Refused]) -> String {
    refused
        .iter()
        .map(|r| {
            let first = r.problems.first().map(ToString::to_string);
            format!("{}: {}", r.reference, first.unwrap_or_default())
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The translation of `tools` (each with its exported name) for `provider`: the list, or
/// every tool it cannot take.
pub fn translate(
    provider: Provider,
    tools: &[(String, ToolEntry)],
    strict: bool,
    lenient: bool,
) -> Result<(Value, Vec<ExportedTool>, Vec<Refused>), ExportError> {
    let mut definitions = Vec::new();
    let mut exported = Vec::new();
    let mut refused = Vec::new();
    for (name, entry) in tools {
        match tool_definition(provider, name, entry, strict) {
            Ok(definition) => {
                definitions.push(definition);
                exported.push(ExportedTool {
                    name: name.clone(),
                    reference: entry.reference(),
                    tool_id: entry.tool.tool_id.to_string(),
                });
            }
            Err(problems) => refused.push(Refused {
                reference: entry.reference(),
                problems,
                own_strict: entry.tool.strict == Some(true),
            }),
        }
    }
    if !refused.is_empty() && !lenient {
        return Err(ExportError::Unexpressible { provider, refused });
    }
    Ok((tool_list(provider, definitions), exported, refused))
}

/// The tools an export of every tool (no `tools` named) reads, in list order: the lineup's
/// usable members (all of them with `include_disabled`) in the request's bundles, before the
/// tag filter and the translation. The index alone knows them: no tool file is read.
/// With bundles named, only their tools are read from the index.
pub fn candidates(index: &Index, request: &ExportRequest) -> Result<Vec<DefaultTool>, ExportError> {
    let bundle_dirs = index.bundle_dirs(&request.bundles)?;
    let members = if bundle_dirs.is_empty() {
        DefaultTools::read(index, false)?.members
    } else {
        DefaultTools::read_in(index, &bundle_dirs)?
    };
    Ok(members
        .into_iter()
        .filter(|member| request.include_disabled || member.is_usable())
        .collect())
}

/// Export the catalog's tools as `request` says.
pub fn export(
    catalog: &Catalog,
    index: &Index,
    request: &ExportRequest,
) -> Result<Export, ExportError> {
    let mut problems = index.problems(catalog)?;

    let mut chosen: Vec<(String, ToolEntry)> = Vec::new();
    let mut reader = catalog.tool_reader();
    let mut read = |member: &DefaultTool, problems: &mut Vec<Problem>| match reader
        .tool_at(&member.row.path)
    {
        Ok(entry) => entry,
        Err(problem) => {
            problems.push(problem);
            None
        }
    };
    if request.tools.is_empty() {
        for member in candidates(index, request)? {
            if let Some(entry) = read(&member, &mut problems) {
                chosen.push((member.name, entry));
            }
        }
    } else {
        let lineup = DefaultTools::read(index, false)?;
        let bundle_dirs = index.bundle_dirs(&request.bundles)?;
        for name in &request.tools {
            // A tool named explicitly is exported as named (a version, if given), still
            // within the other filters.
            let (entry, found) = catalog.resolve_tool(name, VersionChoice::Default)?;
            problems.extend(found);
            let dir = entry
                .path
                .as_ref()
                .map_or("builtin".to_owned(), |_| entry.tool.bundle_id.to_string());
            let usable = entry.is_effectively_enabled() && entry.unavailable.is_none();
            if !(request.include_disabled || usable) {
                // Named on purpose: say why it is not there rather than print less.
                return Err(ExportError::NotUsable {
                    reference: entry.reference(),
                    status: entry.status(),
                });
            }
            if !bundle_dirs.is_empty() && !bundle_dirs.contains(&dir) {
                continue;
            }
            let exported = lineup
                .names
                .name(&entry.bundle_slug, &entry.tool.slug)
                .unwrap_or(&entry.tool.slug)
                .to_owned();
            if !chosen.iter().any(|(n, _)| *n == exported) {
                chosen.push((exported, entry));
            }
        }
    }
    chosen.retain(|(_, entry)| request.tags.iter().all(|tag| entry.tool.tags.contains(tag)));

    if let Some(max) = request.provider.max_tools()
        && chosen.len() > max
        && !request.force
    {
        return Err(ExportError::TooMany {
            provider: request.provider,
            count: chosen.len(),
            max,
        });
    }
    let (list, tools, left_out) =
        translate(request.provider, &chosen, request.strict, request.lenient)?;
    Ok(Export {
        list,
        tools,
        left_out,
        problems,
    })
}
