//! The MCP sessions a process that makes many calls keeps (`mcp serve`, `invoke --batch`): one
//! per server, shared by its calls, made again when it died or its entry changed, and every
//! server they started ended with them.

use super::process::{Process, Reaper, ended};
use super::{Answer, CLOSE_GRACE, Call, Reach, Request, ask};
use crate::base::error_code::ErrorCode;
use crate::invoke::Failure;
use rmcp::RoleClient;
use rmcp::model::ClientConfig;
use rmcp::service::RunningService;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// MCP sessions kept for a process that makes many calls (`mcp serve`, `invoke --batch`): one
/// per server, made at its first call (a stdio server started, an HTTP server's session
/// initialized) and used by every call after it (concurrent calls share it). A stdio server
/// found dead at a call is started again; an HTTP session whose connection ended is opened
/// again, and one the server says is gone (HTTP 404 on its session ID, as after a restart) is
/// initialized again by the SDK's transport, the call retried once. A session that fails a call
/// by dying, or lets it time out, is ended (the next call makes it again); one whose
/// `mcpServers` entry changed is replaced. [`Sessions::close`] (also on drop) ends every server
/// it started, with whatever they started.
#[derive(Default)]
pub struct Sessions {
    runtime: std::sync::Mutex<Option<Arc<tokio::runtime::Runtime>>>,
    slots: std::sync::Mutex<HashMap<String, Slot>>,
    /// Every server running now, by connection: what kills it.
    running: Arc<std::sync::Mutex<HashMap<u64, Reaper>>>,
    next_id: AtomicU64,
}

type Slot = Arc<tokio::sync::Mutex<Option<Connection>>>;

/// A server's open session.
struct Connection {
    id: u64,
    key: u64,
    client: RunningService<RoleClient, ClientConfig>,
    /// The started server (none over HTTP).
    process: Option<Process>,
}

impl Connection {
    fn alive(&mut self) -> bool {
        !self.client.is_transport_closed() && self.process.as_mut().is_none_or(Process::alive)
    }
}

impl Sessions {
    pub fn new() -> Self {
        Self::default()
    }

    /// The runtime the servers' sessions run on (one worker thread), made at the first call.
    fn runtime(&self) -> Result<Arc<tokio::runtime::Runtime>, Failure> {
        let mut held = self.runtime.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(runtime) = &*held {
            return Ok(Arc::clone(runtime));
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("toolctl-mcp-client")
            .enable_all()
            .build()
            .map(Arc::new)
            .map_err(|e| {
                Failure::new(ErrorCode::Internal, format!("cannot start a runtime: {e}"))
            })?;
        *held = Some(Arc::clone(&runtime));
        Ok(runtime)
    }

    fn slot(&self, server: &str) -> Slot {
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        Arc::clone(slots.entry(server.to_owned()).or_default())
    }

    /// How many servers run now (for tests and logs).
    pub fn running(&self) -> usize {
        self.running.lock().map(|r| r.len()).unwrap_or(0)
    }

    /// End every server started here, and whatever they started.
    pub fn close(&self) {
        let running = std::mem::take(&mut *self.running.lock().unwrap_or_else(|e| e.into_inner()));
        for reaper in running.values() {
            reaper.kill();
            // Removed now: a session still in use is dropped only with the runtime.
            if let Some(cgroup) = &reaper.cgroup {
                cgroup.remove();
            }
        }
        let runtime = self
            .runtime
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        let slots = std::mem::take(&mut *self.slots.lock().unwrap_or_else(|e| e.into_inner()));
        if let Some(runtime) = runtime {
            // HTTP sessions are ended as the protocol says (DELETE), each briefly.
            let open: Vec<Connection> = slots
                .values()
                .filter_map(|slot| slot.try_lock().ok()?.take_if(|c| c.process.is_none()))
                .collect();
            if !open.is_empty() {
                let closing = async {
                    for mut connection in open {
                        let _ = tokio::time::timeout(CLOSE_GRACE, connection.client.close()).await;
                    }
                };
                // On a thread of its own: `close` may be called from within another runtime.
                std::thread::scope(|scope| {
                    scope.spawn(|| runtime.block_on(closing));
                });
            }
            // Their sessions and processes are dropped on the runtime they belong to.
            let entered = runtime.enter();
            drop(slots);
            drop(entered);
            if let Ok(runtime) = Arc::try_unwrap(runtime) {
                runtime.shutdown_background();
            }
        }
    }

    /// `request` of the server `call.name`, on its pooled session.
    pub(super) fn request(
        &self,
        call: &Call<'_>,
        reach: &Reach<'_>,
        request: Request,
    ) -> Result<Answer, Failure> {
        let runtime = self.runtime()?;
        runtime.block_on(self.pooled(call, reach, request))
    }

    async fn pooled(
        &self,
        call: &Call<'_>,
        reach: &Reach<'_>,
        request: Request,
    ) -> Result<Answer, Failure> {
        let deadline = tokio::time::Instant::now() + call.timeout;
        let slot = self.slot(call.name);
        let (id, peer, group) = {
            let Ok(mut held) = tokio::time::timeout_at(deadline, slot.lock()).await else {
                return Err(call.failure(None, false, ""));
            };
            let key = reach.key();
            if let Some(connection) = held.as_mut()
                && (connection.key != key || !connection.alive())
                && let Some(old) = held.take()
            {
                self.end(old).await;
            }
            let connection = match held.take() {
                Some(connection) => connection,
                None => {
                    let (process, client) = reach.connect(call, deadline).await?;
                    let id = self.next_id.fetch_add(1, Ordering::SeqCst);
                    if let Some(process) = &process {
                        self.running
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .insert(id, process.reaper());
                    }
                    Connection {
                        id,
                        key,
                        client,
                        process,
                    }
                }
            };
            let peer = connection.client.peer().clone();
            let group = connection.process.as_ref().and_then(|p| p.group);
            let id = connection.id;
            *held = Some(connection);
            (id, peer, group)
        };
        let trouble = match tokio::time::timeout_at(deadline, ask(&peer, request, group)).await {
            Ok(Ok(answer)) => return Ok(answer),
            Ok(Err(trouble)) => Some(trouble),
            Err(_) => None,
        };
        // A server that let the time run out, or died, is ended; one that refused the request
        // (a JSON-RPC error) is kept.
        let mut held = slot.lock().await;
        let gone = held
            .as_mut()
            .is_some_and(|c| c.id == id && (trouble.is_none() || !c.alive()));
        match held.take_if(|_| gone) {
            Some(mut connection) => {
                self.forget(connection.id);
                let failure = match &mut connection.process {
                    Some(process) => ended(call, process, trouble, true).await,
                    None => call.failure(trouble, true, ""),
                };
                let _ = tokio::time::timeout(CLOSE_GRACE, connection.client.cancel()).await;
                Err(failure)
            }
            _ => Err(call.failure(trouble, true, "")),
        }
    }

    fn forget(&self, id: u64) {
        self.running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&id);
    }

    /// Close a connection and end its server.
    async fn end(&self, mut connection: Connection) {
        self.forget(connection.id);
        let _ = tokio::time::timeout(CLOSE_GRACE, connection.client.close()).await;
        if let Some(process) = &mut connection.process {
            process.end().await;
        }
    }
}

impl Drop for Sessions {
    fn drop(&mut self) {
        self.close();
    }
}

impl std::fmt::Debug for Sessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sessions")
            .field("running", &self.running())
            .finish()
    }
}
