//! HTTP pieces every layer that talks to a server shares: the client (with the resolver that
//! keeps a host name from leading to this machine), reading a body under a cap, and
//! URL-component encoding.

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use std::io::Read;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

/// The bytes a URL component keeps as they are (RFC 3986 unreserved).
const COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// A value as one percent-encoded URL component.
pub fn encode_component(text: &str) -> String {
    utf8_percent_encode(text, COMPONENT).to_string()
}

/// Makes ring rustls' crypto provider for the process, once, before the first client: reqwest
/// is built without a provider of its own (its default, aws-lc-rs, compiles C through cmake
/// for about a minute), and every client toolctl builds comes from this module.
fn install_crypto_provider() {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        // An error says a provider is installed already, which is all this asks for.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// The TLS settings of every client, made once a process: what reqwest makes for each client
/// it builds (TLS 1.2 and 1.3, the system's certificates through rustls-platform-verifier,
/// HTTP/1.1), except that the verifier, which reads every certificate of the system, is made
/// once, on the first TLS connection ([`SystemVerifier`]): a batch of calls loads them once,
/// and calls over plain HTTP never. Clients share its session cache too, so the calls of a
/// batch to one host resume its first TLS session. `None` when it cannot be made: each client
/// then makes its own.
fn tls_config() -> Option<rustls::ClientConfig> {
    static CONFIG: std::sync::OnceLock<Option<rustls::ClientConfig>> = std::sync::OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let provider = Arc::new(rustls::crypto::ring::default_provider());
            let verifier = SystemVerifier {
                provider: provider.clone(),
                made: std::sync::OnceLock::new(),
            };
            let mut config = rustls::ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .ok()?
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(verifier))
                .with_no_client_auth();
            config.alpn_protocols = vec![b"http/1.1".to_vec()];
            Some(config)
        })
        .clone()
}

/// rustls-platform-verifier's verifier of the system's certificates, made when a server's
/// certificate is first checked. One that cannot be made fails each TLS handshake with why.
#[derive(Debug)]
struct SystemVerifier {
    provider: Arc<rustls::crypto::CryptoProvider>,
    made: std::sync::OnceLock<Result<rustls_platform_verifier::Verifier, rustls::Error>>,
}

impl SystemVerifier {
    fn verifier(&self) -> Result<&rustls_platform_verifier::Verifier, rustls::Error> {
        self.made
            .get_or_init(|| rustls_platform_verifier::Verifier::new(self.provider.clone()))
            .as_ref()
            .map_err(Clone::clone)
    }
}

impl rustls::client::danger::ServerCertVerifier for SystemVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &rustls::pki_types::CertificateDer<'_>,
        intermediates: &[rustls::pki_types::CertificateDer<'_>],
        server_name: &rustls::pki_types::ServerName<'_>,
        ocsp_response: &[u8],
        now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        self.verifier()?.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        )
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.verifier()?.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.verifier()?.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        // The provider's schemes, which the platform verifier supports as well: known
        // without loading a certificate.
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// A blocking HTTP client with `redirects` as its redirect policy (HTTP tools check every hop
/// against `allowedHosts`; the scorers' endpoints follow none), and `dns` as its resolver when
/// given (see [`GuardedDns`]).
pub fn client(
    redirects: reqwest::redirect::Policy,
    dns: Option<GuardedDns>,
) -> reqwest::Result<reqwest::blocking::Client> {
    install_crypto_provider();
    let mut builder = reqwest::blocking::Client::builder().redirect(redirects);
    if let Some(tls) = tls_config() {
        builder = builder.tls_backend_preconfigured(tls);
    }
    if let Some(dns) = dns {
        builder = builder.dns_resolver(Arc::new(dns));
    }
    builder.build()
}

/// [`client`] without redirects and with `dns` as its resolver, made once a process for each
/// list of addresses `dns` allows: a blocking client runs a thread and a runtime of its own,
/// which cost more than a short call when every call of a batch made one. The calls share its
/// connections too.
pub fn shared_client(dns: GuardedDns) -> reqwest::Result<reqwest::blocking::Client> {
    type Clients = Vec<(Vec<IpAddr>, reqwest::blocking::Client)>;
    static CLIENTS: std::sync::Mutex<Clients> = std::sync::Mutex::new(Vec::new());
    let mut clients = CLIENTS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((_, made)) = clients.iter().find(|(allowed, _)| *allowed == dns.allowed) {
        return Ok(made.clone());
    }
    let allowed = dns.allowed.clone();
    let made = client(reqwest::redirect::Policy::none(), Some(dns))?;
    clients.push((allowed, made.clone()));
    Ok(made)
}

