//! Generate a large, realistic catalog for benchmarks and scale tests.
//!
//! ```text
//! cargo run --release -p toolctl-bench --bin gen-catalog -- --tools 10000 --out /tmp/cat [--seed 42] [--bundles N]
//! ```
//!
//! The output is a complete catalog in the format toolctl reads (`toolctl.json`,
//! `bundles/<bundleID>/bundle.json`, `bundles/<bundleID>/tools/<slug>/<version>/tool.json`),
//! with every host the HTTP tools call listed in `allowedHosts`, so the whole catalog loads
//! without problems and every tool is available.
//!
//! The content is made to look like a real catalog rather than `tool-00001`: bundles are
//! named after business domains (`billing`, `crm-eu`), tools are verbs × nouns
//! (`get-invoice`, `list-crm-contacts`, `find-ticket-files`) with sentence descriptions,
//! 1–4 tags from a vocabulary and argument schemas of 1–5 described properties. About 60% of
//! the tools are HTTP tools (method chosen by the verb) and 40% native tools naming the
//! functions the binary has (`readfile`, `file-search`, `now`; a `now` tool takes no
//! arguments, like the function); about 10% of slugs have 2–3 versions, 5% of tools and 3% of
//! bundles are disabled. By default there is one bundle per 100 tools, at least 5.
//!
//! The same arguments give byte-identical files: everything, IDs and timestamps included,
//! comes from one `ChaCha8Rng` seeded with `--seed` (given the same `rand` version, which
//! `Cargo.lock` pins). Files are written with plain `std::fs` calls, without the atomic
//! rename and fsync toolctl uses for its own writes: this is a fresh folder nobody else
//! reads yet, and speed matters (100,000 tools, 1.2 GB, take about 15 s in a release build,
//! nearly all of it in the file system).

// This is a command-line program: its summary line goes to stderr by design.
#![allow(clippy::print_stderr)]
// The catalog's own writes must go through catalog::store (atomic, fsync'd); this generator
// writes a brand-new folder and wants raw speed, so plain std::fs::write is the right tool.
#![allow(clippy::disallowed_methods)]

use clap::Parser;
use rand::seq::IndexedRandom;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{Map, Value, json};
use std::collections::{BTreeSet, HashSet};
use std::error::Error;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;
use uuid::{Builder, Uuid};

type Result<T, E = Box<dyn Error>> = std::result::Result<T, E>;

/// Generate a deterministic, realistic toolctl catalog
#[derive(Debug, Parser)]
#[command(name = "gen-catalog")]
struct Args {
    /// How many tools (tool versions) to generate
    #[arg(long)]
    tools: usize,
    /// The catalog folder to create; must not exist or be empty
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Seed of the random generator: the same seed gives the same files
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// How many bundles (default: one per 100 tools, at least 5)
    #[arg(long)]
    bundles: Option<usize>,
}

/// A business domain: a bundle's theme, its API host and the nouns its tools act on.
struct Domain {
    name: &'static str,
    title: &'static str,
    /// `(singular, plural)`, as slug words.
    nouns: &'static [(&'static str, &'static str)],
}

