//! HTTPS: a server's certificate is verified against the system's certificates (and
//! `SSL_CERT_FILE`, which names more), once a process for every call of a batch.

use super::*;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// A Python HTTPS server on 127.0.0.1 with a certificate for IP 127.0.0.1 signed by an
/// authority of its own (both made by `openssl`), answering every GET with `{"tls": true}`. Stopped when dropped.
struct HttpsServer {
    child: Child,
    port: u16,
    /// The authority that signed the server's certificate.
    ca: std::path::PathBuf,
}

impl HttpsServer {
    fn start(dir: &Path) -> Self {
        // An authority of the test's own, and the server's certificate signed by it.
        let (ca, ca_key) = (dir.join("ca.pem"), dir.join("ca-key.pem"));
        let (cert, key, request) = (
            dir.join("cert.pem"),
            dir.join("key.pem"),
            dir.join("cert.csr"),
        );
        let extensions = dir.join("cert.ext");
        std::fs::write(
            &extensions,
            "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n",
        )
        .unwrap();
        let key_options = [
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
        ];
        let openssl = |args: &[&std::ffi::OsStr]| {
            let made = Command::new("openssl")
                .args(args)
                .output()
                .expect("openssl runs");
            assert!(
                made.status.success(),
                "{}",
                String::from_utf8_lossy(&made.stderr)
            );
        };
        let os = |s: &'static str| std::ffi::OsStr::new(s);
        let mut args: Vec<&std::ffi::OsStr> = vec![os("req"), os("-x509")];
        args.extend(key_options.map(os));
        args.extend([
            os("-days"),
            os("1"),
            os("-subj"),
            os("/CN=toolctl test authority"),
        ]);
        args.extend([
            os("-keyout"),
            ca_key.as_os_str(),
            os("-out"),
            ca.as_os_str(),
        ]);
        openssl(&args);
        let mut args: Vec<&std::ffi::OsStr> = vec![os("req")];
        args.extend(key_options.map(os));
        args.extend([os("-subj"), os("/CN=127.0.0.1")]);
        args.extend([
            os("-keyout"),
            key.as_os_str(),
            os("-out"),
            request.as_os_str(),
        ]);
        openssl(&args);
        openssl(&[
            os("x509"),
            os("-req"),
            os("-days"),
            os("1"),
            os("-in"),
            request.as_os_str(),
            os("-CA"),
            ca.as_os_str(),
            os("-CAkey"),
            ca_key.as_os_str(),
            os("-CAcreateserial"),
            os("-extfile"),
            extensions.as_os_str(),
            os("-out"),
            cert.as_os_str(),
        ]);
        let script = r#"
import http.server, ssl, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b'{"tls": true}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a): pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(sys.argv[1], sys.argv[2])
server.socket = context.wrap_socket(server.socket, server_side=True)
print(server.server_address[1], flush=True)
server.serve_forever()
"#;
        let mut child = Command::new("python3")
            .args(["-c", script])
            .arg(&cert)
            .arg(&key)
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 runs");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line.trim().parse().expect("the server prints its port");
        Self { child, port, ca }
    }
}

impl Drop for HttpsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn https_calls_are_verified_against_the_systems_certificates_and_ssl_cert_file() {
    let env = TestEnv::new();
    let server = HttpsServer::start(env.root());
    env.edit_config(|config| {
        config["allowedHosts"] = json!([format!("127.0.0.1:{}", server.port)]);
    });
    env.bundle("h");
    let url = format!("https://127.0.0.1:{}/ping", server.port);
    env.put_tool(
        "h",
        &http_doc(
            "ping",
            json!({ "method": "GET", "urlTemplate": url }),
            json!({}),
        ),
    );

    // A certificate no authority of the system signed is refused.
    let refused = env.run(&["--json", "invoke", "h/ping"]);
    assert_ne!(refused.code(), 0, "{refused}");
    assert!(refused.stdout.contains("certificate"), "{refused}");

    // Trusted through SSL_CERT_FILE: one call, and a batch whose calls share the settings.
    let trusting = |args: &[&str]| {
        let mut command = env.command(args);
        command.env("SSL_CERT_FILE", &server.ca);
        Run::of(command, None)
    };
    let one = trusting(&["--json", "invoke", "h/ping"]);
    one.success();
    assert_eq!(one.json()["value"], json!({ "tls": true }), "{one}");
    let calls: Vec<Value> = (0..3)
        .map(|i| json!({ "call_id": format!("c{i}"), "name": "h/ping", "arguments": {} }))
        .collect();
    let batch = env.input(&json!({ "calls": calls }));
    let run = trusting(&["--json", "invoke", "--batch", &batch]);
    run.success();
    let doc = run.json();
    let results = doc["results"].as_array().expect("results");
    assert_eq!(results.len(), 3, "{run}");
    for result in results {
        assert_eq!(result["ok"], true, "{run}");
    }
}
