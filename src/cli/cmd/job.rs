//! `toolctl job`: the jobs `toolctl serve` runs (async batches, sync calls past `wait_ms`) and
//! those `invoke --batch --async` queues, read from `.toolctl/jobs.db`; `job work` is the
//! background worker `invoke --batch --async` starts.

use crate::cli::Ctx;
use crate::cli::error::CliError;
use crate::cli::output::{self, Human, Output};
use clap::{Args, Subcommand};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::time::{Duration, Instant};
use toolctl_lib::base::error_code::ErrorCode;
use toolctl_lib::catalog::state;
use toolctl_lib::jobs::{self, Cancelled, Job, Status, Store};

/// See, wait for, cancel and prune the jobs `toolctl serve` and `invoke --batch --async` run
#[derive(Debug, Subcommand)]
pub enum JobCommand {
    /// List jobs, newest first
    List(ListArgs),
    /// Show a job, with its result once it is over
    Get(IdArg),
    /// Wait until jobs are over, then show them (exit 7 when one did not succeed)
    Wait(WaitArgs),
    /// Cancel a queued job (it never starts) or ask a running one to stop
    Cancel(IdArg),
    /// Remove jobs that finished long ago (serve.jobRetention, 7d unless set)
    Prune(PruneArgs),
    /// Run the queued jobs until none are left, then exit (what `invoke --batch --async`
    /// starts in the background; it exits at once when another worker runs)
    #[command(hide = true)]
    Work(WorkArgs),
}

#[derive(Debug, Args)]
pub struct WorkArgs {
    /// The folder file tools work in, for jobs that do not name one
    #[arg(long, value_name = "DIR")]
    pub workspace: PathBuf,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Only jobs in this status: queued, running, succeeded, failed or cancelled
    #[arg(long, value_name = "STATUS", value_parser = parse_status)]
    pub status: Option<Status>,
    /// At most N jobs
    #[arg(long, value_name = "N", default_value_t = 50)]
    pub limit: usize,
}

#[derive(Debug, Args)]
pub struct IdArg {
    /// The job's id (as invoke-batch answered it)
    #[arg(value_name = "ID")]
    pub id: String,
}

#[derive(Debug, Args)]
pub struct WaitArgs {
    /// The jobs' ids
    #[arg(value_name = "ID", required = true)]
    pub ids: Vec<String>,
    /// Give up after SECS seconds (exit 7, TIMEOUT)
    #[arg(long, value_name = "SECS", default_value_t = 60)]
    pub timeout: u64,
}

#[derive(Debug, Args)]
pub struct PruneArgs {
    /// Remove jobs finished longer ago than this (e.g. 7d, 12h) instead of serve.jobRetention
    #[arg(long, value_name = "DURATION", value_parser = toolctl_lib::base::time::parse_duration)]
    pub older_than: Option<Duration>,
}

fn parse_status(text: &str) -> Result<Status, String> {
    Status::parse_name(text).ok_or_else(|| {
        format!("'{text}' is not a job status: queued, running, succeeded, failed or cancelled")
    })
}

pub fn run(ctx: &Ctx, command: &JobCommand) -> Result<Output, CliError> {
    let catalog = ctx.catalog()?;
    let store = Store::open(&state::dir(catalog.root())).map_err(job_error)?;
    match command {
        JobCommand::List(args) => {
            let jobs = store.list(args.status, args.limit).map_err(job_error)?;
            let mut table = output::table(["ID", "STATUS", "TOOL", "QUEUE", "CREATED"]);
            for job in &jobs {
                table.add_row([
                    job.id.clone(),
                    job.status.as_str().to_owned(),
                    job.name.clone(),
                    job.queue.clone(),
                    job.created_at.clone(),
                ]);
            }
            let text = if jobs.is_empty() {
                "no jobs".to_owned()
            } else {
                table.trim_fmt()
            };
            Ok(Output::new(json!({ "jobs": jobs }), Human::Text(text)))
        }
        JobCommand::Get(arg) => {
            let job = store.get(&arg.id).map_err(job_error)?;
            Ok(Output::new(json!(job), Human::Text(describe(&job))))
        }
        JobCommand::Wait(args) => wait(&store, args),
        JobCommand::Cancel(arg) => {
            let cancelled = store.cancel(&arg.id).map_err(job_error)?;
            let job = store.get(&arg.id).map_err(job_error)?;
            let text = match cancelled {
                Cancelled::Queued => format!("Cancelled {} (it had not started)", job.id),
                Cancelled::Running => format!(
                    "Asked {} to stop: it is running; `toolctl job wait {}` shows how it ended",
                    job.id, job.id
                ),
            };
            Ok(Output::new(json!(job), Human::Text(text)))
        }
        JobCommand::Prune(args) => {
            let age = args.older_than.unwrap_or(catalog.config().job_retention);
            let removed = store.prune(age).map_err(job_error)?;
            Ok(Output::new(
                json!({ "removed": removed }),
                Human::Text(format!("Removed {removed} finished job(s)")),
            ))
        }
        JobCommand::Work(args) => {
            let workers = catalog
                .config()
                .serve
                .workers
                .unwrap_or(toolctl_lib::serve::DEFAULT_WORKERS);
            let ran = jobs::worker::drain(catalog.root(), args.workspace.clone(), workers)
                .map_err(job_error)?;
            Ok(Output::new(
                json!({ "ran": ran }),
                Human::Text(format!("Ran {ran} job(s)")),
            ))
        }
    }
}

