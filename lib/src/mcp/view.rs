//! What `mcp serve` shows and does, through the library's own entry points only: the tool
//! list is `export --provider mcp`'s (so a client sees exactly what `export` prints), a call
//! is `invoke`'s (argument and output checks, host policy, secrets, usage counts), and a
//! search is `pick`'s. Everything here blocks (SQLite, files, HTTP tools): the server runs it
//! off its async threads.

use crate::catalog::{Catalog, Problem, VersionChoice};
use crate::index::{self, Index};
use crate::invoke::{self, Failure, Options};
use crate::pick::{self, PickError, PickRequest, Scorer};
use crate::provider::Provider;
use crate::provider::export::{self, Export, ExportError, ExportRequest, Refused};
use serde_json::Value;

/// `--bundle`, `--tag` and `--tool`, as `export` takes them.
#[derive(Debug, Clone, Default)]
pub struct Filters {
    /// Bundles by slug or ID (any of them; empty: all).
    pub bundles: Vec<String>,
    /// Tags a tool must all have.
    pub tags: Vec<String>,
    /// Tools by reference, toolID or exported name (empty: all).
    pub tools: Vec<String>,
}

impl Filters {
    pub fn is_empty(&self) -> bool {
        self.bundles.is_empty() && self.tags.is_empty() && self.tools.is_empty()
    }

    /// `--tag` and `--tool` are known from the tools' files, not from the index alone.
    fn need_files(&self) -> bool {
        !self.tags.is_empty() || !self.tools.is_empty()
    }