const DOMAINS: &[Domain] = &[
    Domain {
        name: "billing",
        title: "Billing",
        nouns: &[
            ("invoice", "invoices"),
            ("payment", "payments"),
            ("refund", "refunds"),
            ("subscription", "subscriptions"),
            ("receipt", "receipts"),
            ("credit-note", "credit-notes"),
        ],
    },
    Domain {
        name: "crm",
        title: "CRM",
        nouns: &[
            ("contact", "contacts"),
            ("lead", "leads"),
            ("deal", "deals"),
            ("account", "accounts"),
            ("opportunity", "opportunities"),
            ("note", "notes"),
        ],
    },
    Domain {
        name: "hr",
        title: "HR",
        nouns: &[
            ("employee", "employees"),
            ("timesheet", "timesheets"),
            ("leave-request", "leave-requests"),
            ("payslip", "payslips"),
            ("candidate", "candidates"),
            ("review", "reviews"),
        ],
    },
    Domain {
        name: "support",
        title: "Customer support",
        nouns: &[
            ("ticket", "tickets"),
            ("conversation", "conversations"),
            ("macro", "macros"),
            ("survey", "surveys"),
            ("escalation", "escalations"),
        ],
    },
    Domain {
        name: "inventory",
        title: "Inventory",
        nouns: &[
            ("product", "products"),
            ("sku", "skus"),
            ("stock-level", "stock-levels"),
            ("warehouse", "warehouses"),
            ("shipment", "shipments"),
            ("supplier", "suppliers"),
        ],
    },
    Domain {
        name: "calendar",
        title: "Calendar",
        nouns: &[
            ("event", "events"),
            ("meeting", "meetings"),
            ("room", "rooms"),
            ("reminder", "reminders"),
            ("availability", "availabilities"),
        ],
    },
    Domain {
        name: "marketing",
        title: "Marketing",
        nouns: &[
            ("campaign", "campaigns"),
            ("audience", "audiences"),
            ("email-template", "email-templates"),
            ("newsletter", "newsletters"),
            ("coupon", "coupons"),
        ],
    },
    Domain {
        name: "analytics",
        title: "Analytics",
        nouns: &[
            ("report", "reports"),
            ("dashboard", "dashboards"),
            ("metric", "metrics"),
            ("funnel", "funnels"),
            ("cohort", "cohorts"),
            ("segment", "segments"),
        ],
    },
    Domain {
        name: "devops",
        title: "DevOps",
        nouns: &[
            ("deployment", "deployments"),
            ("incident", "incidents"),
            ("alert", "alerts"),
            ("pipeline", "pipelines"),
            ("build", "builds"),
            ("release", "releases"),
        ],
    },
    Domain {
        name: "storage",
        title: "Cloud storage",
        nouns: &[
            ("file", "files"),
            ("folder", "folders"),
            ("bucket", "buckets"),
            ("backup", "backups"),
            ("snapshot", "snapshots"),
        ],
    },
    Domain {
        name: "security",
        title: "Identity and security",
        nouns: &[
            ("user", "users"),
            ("role", "roles"),
            ("permission", "permissions"),
            ("api-key", "api-keys"),
            ("audit-log", "audit-logs"),
            ("session", "sessions"),
        ],
    },
    Domain {
        name: "messaging",
        title: "Messaging",
        nouns: &[
            ("message", "messages"),
            ("channel", "channels"),
            ("thread", "threads"),
            ("notification", "notifications"),
            ("webhook", "webhooks"),
        ],
    },
    Domain {
        name: "logistics",
        title: "Logistics",
        nouns: &[
            ("order", "orders"),
            ("delivery", "deliveries"),
            ("route", "routes"),
            ("parcel", "parcels"),
            ("carrier", "carriers"),
            ("return", "returns"),
        ],
    },
    Domain {
        name: "travel",
        title: "Travel",
        nouns: &[
            ("flight", "flights"),
            ("hotel-booking", "hotel-bookings"),
            ("itinerary", "itineraries"),
            ("expense", "expenses"),
            ("visa-application", "visa-applications"),
        ],
    },
    Domain {
        name: "legal",
        title: "Legal",
        nouns: &[
            ("contract", "contracts"),
            ("clause", "clauses"),
            ("signature-request", "signature-requests"),
            ("policy", "policies"),
        ],
    },
    Domain {
        name: "education",
        title: "Learning",
        nouns: &[
            ("course", "courses"),
            ("lesson", "lessons"),
            ("enrollment", "enrollments"),
            ("quiz", "quizzes"),
            ("grade", "grades"),
            ("certificate", "certificates"),
        ],
    },
    Domain {
        name: "clinic",
        title: "Clinic",
        nouns: &[
            ("appointment", "appointments"),
            ("patient", "patients"),
            ("prescription", "prescriptions"),
            ("lab-result", "lab-results"),
        ],
    },
    Domain {
        name: "property",
        title: "Property management",
        nouns: &[
            ("listing", "listings"),
            ("tenant", "tenants"),
            ("lease", "leases"),
            ("maintenance-request", "maintenance-requests"),
        ],
    },
    Domain {
        name: "weather",
        title: "Weather",
        nouns: &[
            ("forecast", "forecasts"),
            ("observation", "observations"),
            ("station", "stations"),
            ("warning", "warnings"),
        ],
    },
    Domain {
        name: "maps",
        title: "Maps",
        nouns: &[
            ("place", "places"),
            ("address", "addresses"),
            ("geocode", "geocodes"),
            ("distance", "distances"),
        ],
    },
];

/// Words that tell bundles of the same domain apart (`billing-eu`).
const BUNDLE_QUALIFIERS: &[&str] = &[
    "eu", "us", "apac", "internal", "legacy", "sandbox", "partner", "ops", "v2",
];

/// What an HTTP tool's verb does to its noun; decides the method, URL and arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    /// Read one item by ID.
    Read,
    /// Read many items (list, search, count, export).
    Collection,
    /// Make a new item.
    Create,
    /// Change one item.
    Change,
    /// Remove one item.
    Remove,
    /// Run an operation on one item (approve, archive, sync).
    Operate,
    /// Check that an item exists.
    Probe,
}

struct Verb {
    word: &'static str,
    action: Action,
    method: &'static str,
    /// Whether the slug takes the plural noun (`list-invoices`).
    plural: bool,
    /// Description templates: `{n}` singular noun, `{ns}` plural, `{d}` domain title.
    sentences: &'static [&'static str],
}