/// Poll until every job is over or `--timeout`.
fn wait(store: &Store, args: &WaitArgs) -> Result<Output, CliError> {
    let deadline = Instant::now() + Duration::from_secs(args.timeout);
    let mut pause = Duration::from_millis(50);
    loop {
        let jobs = args
            .ids
            .iter()
            .map(|id| store.get(id))
            .collect::<Result<Vec<Job>, _>>()
            .map_err(job_error)?;
        if jobs.iter().all(|job| job.status.is_final()) {
            let text = jobs.iter().map(describe).collect::<Vec<_>>().join("\n\n");
            let json = json!({ "jobs": jobs });
            if let Some(job) = jobs.iter().find(|j| j.status != Status::Succeeded) {
                return Err(CliError::new(
                    ErrorCode::UpstreamError,
                    format!("job {} {}", job.id, job.status.as_str()),
                )
                .with_details(json));
            }
            return Ok(Output::new(json, Human::Text(text)));
        }
        if Instant::now() >= deadline {
            let open: Vec<&str> = jobs
                .iter()
                .filter(|j| !j.status.is_final())
                .map(|j| j.id.as_str())
                .collect();
            return Err(CliError::new(
                ErrorCode::Timeout,
                format!(
                    "{} job(s) not over within {} s: {}",
                    open.len(),
                    args.timeout,
                    open.join(", ")
                ),
            )
            .with_details(json!({ "jobs": jobs })));
        }
        std::thread::sleep(pause.min(deadline.saturating_duration_since(Instant::now())));
        pause = (pause * 2).min(Duration::from_millis(500));
    }
}

/// A job for a person: where it stands, then its result.
fn describe(job: &Job) -> String {
    let mut text = format!(
        "{} {} ({}, queue {}, call {})\ncreated {}",
        job.id,
        job.status.as_str(),
        job.name,
        job.queue,
        job.call_id,
        job.created_at
    );
    if let Some(started) = &job.started_at {
        text.push_str(&format!(", started {started}"));
    }
    if let Some(finished) = &job.finished_at {
        text.push_str(&format!(", finished {finished}"));
    }
    if let Some(result) = &job.result {
        let shown = match (result.get("output"), result.get("error")) {
            (Some(output), _) => serde_json::to_string_pretty(output).unwrap_or_default(),
            (_, Some(Value::Object(error))) => format!(
                "{}: {}",
                error.get("code").and_then(Value::as_str).unwrap_or("ERROR"),
                error
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
            ),
            _ => result.to_string(),
        };
        text.push('\n');
        text.push_str(&shown);
    }
    text
}

fn job_error(error: jobs::Error) -> CliError {
    let message = error.to_string();
    match error {
        jobs::Error::NotFound(_) => CliError::new(ErrorCode::NotFound, message)
            .with_hint("`toolctl job list` shows the jobs kept"),
        jobs::Error::Finished { .. } => CliError::new(ErrorCode::Conflict, message),
        jobs::Error::Db { .. } | jobs::Error::Io { .. } => {
            CliError::new(ErrorCode::Internal, message)
        }
    }
}