    /// The export of `tools` (empty: every tool the filters let through) for MCP. A tool
    /// MCP cannot take is left out rather than failing the whole list (`lenient`).
    fn request(&self, tools: Vec<String>) -> ExportRequest {
        ExportRequest {
            provider: Provider::Mcp,
            bundles: self.bundles.clone(),
            tags: self.tags.clone(),
            tools,
            include_disabled: false,
            strict: false,
            lenient: true,
            force: true,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Export(Box<ExportError>),
    #[error(transparent)]
    Index(#[from] index::Error),
    #[error(transparent)]
    Pick(#[from] PickError),
}

impl From<ExportError> for Error {
    fn from(error: ExportError) -> Self {
        Self::Export(Box::new(error))
    }
}

impl Error {
    /// The index's own error, when it is one (the index then repairs itself).
    fn into_index(self) -> Result<index::Error, Self> {
        match self {
            Self::Index(e) | Self::Pick(PickError::Index(e)) => Ok(e),
            Self::Export(boxed) => match *boxed {
                ExportError::Index(e) => Ok(e),
                other => Err(other.into()),
            },
            other => Err(other),
        }
    }
}

/// The tools a client is shown.
#[derive(Debug, Default)]
pub struct Listing {
    /// `tools/list` entries, as `export --provider mcp` prints them.
    pub tools: Vec<Value>,
    /// Tools MCP cannot take (left out).
    pub left_out: Vec<Refused>,
    /// Files that could not be read.
    pub problems: Vec<Problem>,
}

impl From<Value> for Listing {
    /// A bare `tools/list` array.
    fn from(list: Value) -> Self {
        match list {
            Value::Array(tools) => Self {
                tools,
                ..Self::default()
            },
            _ => Self::default(),
        }
    }
}

impl From<Export> for Listing {
    fn from(export: Export) -> Self {
        let tools = match export.list {
            Value::Array(tools) => tools,
            _ => Vec::new(),
        };
        Self {
            tools,
            left_out: export.left_out,
            problems: export.problems,
        }
    }
}

/// What the catalog offers, as `--mode auto` must know it.
#[derive(Debug)]
pub enum Survey {
    /// At most `limit` tools: all of them.
    Listed(Listing),
    /// More than `limit` usable tools (how many).
    TooMany(usize),
}

/// Run `read` on the catalog's index, brought up to date with the files; errors other than the
/// index's own pass through `read`'s answer (the index may rebuild and read again).
fn with_index<T>(
    catalog: &Catalog,
    mut read: impl FnMut(&Index) -> Result<T, Error>,
) -> Result<T, Error> {
    Index::read(catalog, &mut |_, _| {}, |index| match read(index) {
        Err(error) => match error.into_index() {
            Ok(damaged) => Err(damaged),
            Err(other) => Ok(Err(other)),
        },
        done => Ok(done),
    })?
}

/// The catalog's tools as `export --provider mcp --lenient` gives them, under `filters`.
pub fn list(catalog: &Catalog, filters: &Filters) -> Result<Listing, Error> {
    with_index(catalog, |index| list_in(catalog, index, filters))
}

fn list_in(catalog: &Catalog, index: &Index, filters: &Filters) -> Result<Listing, Error> {
    let request = filters.request(filters.tools.clone());
    Ok(export::export(catalog, index, &request)?.into())
}

/// The candidates, and the files the index could not read.
pub type Candidates = (Vec<Candidate>, Vec<Problem>);

/// A tool `tools/list` may show, known from the index alone: its exported name and its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub name: String,
    pub path: String,
}

/// The tools the unfiltered (or bundle-filtered) list is made of, in list order, from the
/// index rows alone (no tool file is read): the list is these, each translated, less those MCP
/// cannot take or whose file cannot be read. With them, the files the index could not read
/// (as `export` reports them). `None` when the filters need the tools' files (`--tag`,
/// `--tool`): the list is then made whole ([`list`]).
pub fn candidates(catalog: &Catalog, filters: &Filters) -> Result<Option<Candidates>, Error> {
    if filters.need_files() {
        return Ok(None);
    }
    with_index(catalog, |index| candidates_in(catalog, index, filters)).map(Some)
}

/// [`candidates`] from the index as it is, without its change check ([`Index::open_unchecked`]):
/// what the index held when toolctl last left it, which the files may have moved past. `None`
/// when the index cannot be read so (missing, of another format, changed behind toolctl's back,
/// damaged) or the filters need the tools' files: [`candidates`] then.
pub fn candidates_unchecked(catalog: &Catalog, filters: &Filters) -> Option<Candidates> {
    if filters.need_files() {
        return None;
    }
    let index = Index::open_unchecked(catalog)?;
    candidates_in(catalog, &index, filters).ok()
}

fn candidates_in(catalog: &Catalog, index: &Index, filters: &Filters) -> Result<Candidates, Error> {
    let request = filters.request(Vec::new());
    let candidates = export::candidates(index, &request)?
        .into_iter()
        .map(|member| Candidate {
            name: member.name,
            path: member.row.path,
        })
        .collect();
    Ok((candidates, index.problems(catalog)?))
}

/// `candidates` translated for MCP, each with its place in the slice (in order); those MCP
/// cannot take are in `left_out`, files that cannot be read in `problems`.
pub fn translate(catalog: &Catalog, candidates: &[Candidate]) -> Translated {
    let mut translated = Translated {
        candidates: candidates.len(),
        ..Translated::default()
    };
    let mut reader = catalog.tool_reader();
    for (at, candidate) in candidates.iter().enumerate() {
        let entry = match reader.tool_at(&candidate.path) {
            Ok(Some(entry)) => entry,
            Ok(None) => continue,
            Err(problem) => {
                translated.problems.push(problem);
                continue;
            }
        };
        match export::translate(
            Provider::Mcp,
            &[(candidate.name.clone(), entry)],
            false,
            true,
        ) {
            Ok((Value::Array(list), _, refused)) => {
                translated.left_out.extend(refused);
                translated
                    .tools
                    .extend(list.into_iter().map(|tool| (at, tool)));
            }
            Ok(_) => {}
            Err(error) => translated.errors.push(error.to_string()),
        }
    }
    translated
}

/// What [`translate`] made.
#[derive(Debug, Default)]
pub struct Translated {
    /// How many candidates were given.
    pub candidates: usize,
    /// Each tool's place among the candidates given, and its `tools/list` entry.
    pub tools: Vec<(usize, Value)>,
    pub left_out: Vec<Refused>,
    pub problems: Vec<Problem>,
    /// Translations that failed otherwise (not expected with `lenient`).
    pub errors: Vec<String>,
}

impl From<Listing> for Translated {
    /// A list made whole: each tool is its own candidate.
    fn from(listing: Listing) -> Self {
        Self {
            candidates: listing.tools.len(),
            tools: listing.tools.into_iter().enumerate().collect(),
            left_out: listing.left_out,
            problems: listing.problems,
            errors: Vec::new(),
        }
    }
}

/// The tools when there are at most `limit` of them; else only how many there are. Without
/// filters the count comes from the index alone, so a big catalog is never exported.
pub fn survey(catalog: &Catalog, filters: &Filters, limit: usize) -> Result<Survey, Error> {
    with_index(catalog, |index| {
        if filters.is_empty() {
            let count = index.count_usable(true)?;
            if count > limit {
                return Ok(Survey::TooMany(count));
            }
        }
        let listing = list_in(catalog, index, filters)?;
        Ok(if listing.tools.len() > limit {
            Survey::TooMany(listing.tools.len())
        } else {
            Survey::Listed(listing)
        })
    })
}

/// The `tools/list` entries of the tools that fit `query` best (at most `max`), best first:
/// `pick`'s default ranking (`fused`) over the usable tools, unsafe ones included (a client in
/// search mode can reach every tool the list would show), ranked among the tools `filters`
/// let through, so the best of a bundle are found however the rest of the catalog scores.
pub fn search(
    catalog: &Catalog,
    filters: &Filters,
    query: &str,
    max: usize,
) -> Result<Vec<Value>, Error> {
    with_index(catalog, |index| {
        // Filters: the names the filtered list holds (an export of that subset only), and the
        // index rows of those tools, which the ranking keeps to.
        let allowed: Option<Vec<Value>> = if filters.is_empty() {
            None
        } else {
            Some(list_in(catalog, index, filters)?.tools)
        };
        let among = match &allowed {
            None => None,
            Some(listed) => {
                let names: std::collections::HashSet<&str> =
                    listed.iter().filter_map(|t| t["name"].as_str()).collect();
                Some(
                    crate::index::default_tools::DefaultTools::read(index, false)?
                        .members
                        .into_iter()
                        .filter(|m| names.contains(m.name.as_str()))
                        .map(|m| m.row.id)
                        .collect(),
                )
            }
        };
        let request = PickRequest {
            query: query.to_owned(),
            max,
            // Scores are relative to the best of the whole catalog: within filters, any match
            // of the filtered tools counts, best first (pick's minimum would drop a bundle's
            // matches whenever other bundles match better).
            min_score: if filters.is_empty() {
                pick::DEFAULT_MIN_SCORE
            } else {
                f64::MIN_POSITIVE
            },
            allow_unsafe: true,
            scorer: Scorer::Fused,
            timeout: None,
            embed: None,
            embed_batch: pick::DEFAULT_EMBED_BATCH,
            llm: None,
            // The steps `pick` takes by default: a client that finds a tool through search
            // needs what fills its arguments too.
            helpers: pick::HELPERS_BY_DEFAULT,
            siblings: pick::SIBLINGS_BY_DEFAULT,
            coverage: pick::COVERAGE_BY_DEFAULT,
            lexical_weight: None,
            among,
        };
        let outcome = pick::pick(catalog, index, &request, &mut |_, _| {})?;
        // As `pick --emit mcp --lenient`: only the picked tools are read and translated (a
        // helper from outside the filters is left out).
        let mut tools = Vec::new();
        let mut reader = catalog.tool_reader();
        for picked in outcome.picks {
            let name = picked.member.name;
            if allowed
                .as_ref()
                .is_some_and(|listed| !listed.iter().any(|t| t["name"] == name.as_str()))
            {
                continue;
            }
            if let Ok(Some(entry)) = reader.tool_at(&picked.member.row.path) {
                tools.push((name, entry));
            }
            if tools.len() == max {
                break;
            }
        }
        let (list, _, _) = export::translate(Provider::Mcp, &tools, false, true)?;
        Ok(Listing::from(list).tools)
    })
}

/// Call the tool with this exported name as `toolctl invoke` does, and count the call.
pub fn call(
    catalog: &Catalog,
    name: &str,
    arguments: Value,
    options: &Options,
) -> Result<Value, Failure> {
    let (entry, _) = catalog
        .resolve_tool(name, VersionChoice::Default)
        .map_err(|e| invoke::batch::not_resolved(name, e))?;
    invoke::call_and_record(catalog, &entry, arguments, options).map(|success| success.value)
}