const VERBS: &[Verb] = &[
    Verb {
        word: "get",
        action: Action::Read,
        method: "GET",
        plural: false,
        sentences: &[
            "Get a single {n} from {d} by its ID, with all of its fields.",
            "Fetch the details of one {n} in {d}, such as its status, owner and dates.",
        ],
    },
    Verb {
        word: "show",
        action: Action::Read,
        method: "GET",
        plural: false,
        sentences: &["Show everything {d} knows about one {n}: current state, history and links."],
    },
    Verb {
        word: "lookup",
        action: Action::Read,
        method: "GET",
        plural: false,
        sentences: &["Look up a {n} in {d} by ID and return a short summary."],
    },
    Verb {
        word: "list",
        action: Action::Collection,
        method: "GET",
        plural: true,
        sentences: &[
            "List {ns} in {d}, newest first, optionally filtered by status or date.",
            "Return a page of {ns} from {d}; use the page token to fetch more.",
        ],
    },
    Verb {
        word: "search",
        action: Action::Collection,
        method: "GET",
        plural: true,
        sentences: &[
            "Search {ns} in {d} by keywords, matching names, descriptions and notes.",
            "Find {ns} in {d} that match a free-text query, ranked by relevance.",
        ],
    },
    Verb {
        word: "count",
        action: Action::Collection,
        method: "GET",
        plural: true,
        sentences: &["Count the {ns} in {d} that match a filter, e.g. how many are still open."],
    },
    Verb {
        word: "export",
        action: Action::Collection,
        method: "GET",
        plural: true,
        sentences: &["Export {ns} from {d} as rows for a spreadsheet or a report."],
    },
    Verb {
        word: "summarize",
        action: Action::Collection,
        method: "GET",
        plural: true,
        sentences: &[
            "Summarize recent {ns} in {d}: totals, trends and the most important changes.",
        ],
    },
    Verb {
        word: "create",
        action: Action::Create,
        method: "POST",
        plural: false,
        sentences: &[
            "Create a new {n} in {d} from the given fields.",
            "Add a {n} to {d} and return its new ID.",
        ],
    },
    Verb {
        word: "send",
        action: Action::Create,
        method: "POST",
        plural: false,
        sentences: &["Send a {n} through {d} to the people it concerns, by e-mail or in-app."],
    },
    Verb {
        word: "import",
        action: Action::Create,
        method: "POST",
        plural: true,
        sentences: &["Import {ns} into {d} in bulk, skipping ones that already exist."],
    },
    Verb {
        word: "update",
        action: Action::Change,
        method: "PATCH",
        plural: false,
        sentences: &[
            "Update fields of an existing {n} in {d}; fields left out stay as they are.",
            "Edit a {n} in {d}, for example to fix its name or change its status.",
        ],
    },
    Verb {
        word: "replace",
        action: Action::Change,
        method: "PUT",
        plural: false,
        sentences: &["Replace a {n} in {d} with a complete new version."],
    },
    Verb {
        word: "assign",
        action: Action::Change,
        method: "PATCH",
        plural: false,
        sentences: &["Assign a {n} in {d} to a person or a team, so they own it."],
    },
    Verb {
        word: "delete",
        action: Action::Remove,
        method: "DELETE",
        plural: false,
        sentences: &[
            "Delete a {n} from {d} permanently. This cannot be undone.",
            "Remove a {n} from {d}, for example one created by mistake.",
        ],
    },
    Verb {
        word: "archive",
        action: Action::Operate,
        method: "POST",
        plural: false,
        sentences: &[
            "Archive a {n} in {d} so it no longer shows up in lists; it can be restored later.",
        ],
    },
    Verb {
        word: "approve",
        action: Action::Operate,
        method: "POST",
        plural: false,
        sentences: &["Approve a pending {n} in {d} and notify whoever asked for it."],
    },
    Verb {
        word: "cancel",
        action: Action::Operate,
        method: "POST",
        plural: false,
        sentences: &["Cancel a {n} in {d} that has not been completed yet."],
    },
    Verb {
        word: "sync",
        action: Action::Operate,
        method: "POST",
        plural: true,
        sentences: &["Synchronize {ns} between {d} and the connected systems, pulling in changes."],
    },
    Verb {
        word: "check",
        action: Action::Probe,
        method: "HEAD",
        plural: false,
        sentences: &["Check whether a {n} exists in {d} without downloading it."],
    },
    Verb {
        word: "describe",
        action: Action::Probe,
        method: "OPTIONS",
        plural: true,
        sentences: &["Describe which operations the {d} API allows on {ns}."],
    },
];

/// Endings of reading slugs: `get-invoice-history`.
const ITEM_QUALIFIERS: &[&str] = &["details", "history", "status", "summary", "activity"];

/// Endings of collection slugs: `list-invoices-by-owner`.
const COLLECTION_QUALIFIERS: &[&str] = &["by-owner", "by-date", "by-status"];

/// Second sentences added to some descriptions.
const EXTRA_SENTENCES: &[&str] = &[
    "Results are paged; ask for the next page with the token from the previous call.",
    "Useful when a user asks about recent activity or wants a quick overview.",
    "Times are in UTC unless a time zone is given.",
    "Requires an API token with the right scope.",
    "Only items the caller is allowed to see are returned.",
    "Rate limited to 60 calls per minute.",
    "Returns JSON.",
    "Prefer this over the list tool when the ID is known.",
];

const EXTRA_TAGS: &[&str] = &[
    "internal",
    "beta",
    "reporting",
    "admin",
    "automation",
    "customer-facing",
    "analytics",
    "compliance",
    "realtime",
    "batch",
];

const STATUSES: &[&str] = &["open", "pending", "active", "closed", "archived"];

/// A tool kind and what decides its shape.
#[derive(Debug, Clone, Copy)]
enum Kind {
    /// An HTTP tool: the index into `VERBS`, and the slug's qualifier (`history`).
    Http(usize, Option<&'static str>),
    /// A native tool: the index into `NATIVE`, and the slug's ending (`notes`).
    Native(usize, &'static str),
}

/// The parts of a `tool.json` that depend on the tool's kind.
struct Parts {
    display: String,
    description: String,
    tool_type: &'static str,
    tags: Vec<String>,
    safe: Option<bool>,
    annotations: Option<Value>,
    arg_schema: Value,
    implementation: Value,
    /// The catalog secrets the templates name.
    secrets: Vec<String>,
}

struct Native {
    func: &'static str,
    verbs: &'static [&'static str],
    /// What the noun is about: `read-invoice-template`. Empty: the slug is `<noun>-<verb>`.
    endings: &'static [&'static str],
    sentences: &'static [&'static str],
}