/// The async client of MCP servers over HTTP: no redirects (the host allowed is the host
/// called), and `dns` as its resolver.
pub fn async_client(dns: GuardedDns) -> reqwest::Result<reqwest::Client> {
    install_crypto_provider();
    let mut builder = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .dns_resolver(Arc::new(dns));
    if let Some(tls) = tls_config() {
        builder = builder.tls_backend_preconfigured(tls);
    }
    builder.build()
}

/// What kind of address a host name may not lead to ([`local_kind`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LocalKind {
    Loopback,
    LinkLocal,
    Unspecified,
}

impl std::fmt::Display for LocalKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Loopback => "a loopback address",
            Self::LinkLocal => "a link-local address",
            Self::Unspecified => "the unspecified address",
        })
    }
}

/// Whether `ip` is this machine or its link rather than a server: loopback (127.0.0.0/8,
/// `::1`), link-local (169.254.0.0/16, where clouds serve instance metadata and credentials,
/// and fe80::/10), or unspecified (0.0.0.0/8 and `::`, which reach this machine). IPv4 in an
/// IPv6 form (`::ffff:127.0.0.1`) counts as its IPv4 address. Private networks (10/8,
/// 172.16/12, 192.168/16, fc00::/7) are not among them: internal APIs live there.
pub fn local_kind(ip: IpAddr) -> Option<LocalKind> {
    match ip {
        IpAddr::V4(v4) => {
            if v4.is_loopback() {
                Some(LocalKind::Loopback)
            } else if v4.is_link_local() {
                Some(LocalKind::LinkLocal)
            } else if v4.octets()[0] == 0 {
                Some(LocalKind::Unspecified)
            } else {
                None
            }
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                local_kind(IpAddr::V4(v4))
            } else if v6.is_loopback() {
                Some(LocalKind::Loopback)
            } else if v6.segments()[0] & 0xffc0 == 0xfe80 {
                Some(LocalKind::LinkLocal)
            } else if v6.is_unspecified() {
                Some(LocalKind::Unspecified)
            } else {
                None
            }
        }
    }
}

/// A host name resolved only to addresses it may not lead to: the error of a connection
/// [`GuardedDns`] refused (found again in a request's error by [`blocked_in`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("host '{host}' resolves to {address}, {kind}, which a host name may not lead to")]
pub struct Blocked {
    pub host: String,
    /// The first address refused.
    pub address: IpAddr,
    pub kind: LocalKind,
}

/// A DNS resolver that does not let a host name lead to this machine or its link: of the
/// addresses the system resolver gives, loopback, link-local and unspecified ones
/// ([`local_kind`]) are dropped, unless listed in `allowed`; a name left with none fails with
/// [`Blocked`]. As the client's resolver it decides the address connected to, so nothing can
/// change between the check and the connection (DNS rebinding). IP literals never reach a
/// resolver, and `localhost` is resolved as it is: both name the machine on purpose.
#[derive(Debug, Clone, Default)]
pub struct GuardedDns {
    /// Addresses a host name may lead to all the same (listed in `allowedHosts`).
    pub allowed: Vec<IpAddr>,
}

impl GuardedDns {
    /// The addresses of `addrs` a connection to `host` may use, or why there are none.
    pub fn filter(
        &self,
        host: &str,
        addrs: impl IntoIterator<Item = SocketAddr>,
    ) -> Result<Vec<SocketAddr>, Blocked> {
        if host.eq_ignore_ascii_case("localhost") {
            return Ok(addrs.into_iter().collect());
        }
        let mut refused = None;
        let kept: Vec<SocketAddr> = addrs
            .into_iter()
            .filter(|addr| {
                let ip = addr.ip();
                match local_kind(ip) {
                    Some(kind) if !self.allowed.contains(&ip) => {
                        refused.get_or_insert((ip, kind));
                        false
                    }
                    _ => true,
                }
            })
            .collect();
        match refused {
            Some((address, kind)) if kept.is_empty() => Err(Blocked {
                host: host.to_owned(),
                address,
                kind,
            }),
            _ => Ok(kept),
        }
    }
}

impl reqwest::dns::Resolve for GuardedDns {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let guard = self.clone();
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let found = tokio::net::lookup_host((host.as_str(), 0)).await?;
            let kept = guard.filter(&host, found)?;
            let addrs: reqwest::dns::Addrs = Box::new(kept.into_iter());
            Ok(addrs)
        })
    }
}

/// The [`Blocked`] that made a request fail, if that is why it failed.
pub fn blocked_in<'a>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a Blocked> {
    let mut next = Some(error);
    while let Some(error) = next {
        if let Some(blocked) = error.downcast_ref::<Blocked>() {
            return Some(blocked);
        }
        next = error.source();
    }
    None
}

