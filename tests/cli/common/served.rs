//! A `toolctl` server a test started (`mcp serve --http`, `serve`): its port read from its
//! "listening on http://…" line, its stderr kept by a thread, killed however the test ends.

use std::io::BufRead;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

pub struct Served {
    pub child: Child,
    pub port: u16,
    said: Arc<Mutex<String>>,
}

impl Served {
    /// Start `command` and wait until it listens.
    pub fn spawn(mut command: Command) -> Self {
        let mut child = command
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let said = Arc::new(Mutex::new(String::new()));
        let (tell, listening) = mpsc::channel();
        let kept = said.clone();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
            {
                if let Some(rest) = line.split("listening on http://").nth(1) {
                    let address = rest.split('/').next().unwrap_or_default();
                    let _ = tell.send(address.rsplit(':').next().unwrap_or_default().to_owned());
                }
                let mut said = kept.lock().unwrap();
                said.push_str(&line);
                said.push('\n');
            }
        });
        let mut served = Self {
            child,
            port: 0,
            said,
        };
        let port = listening.recv_timeout(Duration::from_secs(30));
        served.port = port
            .ok()
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("the server did not listen:\n{}", served.stderr()));
        served
    }

    pub fn stderr(&self) -> String {
        self.said.lock().unwrap().clone()
    }

    /// Its stderr once it holds `needle` (it is read by another thread: wait a little).
    pub fn said(&self, needle: &str) -> String {
        self.said_within(needle, Duration::from_secs(5))
    }

    /// Its stderr once it holds `needle`, waiting at most `wait`.
    pub fn said_within(&self, needle: &str, wait: Duration) -> String {
        let deadline = Instant::now() + wait;
        loop {
            let said = self.stderr();
            if said.contains(needle) || Instant::now() > deadline {
                return said;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// `http://127.0.0.1:PORT` + `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