const NATIVE: &[Native] = &[
    Native {
        func: "readfile",
        verbs: &["read", "load", "open", "view"],
        endings: &["file", "notes", "template", "export", "log", "draft"],
        sentences: &[
            "Read the {n} {e} from the local workspace and return its text.",
            "Open the {d} {n} {e} kept in the workspace and show its contents.",
        ],
    },
    Native {
        func: "file-search",
        verbs: &["find", "locate", "scan"],
        endings: &["files", "docs", "exports", "reports"],
        sentences: &[
            "Find {n} {e} in the local workspace by name or path pattern.",
            "Locate {d} {e} about a {n} under a workspace folder, e.g. all *.csv files.",
        ],
    },
    Native {
        func: "now",
        verbs: &["current-time", "timestamp", "clock", "today"],
        endings: &[],
        sentences: &[
            "Tell the current date and time (UTC), to work out {d} {n} deadlines and due dates.",
        ],
    },
];

/// What the generator keeps about each bundle.
struct BundleInfo {
    id: Uuid,
    domain: &'static Domain,
    dir: PathBuf,
    created: i64,
    slugs: HashSet<String>,
}

/// 2023-01-01T00:00:00Z: generated timestamps fall between 2023 and mid-2025.
const EPOCH: i64 = 1_672_531_200;
const DAY: i64 = 86_400;

struct Generator {
    rng: ChaCha8Rng,
    hosts: BTreeSet<String>,
}