/// Why a body could not be read under its cap.
#[derive(Debug)]
pub enum CappedRead {
    /// Reading failed (a timeout is an I/O error of kind `TimedOut`, or wraps reqwest's).
    Failed(std::io::Error),
    /// The body is longer than the cap: reading stopped one byte past it.
    TooLarge,
}

/// Read `body` while it arrives, stopping as soon as it passes `cap` bytes.
pub fn read_capped(body: impl Read, cap: u64) -> Result<Vec<u8>, CappedRead> {
    let mut bytes = Vec::new();
    body.take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(CappedRead::Failed)?;
    if bytes.len() as u64 > cap {
        return Err(CappedRead::TooLarge);
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::{Blocked, CappedRead, GuardedDns, LocalKind, blocked_in, local_kind, read_capped};
    use std::net::{IpAddr, SocketAddr};

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    fn at(text: &str) -> SocketAddr {
        SocketAddr::new(ip(text), 0)
    }

    #[test]
    fn loopback_link_local_and_unspecified_addresses_are_local_and_private_ones_are_not() {
        for (text, kind) in [
            ("127.0.0.1", Some(LocalKind::Loopback)),
            ("127.1.2.3", Some(LocalKind::Loopback)),
            ("::1", Some(LocalKind::Loopback)),
            ("::ffff:127.0.0.1", Some(LocalKind::Loopback)),
            ("169.254.169.254", Some(LocalKind::LinkLocal)),
            ("::ffff:169.254.169.254", Some(LocalKind::LinkLocal)),
            ("fe80::1", Some(LocalKind::LinkLocal)),
            ("febf::1", Some(LocalKind::LinkLocal)),
            ("0.0.0.0", Some(LocalKind::Unspecified)),
            ("0.1.2.3", Some(LocalKind::Unspecified)),
            ("::", Some(LocalKind::Unspecified)),
            ("10.0.0.1", None),
            ("172.16.5.4", None),
            ("192.168.1.1", None),
            ("fd00::1", None),
            ("fec0::1", None),
            ("93.184.216.34", None),
            ("2606:4700::1111", None),
            ("128.0.0.1", None),
            ("169.255.0.1", None),
        ] {
            assert_eq!(local_kind(ip(text)), kind, "{text}");
        }
    }

    #[test]
    fn a_name_keeps_its_other_addresses_and_fails_when_only_local_ones_are_left() {
        let guard = GuardedDns::default();
        assert_eq!(
            guard.filter("api.example.com", [at("127.0.0.1"), at("10.1.2.3")]),
            Ok(vec![at("10.1.2.3")])
        );
        assert_eq!(
            guard.filter("api.example.com", [at("169.254.169.254"), at("::1")]),
            Err(Blocked {
                host: "api.example.com".to_owned(),
                address: ip("169.254.169.254"),
                kind: LocalKind::LinkLocal,
            })
        );
        // localhost names the machine on purpose.
        assert_eq!(
            guard.filter("LocalHost", [at("127.0.0.1")]),
            Ok(vec![at("127.0.0.1")])
        );
        // An address listed in allowedHosts may be reached by name.
        let allowing = GuardedDns {
            allowed: vec![ip("127.0.0.1")],
        };
        assert_eq!(
            allowing.filter("api.example.com", [at("127.0.0.1"), at("::1")]),
            Ok(vec![at("127.0.0.1")])
        );
        let message = guard
            .filter("api.example.com", [at("127.0.0.1")])
            .unwrap_err()
            .to_string();
        assert_eq!(
            message,
            "host 'api.example.com' resolves to 127.0.0.1, a loopback address, which a host name may not lead to"
        );
    }

    #[test]
    fn the_refusal_is_found_in_a_chain_of_errors() {
        #[derive(Debug, thiserror::Error)]
        #[error("connect failed")]
        struct Outer(#[source] Box<dyn std::error::Error + Send + Sync>);
        let blocked = Blocked {
            host: "h".to_owned(),
            address: ip("::1"),
            kind: LocalKind::Loopback,
        };
        let outer = Outer(Box::new(blocked.clone()));
        assert_eq!(blocked_in(&outer), Some(&blocked));
        let other = Outer("no route".into());
        assert_eq!(blocked_in(&other), None);
    }

    #[test]
    fn a_body_is_read_up_to_its_cap_and_refused_past_it() {
        assert_eq!(read_capped(&b"abc"[..], 3).unwrap(), b"abc");
        assert!(matches!(
            read_capped(&b"abcd"[..], 3),
            Err(CappedRead::TooLarge)
        ));
    }
}