impl Generator {
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        // Every list above is non-empty, so `choose` always has something to return.
        match items.choose(&mut self.rng) {
            Some(item) => item,
            None => &items[0],
        }
    }

    /// A UUIDv7 whose time part is `seconds` (plus random milliseconds).
    fn uuid(&mut self, seconds: i64) -> Uuid {
        let millis =
            u64::try_from(seconds).unwrap_or_default() * 1000 + self.rng.random_range(0..1000u64);
        let bytes: [u8; 10] = self.rng.random();
        Builder::from_unix_timestamp_millis(millis, &bytes).into_uuid()
    }

    fn bundle(
        &mut self,
        index: usize,
        root: &Path,
        used: &mut HashSet<String>,
    ) -> Result<(BundleInfo, Value)> {
        let domain = &DOMAINS[index % DOMAINS.len()];
        let mut slug = domain.name.to_owned();
        if used.contains(&slug) {
            slug = format!("{}-{}", domain.name, self.pick(BUNDLE_QUALIFIERS));
        }
        slug = unique(slug, used);
        let created = EPOCH + self.rng.random_range(0..120 * DAY);
        let modified = created + self.rng.random_range(0..400 * DAY);
        let id = self.uuid(created);
        let enabled = index == 0 || !self.rng.random_bool(0.03);
        let nouns: Vec<&str> = domain.nouns.iter().map(|(_, plural)| *plural).collect();
        let description = format!(
            "{} tools{}: work with {} and {}.",
            domain.title,
            qualifier_phrase(&slug, domain.name),
            nouns[..nouns.len() - 1].join(", ").replace('-', " "),
            nouns[nouns.len() - 1].replace('-', " "),
        );
        let doc = json!({
            "schemaVersion": "1",
            "bundleID": id.to_string(),
            "slug": slug,
            "displayName": title_case(&slug),
            "description": description,
            "isEnabled": enabled,
            "isBuiltIn": false,
            "createdAt": timestamp(created)?,
            "modifiedAt": timestamp(modified)?,
        });
        let dir = root.join("bundles").join(id.to_string());
        Ok((
            BundleInfo {
                id,
                domain,
                dir,
                created,
                slugs: HashSet::new(),
            },
            doc,
        ))
    }

    /// Choose a tool's kind and slug (unique in its bundle).
    fn tool_name(&mut self, bundle: &mut BundleInfo) -> (Kind, String, &'static str) {
        let domain = bundle.domain;
        let (singular, plural) = *self.pick(domain.nouns);
        let (kind, slug) = if self.rng.random_bool(0.6) {
            let verb_index = self.rng.random_range(0..VERBS.len());
            let verb = &VERBS[verb_index];
            let noun = if verb.plural { plural } else { singular };
            let qualifiers = match verb.action {
                Action::Read => ITEM_QUALIFIERS,
                Action::Collection => COLLECTION_QUALIFIERS,
                _ => &[],
            };
            let (slug, qualifier) = match self.rng.random_range(0..10) {
                0..3 => (format!("{}-{}-{noun}", verb.word, domain.name), None),
                3..5 if !qualifiers.is_empty() => {
                    let qualifier = *self.pick(qualifiers);
                    (format!("{}-{noun}-{qualifier}", verb.word), Some(qualifier))
                }
                _ => (format!("{}-{noun}", verb.word), None),
            };
            (Kind::Http(verb_index, qualifier), slug)
        } else {
            let native_index = match self.rng.random_range(0..20) {
                0..9 => 0,
                9..18 => 1,
                _ => 2,
            };
            let native = &NATIVE[native_index];
            let verb = self.pick(native.verbs);
            let (slug, ending) = if native.endings.is_empty() {
                (format!("{singular}-{verb}"), "")
            } else {
                let ending = *self.pick(native.endings);
                (format!("{verb}-{singular}-{ending}"), ending)
            };
            (Kind::Native(native_index, ending), slug)
        };
        (kind, unique(slug, &mut bundle.slugs), singular)
    }

    /// The documents of one slug's versions (1, or 2–3 for about 10% of slugs).
    fn tool_versions(&mut self, bundle: &mut BundleInfo, room: usize) -> Result<Vec<Value>> {
        let (kind, slug, noun) = self.tool_name(bundle);
        let versions: &[&str] = if room >= 2 && self.rng.random_bool(0.10) {
            let schemes: &[&[&str]] = &[
                &["v1", "v2"],
                &["v1", "v2", "v2.1"],
                &["v1", "v2", "v3"],
                &["1.0", "1.1", "2.0"],
                &["2024-01", "2025-03"],
            ];
            let scheme = *self.pick(schemes);
            &scheme[..scheme.len().min(room)]
        } else if self.rng.random_bool(0.9) {
            &["v1"]
        } else {
            &["1.0"]
        };
        let domain = bundle.domain;
        let mut created = bundle.created + self.rng.random_range(DAY..240 * DAY);
        let mut docs = Vec::with_capacity(versions.len());
        for (generation, version) in versions.iter().enumerate() {
            let modified = if self.rng.random_bool(0.5) {
                created
            } else {
                created + self.rng.random_range(60..60 * DAY)
            };
            let mut doc = Map::new();
            doc.insert("schemaVersion".into(), "1".into());
            doc.insert("toolID".into(), self.uuid(created).to_string().into());
            doc.insert("bundleID".into(), bundle.id.to_string().into());
            doc.insert("slug".into(), slug.clone().into());
            doc.insert("version".into(), (*version).into());
            let parts = match kind {
                Kind::Http(verb_index, qualifier) => {
                    self.http_parts(domain, &VERBS[verb_index], qualifier, noun, generation)
                }
                Kind::Native(native_index, ending) => {
                    self.native_parts(domain, &NATIVE[native_index], ending, noun, &slug)
                }
            };
            doc.insert("displayName".into(), parts.display.into());
            doc.insert("description".into(), parts.description.into());
            doc.insert("type".into(), parts.tool_type.into());
            doc.insert("isEnabled".into(), (!self.rng.random_bool(0.05)).into());
            doc.insert("isBuiltIn".into(), false.into());
            doc.insert("tags".into(), parts.tags.into());
            if let Some(safe) = parts.safe {
                doc.insert("safe".into(), safe.into());
            }
            if let Some(annotations) = parts.annotations {
                doc.insert("annotations".into(), annotations);
            }
            doc.insert("argSchema".into(), parts.arg_schema);
            if self.rng.random_bool(0.3) {
                doc.insert("outputSchema".into(), output_schema(noun));
            }
            doc.insert("impl".into(), parts.implementation);
            if !parts.secrets.is_empty() {
                doc.insert("secrets".into(), parts.secrets.into());
            }
            doc.insert("createdAt".into(), timestamp(created)?.into());
            doc.insert("modifiedAt".into(), timestamp(modified)?.into());
            docs.push(Value::Object(doc));
            created = modified + self.rng.random_range(30 * DAY..150 * DAY);
        }
        Ok(docs)
    }

    fn http_parts(
        &mut self,
        domain: &'static Domain,
        verb: &Verb,
        qualifier: Option<&'static str>,
        singular: &'static str,
        generation: usize,
    ) -> Parts {
        let plural = domain
            .nouns
            .iter()
            .find(|(s, _)| *s == singular)
            .map_or(singular, |(_, p)| *p);
        let noun_words = singular.replace('-', " ");
        let plural_words = plural.replace('-', " ");
        let mut display = format!(
            "{} {}",
            capitalise(verb.word),
            if verb.plural {
                &plural_words
            } else {
                &noun_words
            }
        );
        if let Some(qualifier) = qualifier {
            display.push(' ');
            display.push_str(&qualifier.replace('-', " "));
        }
        let mut description = self
            .pick(verb.sentences)
            .replace("{ns}", &plural_words)
            .replace("{n}", &noun_words)
            .replace("{d}", domain.title);
        if self.rng.random_bool(0.4) {
            description.push(' ');
            let sentence = *self.pick(EXTRA_SENTENCES);
            description.push_str(sentence);
        }
        if generation > 0 {
            description.push_str(" This version also accepts a locale for the returned texts.");
        }

        // Arguments: the one the action needs, then up to four more from its pool.
        let id_name = format!("{}_id", singular.replace('-', "_"));
        let mut props: Vec<(String, Value)> = Vec::new();
        let required: Vec<String>;
        let pool: Vec<(String, Value)>;
        match verb.action {
            Action::Read | Action::Change | Action::Remove | Action::Operate | Action::Probe
                if verb.method != "OPTIONS" && !(verb.action == Action::Operate && verb.plural) =>
            {
                props.push((
                    id_name.clone(),
                    json!({"type": "string", "minLength": 1, "description": format!("ID of the {noun_words}.")}),
                ));
                required = vec![id_name.clone()];
                pool = item_pool(&noun_words, verb.action);
            }
            Action::Create => {
                props.push((
                    "name".to_owned(),
                    json!({"type": "string", "minLength": 1, "maxLength": 200, "description": format!("Name or title of the new {noun_words}.")}),
                ));
                required = vec!["name".to_owned()];
                pool = create_pool(&noun_words);
            }
            _ => {
                props.push(if verb.word == "search" {
                    (
                        "query".to_owned(),
                        json!({"type": "string", "minLength": 1, "description": format!("Words to look for in {plural_words}.")}),
                    )
                } else {
                    (
                        "limit".to_owned(),
                        json!({"type": "integer", "minimum": 1, "maximum": 500, "default": 50, "description": format!("Return at most this many {plural_words}.")}),
                    )
                });
                required = if verb.word == "search" {
                    vec!["query".to_owned()]
                } else {
                    Vec::new()
                };
                pool = collection_pool(&plural_words);
            }
        }
        // Later versions add a `locale` below; keep every schema at 1–5 properties.
        let extra = self
            .rng
            .random_range(0..=if generation > 0 { 3 } else { 4usize });
        for (name, schema) in pool.sample(&mut self.rng, extra) {
            if !props.iter().any(|(n, _)| n == name) {
                props.push((name.clone(), schema.clone()));
            }
        }
        if generation > 0 {
            props.push((
                "locale".to_owned(),
                json!({"type": "string", "pattern": "^[a-z]{2}(-[A-Z]{2})?$", "description": "Language of returned texts, e.g. \"en\" or \"de-CH\"."}),
            ));
        }

        // The request: the ID in the path, the other arguments in the query of reading calls.
        let host = format!("api.{}.example", domain.name);
        self.hosts.insert(host.clone());
        let api = self.rng.random_range(1..=3);
        let mut url = format!("https://{host}/v{api}/{plural}");
        let has_id = required.first() == Some(&id_name);
        if has_id {
            url.push_str(&format!("/${{{id_name}}}"));
        }
        match verb.action {
            Action::Operate => url.push_str(&format!(":{}", verb.word)),
            Action::Collection if verb.word != "list" => url.push_str(&format!(":{}", verb.word)),
            _ => {}
        }
        if matches!(verb.method, "GET" | "DELETE") {
            let query: Vec<String> = props
                .iter()
                .filter(|(name, _)| !(has_id && *name == id_name))
                .map(|(name, _)| format!("{name}=${{{name}}}"))
                .collect();
            if !query.is_empty() {
                url.push('?');
                url.push_str(&query.join("&"));
            }
        }
        let secret = format!("{}_API_TOKEN", domain.name.to_ascii_uppercase());
        let mut headers = Map::new();
        headers.insert("Accept".into(), "application/json".into());
        headers.insert(
            "Authorization".into(),
            format!("Bearer ${{{secret}}}").into(),
        );
        if matches!(verb.method, "POST" | "PUT" | "PATCH") {
            headers.insert("Content-Type".into(), "application/json".into());
        }
        let mut implementation = Map::new();
        implementation.insert("method".into(), verb.method.into());
        implementation.insert("urlTemplate".into(), url.into());
        implementation.insert("headers".into(), headers.into());
        let codes: &[u16] = match verb.method {
            "POST" => &[200, 201],
            "DELETE" => &[200, 204],
            "HEAD" | "OPTIONS" => &[200, 204],
            _ => &[200],
        };
        implementation.insert("successCodes".into(), json!(codes));
        implementation.insert(
            "timeoutMs".into(),
            (*self.pick(&[3000u64, 5000, 10_000, 15_000])).into(),
        );
        let json_body = !matches!(verb.method, "HEAD" | "OPTIONS");
        implementation.insert(
            "responseEncoding".into(),
            if json_body { "json" } else { "text" }.into(),
        );
        if json_body && self.rng.random_bool(0.5) {
            let expr = if verb.action == Action::Collection {
                "$.items"
            } else {
                "$.data"
            };
            implementation.insert("extractExpr".into(), expr.into());
        }
        let empty_on_error = verb.method == "GET" && self.rng.random_bool(0.1);
        implementation.insert(
            "errorMode".into(),
            if empty_on_error { "empty" } else { "fail" }.into(),
        );

        let reads = matches!(verb.method, "GET" | "HEAD" | "OPTIONS");
        let tags = self.tags(domain, singular, if reads { "read" } else { "write" });
        let annotations = self.rng.random_bool(0.4).then(|| {
            json!({
                "readOnlyHint": reads,
                "destructiveHint": verb.action == Action::Remove || verb.method == "PUT",
                "idempotentHint": !matches!(verb.method, "POST"),
                "openWorldHint": true,
            })
        });
        let safe = self.rng.random_bool(0.1).then_some(reads);
        Parts {
            display,
            description,
            tool_type: "http",
            tags,
            safe,
            annotations,
            arg_schema: object_schema(props, required),
            implementation: implementation.into(),
            secrets: vec![secret],
        }
    }

    fn native_parts(
        &mut self,
        domain: &'static Domain,
        native: &Native,
        ending: &'static str,
        singular: &'static str,
        slug: &str,
    ) -> Parts {
        let noun_words = singular.replace('-', " ");
        let mut description = self
            .pick(native.sentences)
            .replace("{n}", &noun_words)
            .replace("{e}", ending)
            .replace("{d}", &domain.title.to_lowercase());
        if self.rng.random_bool(0.3) {
            description.push_str(" Works offline.");
        }
        let display = title_case(slug);
        let (props, required): (Vec<(String, Value)>, Vec<String>) = match native.func {
            "readfile" => {
                let mut props = vec![(
                    "path".to_owned(),
                    json!({"type": "string", "description": format!("Workspace-relative path of the {noun_words} {ending}, e.g. \"{}/{}.md\".", domain.name, singular)}),
                )];
                if self.rng.random_bool(0.5) {
                    props.push((
                        "max_bytes".to_owned(),
                        json!({"type": "integer", "minimum": 512, "maximum": 1_048_576, "description": "Read at most this many bytes."}),
                    ));
                }
                (props, vec!["path".to_owned()])
            }
            "file-search" => {
                let mut props = vec![(
                    "query".to_owned(),
                    json!({"type": "string", "description": format!("Part of the file name or a glob, e.g. \"*{singular}*.csv\".")}),
                )];
                let optional = [
                    (
                        "path",
                        json!({"type": "string", "description": format!("Folder to search, e.g. \"{}\".", domain.name)}),
                    ),
                    (
                        "max_results",
                        json!({"type": "integer", "minimum": 1, "maximum": 200, "description": "Return at most this many files."}),
                    ),
                    (
                        "include_hidden",
                        json!({"type": "boolean", "description": "Also search files whose names start with a dot."}),
                    ),
                ];
                let extra = self.rng.random_range(0..=optional.len());
                for (name, schema) in optional.into_iter().take(extra) {
                    props.push((name.to_owned(), schema));
                }
                (props, vec!["query".to_owned()])
            }
            // `now` takes no arguments.
            _ => (Vec::new(), Vec::new()),
        };
        let tags = self.tags(domain, singular, "local");
        let annotations = self.rng.random_bool(0.5).then(|| {
            json!({"readOnlyHint": true, "destructiveHint": false, "idempotentHint": native.func != "now", "openWorldHint": false})
        });
        Parts {
            display,
            description,
            tool_type: "native",
            tags,
            safe: None,
            annotations,
            arg_schema: object_schema(props, required),
            implementation: json!({ "func": native.func }),
            secrets: Vec::new(),
        }
    }

    /// 1–4 tags: the domain, then maybe the noun, the access kind and a general one.
    fn tags(&mut self, domain: &Domain, noun: &str, access: &str) -> Vec<String> {
        let mut tags = vec![domain.name.to_owned()];
        let count = self.rng.random_range(1..=4usize);
        let candidates = [
            noun.to_owned(),
            access.to_owned(),
            (*self.pick(EXTRA_TAGS)).to_owned(),
        ];
        tags.extend(candidates.into_iter().take(count - 1));
        tags
    }
}

fn item_pool(noun: &str, action: Action) -> Vec<(String, Value)> {
    let mut pool = vec![
        (
            "include_history".to_owned(),
            json!({"type": "boolean", "default": false, "description": format!("Also return the change history of the {noun}.")}),
        ),
        (
            "fields".to_owned(),
            json!({"type": "array", "items": {"type": "string"}, "description": "Only return these fields."}),
        ),
    ];
    if action != Action::Read && action != Action::Probe {
        pool.extend([
            ("reason".to_owned(), json!({"type": "string", "maxLength": 500, "description": "Why the change is made; kept in the audit log."})),
            ("notify".to_owned(), json!({"type": "boolean", "default": true, "description": "Whether to notify the people involved."})),
            ("status".to_owned(), json!({"type": "string", "enum": STATUSES, "description": format!("New status of the {noun}.")})),
            ("assignee_email".to_owned(), json!({"type": "string", "format": "email", "description": "E-mail of the person who owns it afterwards."})),
        ]);
    }
    pool
}

fn create_pool(noun: &str) -> Vec<(String, Value)> {
    vec![
        (
            "description".to_owned(),
            json!({"type": "string", "description": format!("Longer text describing the {noun}.")}),
        ),
        (
            "owner_email".to_owned(),
            json!({"type": "string", "format": "email", "description": "E-mail of the person responsible."}),
        ),
        (
            "due_at".to_owned(),
            json!({"type": "string", "format": "date-time", "description": "When it is due, RFC 3339."}),
        ),
        (
            "amount".to_owned(),
            json!({"type": "number", "minimum": 0, "description": "Amount in the account's currency."}),
        ),
        (
            "priority".to_owned(),
            json!({"type": "string", "enum": ["low", "normal", "high", "urgent"], "default": "normal", "description": "How urgent it is."}),
        ),
        (
            "labels".to_owned(),
            json!({"type": "array", "items": {"type": "string"}, "uniqueItems": true, "description": "Labels to attach."}),
        ),
        (
            "metadata".to_owned(),
            json!({"type": "object", "additionalProperties": {"type": "string"}, "description": "Free-form key/value pairs."}),
        ),
    ]
}

fn collection_pool(plural: &str) -> Vec<(String, Value)> {
    vec![
        (
            "status".to_owned(),
            json!({"type": "string", "enum": STATUSES, "description": format!("Only {plural} with this status.")}),
        ),
        (
            "created_after".to_owned(),
            json!({"type": "string", "format": "date-time", "description": format!("Only {plural} created after this time, RFC 3339.")}),
        ),
        (
            "created_before".to_owned(),
            json!({"type": "string", "format": "date-time", "description": format!("Only {plural} created before this time.")}),
        ),
        (
            "owner_email".to_owned(),
            json!({"type": "string", "format": "email", "description": "Only items owned by this person."}),
        ),
        (
            "sort".to_owned(),
            json!({"type": "string", "enum": ["created", "updated", "name"], "default": "created", "description": "Field to sort by."}),
        ),
        (
            "page_token".to_owned(),
            json!({"type": "string", "description": "Token from the previous page, to fetch the next one."}),
        ),
        (
            "include_archived".to_owned(),
            json!({"type": "boolean", "default": false, "description": format!("Also return archived {plural}.")}),
        ),
    ]
}

fn object_schema(props: Vec<(String, Value)>, required: Vec<String>) -> Value {
    let mut schema = Map::new();
    schema.insert("type".into(), "object".into());
    schema.insert(
        "properties".into(),
        props.into_iter().collect::<Map<_, _>>().into(),
    );
    if !required.is_empty() {
        schema.insert("required".into(), json!(required));
    }
    schema.insert("additionalProperties".into(), false.into());
    schema.into()
}

fn output_schema(noun: &str) -> Value {
    json!({
        "type": "object",
        "properties": {
            "id": {"type": "string"},
            "status": {"type": "string"},
            "updatedAt": {"type": "string", "format": "date-time"},
            "summary": {"type": "string", "description": format!("One-line summary of the {}.", noun.replace('-', " "))}
        },
        "required": ["id"]
    })
}

/// `base`, or `base-2`, `base-3`… when taken; records the result in `used`.
fn unique(base: String, used: &mut HashSet<String>) -> String {
    let mut name = base.clone();
    let mut counter = 2;
    while used.contains(&name) {
        name = format!("{base}-{counter}");
        counter += 1;
    }
    used.insert(name.clone());
    name
}

fn qualifier_phrase(slug: &str, domain: &str) -> String {
    match slug.strip_prefix(domain).and_then(|s| s.strip_prefix('-')) {
        Some(qualifier) => format!(" ({qualifier})"),
        None => String::new(),
    }
}

fn capitalise(word: &str) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

fn title_case(slug: &str) -> String {
    capitalise(&slug.replace('-', " "))
}

fn timestamp(seconds: i64) -> Result<String> {
    Ok(jiff::Timestamp::from_second(seconds)?.to_string())
}

fn write_json(path: &Path, doc: &Value) -> Result<()> {
    let mut bytes = serde_json::to_vec_pretty(doc)?;
    bytes.push(b'\n');
    std::fs::write(path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()).into())
}

fn check_out_dir(out: &Path) -> Result<()> {
    match std::fs::read_dir(out) {
        Ok(mut entries) => {
            if entries.next().is_some() {
                return Err(format!(
                    "{} exists and is not empty; give a new folder",
                    out.display()
                )
                .into());
            }
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(format!("cannot read {}: {e}", out.display()).into()),
    }
}

fn main() -> ExitCode {
    match run(&Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gen-catalog: error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &Args) -> Result<()> {
    let started = Instant::now();
    check_out_dir(&args.out)?;
    let bundle_count = args.bundles.unwrap_or((args.tools / 100).max(5)).max(1);

    let mut generator = Generator {
        rng: ChaCha8Rng::seed_from_u64(args.seed),
        hosts: BTreeSet::new(),
    };
    std::fs::create_dir_all(args.out.join("bundles"))?;
    let mut used_slugs = HashSet::new();
    let mut bundles = Vec::with_capacity(bundle_count);
    for index in 0..bundle_count {
        let (info, doc) = generator.bundle(index, &args.out, &mut used_slugs)?;
        std::fs::create_dir_all(&info.dir)?;
        write_json(&info.dir.join("bundle.json"), &doc)?;
        bundles.push(info);
    }

    let mut written = 0;
    while written < args.tools {
        let bundle_index = generator.rng.random_range(0..bundles.len());
        let bundle = &mut bundles[bundle_index];
        for doc in generator.tool_versions(bundle, args.tools - written)? {
            let slug = doc["slug"].as_str().unwrap_or_default();
            let version = doc["version"].as_str().unwrap_or_default();
            let dir = bundle.dir.join("tools").join(slug).join(version);
            std::fs::create_dir_all(&dir)?;
            write_json(&dir.join("tool.json"), &doc)?;
            written += 1;
        }
    }

    let config = json!({
        "schemaVersion": "1",
        "allowedHosts": generator.hosts.iter().collect::<Vec<_>>(),
        "builtin": {"isEnabled": true, "tools": {"exec": {"isEnabled": false}}},
        "reap": {"gracePeriod": "48h"},
    });
    write_json(&args.out.join("toolctl.json"), &config)?;

    eprintln!(
        "gen-catalog: {written} tools in {} bundles written to {} in {:.2}s (seed {})",
        bundles.len(),
        args.out.display(),
        started.elapsed().as_secs_f64(),
        args.seed,
    );
    Ok(())
}
