//! The naming rules of the catalog (slugs and versions) and the HTTP destination rules.
//!
//! Slugs name folders and appear in references (`bundle/slug@version`), so the rules are
//! strict: Unicode letters (general category L*), decimal digits (Nd) and the ASCII dash, at
//! most 64 characters, case-sensitive. A version may also hold dots, but is never `.`/`..`
//! and never starts with a dot (a folder starting with a dot is hidden, and toolctl's own
//! temporary files start with one). Combining marks are not letters: write names in NFC
//! (`météo` with a precomposed `é`).

use super::error::Violation;
use regex::Regex;
use std::sync::LazyLock;
use unicode_properties::{GeneralCategory, GeneralCategoryGroup, UnicodeGeneralCategory};

/// The longest slug or version, in characters.
pub const MAX_NAME_CHARS: usize = 64;

/// Which kind of name is checked; the version also allows dots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameKind {
    Slug,
    Version,
}

impl NameKind {
    fn noun(self) -> &'static str {
        match self {
            Self::Slug => "slug",
            Self::Version => "version",
        }
    }
}

/// Check a slug or version, returning a sentence that says what is wrong and where.
pub fn check_name(kind: NameKind, name: &str) -> Result<(), String> {
    let noun = kind.noun();
    if name.is_empty() {
        return Err(format!("the {noun} is empty"));
    }
    let count = name.chars().count();
    if count > MAX_NAME_CHARS {
        return Err(format!(
            "the {noun} is {count} characters long; at most {MAX_NAME_CHARS} are allowed"
        ));
    }
    if kind == NameKind::Version && name.starts_with('.') {
        return Err(format!(
            "the {noun} '{name}' starts with '.'; it must start with a letter, digit or '-'"
        ));
    }
    for (position, c) in name.chars().enumerate() {
        let allowed = c == '-'
            || c.general_category_group() == GeneralCategoryGroup::Letter
            || c.general_category() == GeneralCategory::DecimalNumber
            || (kind == NameKind::Version && c == '.');
        if !allowed {
            let what = describe_char(c);
            let allowed_set = match kind {
                NameKind::Slug => "letters, digits and '-'",
                NameKind::Version => "letters, digits, '-' and '.'",
            };
            return Err(format!(
                "the {noun} '{}' has {what} at character {}; a {noun} holds only {allowed_set}",
                name.escape_debug(),
                position + 1
            ));
        }
    }
    Ok(())
}

/// A slug or version as a case-insensitive file system (macOS's and Windows' default)
/// compares folder names, near enough: in Unicode lower case. Two names with the same folded
/// form cannot both be folders of one folder there.
pub fn case_folded(name: &str) -> String {
    name.to_lowercase()
}

fn describe_char(c: char) -> String {
    match c {
        '_' => "an underscore".to_owned(),
        '/' | '\\' => format!("a slash ('{c}')"),
        '.' => "a dot".to_owned(),
        c if c.is_whitespace() => format!("whitespace (U+{:04X})", c as u32),
        c if c.is_control() => format!("a control character (U+{:04X})", c as u32),
        c => format!("'{c}' (U+{:04X})", c as u32),
    }
}

/// Add a violation at `pointer` when `name` breaks the rules for `kind`.
pub fn check_name_at(kind: NameKind, name: &str, pointer: &str, out: &mut Vec<Violation>) {
    if let Err(message) = check_name(kind, name) {
        out.push(Violation::new(pointer, message).rule("name"));
    }
}

/// The hosts HTTP tools may call, from `toolctl.json`'s `allowedHosts`.
///
/// An entry is a host name or IP (`api.example.com`, `127.0.0.1`, `[::1]`), optionally with a
/// port (`127.0.0.1:8080`, which then must match too), or a wildcard `*.example.com` that
/// matches any subdomain of `example.com` but not `example.com` itself. Host names compare
/// case-insensitively. There is no entry that allows everything.
#[derive(Debug, Clone, Default)]
pub struct HostPolicy {
    entries: Vec<HostEntry>,
}

#[derive(Debug, Clone)]
struct HostEntry {
    host: String,
    wildcard: bool,
    port: Option<u16>,
}

impl HostPolicy {
    /// Build the policy; an entry that is not a host is returned as an error message.
    pub fn new<'a>(entries: impl IntoIterator<Item = &'a str>) -> Result<Self, String> {
        let entries = entries
            .into_iter()
            .map(parse_host_entry)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self { entries })
    }

    /// Whether a URL's destination is allowed.
    pub fn allows(&self, url: &url::Url) -> bool {
        let Some(host) = url.host_str() else {
            return false;
        };
        let host = host.to_ascii_lowercase();
        let port = url.port_or_known_default();
        self.entries.iter().any(|entry| {
            let host_ok = if entry.wildcard {
                host.len() > entry.host.len() + 1
                    && host.ends_with(&entry.host)
                    && host.as_bytes()[host.len() - entry.host.len() - 1] == b'.'
            } else {
                host == entry.host
            };
            host_ok && entry.port.is_none_or(|p| Some(p) == port)
        })
    }
}

impl HostPolicy {
    /// Why `url` may not be called (`of`: which of the tool's URLs it is, `urlTemplate`,
    /// `auth.tokenUrl`, `url`), in the words every refusal uses, with the ports listed for its
    /// host when an entry names the host with another port (`127.0.0.1:8080` for `:9090`).
    pub fn refusal(&self, url: &url::Url, of: Option<&str>) -> String {
        let host = url.host_str().unwrap_or_default();
        let of = of.map(|of| format!(" of {of}")).unwrap_or_default();
        let lowered = host.to_ascii_lowercase();
        let ports: Vec<String> = self
            .entries
            .iter()
            .filter(|e| !e.wildcard && e.host == lowered)
            .filter_map(|e| e.port.map(|p| p.to_string()))
            .collect();
        match (ports.is_empty(), url.port_or_known_default()) {
            (false, Some(port)) => format!(
                "host '{host}'{of} is not in allowedHosts of toolctl.json with port {port}: it is listed only with port {}",
                ports.join(", ")
            ),
            _ => format!("host '{host}'{of} is not in allowedHosts of toolctl.json"),
        }
    }

    /// The IP addresses listed without a port (`127.0.0.1`, `[::1]`): a host name may lead to
    /// these even when they are this machine's (see `base::http::GuardedDns`). The resolver
    /// that asks does not know the URL's port, so an entry with a port (`127.0.0.1:8080`)
    /// allows only URLs that name the address itself: it must not let every allowed name reach
    /// every port of this machine.
    pub fn addresses(&self) -> Vec<std::net::IpAddr> {
        self.entries
            .iter()
            .filter(|e| !e.wildcard && e.port.is_none())
            .filter_map(|e| {
                e.host
                    .trim_start_matches('[')
                    .trim_end_matches(']')
                    .parse()
                    .ok()
            })
            .collect()
    }
}

fn parse_host_entry(entry: &str) -> Result<HostEntry, String> {
    let trimmed = entry.trim();
    let (wildcard, rest) = match trimmed.strip_prefix("*.") {
        Some(rest) => (true, rest),
        None => (false, trimmed),
    };
    // Let the URL parser split host and port so IPv6 and IDNA work the same as for requests.
    let url = url::Url::parse(&format!("http://{rest}/"))
        .map_err(|e| format!("allowedHosts entry '{entry}' is not a host: {e}"))?;
    let host = url
        .host_str()
        .filter(|h| !h.is_empty())
        .ok_or_else(|| format!("allowedHosts entry '{entry}' is not a host"))?;
    if trimmed == "*" {
        return Err(format!(
            "allowedHosts entry '{entry}' would allow every host, which allowedHosts never does: list each host, or '*.example.com' for the subdomains of one"
        ));
    }
    let is_domain = matches!(url.host(), Some(url::Host::Domain(_)));
    if is_domain
        && !host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_'))
    {
        return Err(format!(
            "allowedHosts entry '{entry}' is not a host name: a wildcard is only '*.' before a domain ('*.example.com'), and a name holds letters, digits, '-', '_' and '.'"
        ));
    }
    if is_domain {
        let name = host.strip_suffix('.').unwrap_or(host);
        let bad_label = name.split('.').find(|label| {
            label.is_empty() || label.len() > 63 || label.starts_with('-') || label.ends_with('-')
        });
        if let Some(label) = bad_label {
            let why = if label.is_empty() {
                "it has an empty label ('..', or a '.' first)".to_owned()
            } else {
                format!("its label '{label}' is over 63 characters or starts or ends with '-'")
            };
            return Err(format!(
                "allowedHosts entry '{entry}' is not a host name: {why}"
            ));
        }
    }
    if wildcard && is_domain && !host.trim_end_matches('.').contains('.') {
        return Err(format!(
            "allowedHosts entry '{entry}' would allow every host under a top-level domain: '*.' goes before a domain of its own ('*.example.com')"
        ));
    }
    if wildcard && is_domain {
        let name = host.trim_end_matches('.');
        if let Some(suffix) = psl::suffix(name.as_bytes())
            && suffix.is_known()
            && suffix.as_bytes() == name.as_bytes()
        {
            return Err(format!(
                "allowedHosts entry '{entry}' would allow every host under '{name}', a public suffix where anyone can register a name: '*.' goes before a domain of its own ('*.example.{name}')"
            ));
        }
    }
    if wildcard && !is_domain {
        return Err(format!(
            "allowedHosts entry '{entry}' is not a wildcard of a domain: '*.' goes before a domain name ('*.example.com'), not an IP address"
        ));
    }
    if url.path() != "/" || !url.username().is_empty() || url.query().is_some() {
        return Err(format!(
            "allowedHosts entry '{entry}' must be a bare host, optionally with :port"
        ));
    }
    Ok(HostEntry {
        host: host.to_ascii_lowercase(),
        wildcard,
        port: url.port(),
    })
}

/// Check an HTTP tool's `urlTemplate`: http(s) only, a literal host (no `${…}` before the
/// path, so no argument can ever choose where a request goes), and that host allowed.
/// Returns the parsed URL with placeholders replaced by their names.
pub fn check_url_template(template: &str, hosts: &HostPolicy) -> Result<url::Url, String> {
    let url = check_url_shape(template)?;
    if !hosts.allows(&url) {
        return Err(hosts.refusal(&url, Some("urlTemplate")));
    }
    Ok(url)
}

/// Why `template`'s host may not be called under `hosts`: `None` when it may, or when the
/// template's shape is wrong (that is [`check_url_shape`]'s to say, with the tool's rules).
pub fn host_policy_problem(template: &str, hosts: &HostPolicy) -> Option<String> {
    check_url_shape(template)
        .ok()
        .filter(|url| !hosts.allows(url))
        .map(|url| hosts.refusal(&url, Some("urlTemplate")))
}

/// [`check_url_template`] without the host policy: the scheme, a literal host, no user info.
/// Returns the scheme and authority as a URL.
pub fn check_url_shape(template: &str) -> Result<url::Url, String> {
    let lower = template.to_ascii_lowercase();
    let after_scheme = if lower.starts_with("https://") {
        8
    } else if lower.starts_with("http://") {
        7
    } else {
        return Err(format!(
            "urlTemplate '{template}' must start with http:// or https://"
        ));
    };
    let authority_end = template[after_scheme..]
        .find(['/', '?', '#'])
        .map_or(template.len(), |i| after_scheme + i);
    if template[..authority_end].contains("${") {
        return Err(format!(
            "urlTemplate '{template}' has a ${{…}} placeholder in its host; the host must be literal"
        ));
    }
    let url = url::Url::parse(&template[..authority_end])
        .map_err(|e| format!("urlTemplate '{template}' is not a URL: {e}"))?;
    if template[..authority_end].contains('@')
        || !url.username().is_empty()
        || url.password().is_some()
    {
        return Err(format!(
            "urlTemplate '{template}' carries user info before the host; put credentials in headers"
        ));
    }
    Ok(url)
}

/// A server's URL that `field` of `toolctl.json` names (no template): http or https, a host,
/// no user info (credentials go in secrets), no query or fragment.
pub fn check_server_url(field: &str, text: &str) -> Result<url::Url, String> {
    let url = url::Url::parse(text).map_err(|e| format!("{field} '{text}' is not a URL: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none_or(str::is_empty) {
        return Err(format!(
            "{field} '{text}' must be an http:// or https:// URL with a host"
        ));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(format!(
            "{field} '{text}' carries user info before the host; its token goes in a secret"
        ));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(format!(
            "{field} '{text}' has a query or fragment; give the server's base URL"
        ));
    }
    Ok(url)
}

/// `${name}`.
#[allow(
    clippy::expect_used,
    reason = "a literal pattern; a unit test compiles it"
)]
pub static PLACEHOLDER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\$\{([A-Za-z0-9_.\-]+)\}").expect("a valid regex"));

/// `name` as a header name a request can carry: RFC 9110's token (letters, digits and
/// ``!#$%&'*+-.^_`|~``), never a placeholder, which would let an argument or a secret choose
/// which header is sent.
pub fn check_header_name(name: &str) -> Result<(), String> {
    if name.contains("${") {
        return Err(format!(
            "'{name}' is not a header name: a name cannot hold a placeholder (${{…}}); put secrets and arguments in the value"
        ));
    }
    if name.is_empty() {
        return Err("'' is not a header name: a header needs a name".to_owned());
    }
    reqwest::header::HeaderName::from_bytes(name.as_bytes())
        .map(drop)
        .map_err(|_| {
            format!(
                "'{name}' is not a header name: letters, digits and !#$%&'*+-.^_`|~ only (no spaces, ':' or line breaks)"
            )
        })
}

/// The names of the `${name}` placeholders in `template`, in order.
pub fn placeholder_names(template: &str) -> impl Iterator<Item = &str> {
    PLACEHOLDER
        .captures_iter(template)
        .filter_map(|found| found.get(1).map(|name| name.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_slugs_and_versions() {
        for slug in [
            "weather",
            "météo",
            "天気",
            "a-1",
            "Weather",
            "-",
            "x".repeat(64).as_str(),
        ] {
            assert_eq!(check_name(NameKind::Slug, slug), Ok(()), "{slug}");
        }
        for version in ["v2", "v2.1", "2024.05.14", "β-3", "1..2"] {
            assert_eq!(check_name(NameKind::Version, version), Ok(()), "{version}");
        }
    }

    #[test]
    fn invalid_slugs_and_versions_say_why() {
        let long = "a".repeat(65);
        let cases: &[(NameKind, &str, &str)] = &[
            (NameKind::Slug, "a_b", "has an underscore at character 2"),
            (
                NameKind::Slug,
                "a b",
                "has whitespace (U+0020) at character 2",
            ),
            (NameKind::Slug, "a/b", "has a slash ('/') at character 2"),
            (NameKind::Slug, "..", "has a dot at character 1"),
            (NameKind::Slug, &long, "is 65 characters long; at most 64"),
            (NameKind::Slug, "", "is empty"),
            (NameKind::Slug, "a.b", "has a dot at character 2"),
            (
                NameKind::Slug,
                "a\u{7}b",
                "has a control character (U+0007)",
            ),
            (NameKind::Slug, "tool🔧", "'🔧' (U+1F527) at character 5"),
            (NameKind::Slug, "a@b", "'@' (U+0040)"),
            (NameKind::Slug, "me\u{301}teo", "(U+0301)"),
            (NameKind::Version, "..", "starts with '.'"),
            (NameKind::Version, ".hidden", "starts with '.'"),
            (NameKind::Version, "v1/2", "has a slash"),
            (NameKind::Version, "v 1", "has whitespace"),
            (NameKind::Version, "", "is empty"),
        ];
        for (kind, name, expected) in cases {
            let error = check_name(*kind, name).expect_err(name);
            assert!(error.contains(expected), "{name:?}: {error}");
        }
    }

    #[test]
    fn host_policy_matches_exact_wildcard_and_port() {
        let policy = HostPolicy::new(["api.example.com", "*.corp.test", "127.0.0.1:8080"]).unwrap();
        let allows = |u: &str| policy.allows(&url::Url::parse(u).unwrap());
        assert!(allows("https://API.example.com/x"));
        assert!(!allows("https://example.com/x"));
        assert!(allows("https://a.corp.test/"));
        assert!(!allows("https://corp.test/"));
        assert!(!allows("https://evilcorp.test/"));
        assert!(allows("http://127.0.0.1:8080/"));
        assert!(!allows("http://127.0.0.1:8081/"));
        assert!(!allows("http://api.example.com@evil.test/"));
    }

    #[test]
    fn host_entries_that_are_no_host_are_refused_with_why() {
        for (entry, why) in [
            ("*", "would allow every host"),
            ("*.*.com", "is not a host name"),
            ("a*b.com", "is not a host name"),
            ("*.127.0.0.1", "not an IP address"),
            ("*.com", "under a top-level domain"),
            ("*.co.uk", "'co.uk', a public suffix"),
            ("*.CO.UK.", "'co.uk', a public suffix"),
            ("*.github.io", "'github.io', a public suffix"),
            ("*.xn--p1ai.", "under a top-level domain"),
            ("*.s3.amazonaws.com", "public suffix"),
        ] {
            let err = HostPolicy::new([entry]).unwrap_err();
            assert!(err.contains(why), "{entry}: {err}");
        }
        for entry in [
            "*.example.com",
            "*.example.co.uk",
            "*.corp.internal",
            "co.uk",
            "my_host.internal",
            "[::1]:8080",
            "xn--mt-bja.test",
        ] {
            assert!(HostPolicy::new([entry]).is_ok(), "{entry}");
        }
    }

    #[test]
    fn only_addresses_listed_without_a_port_may_be_reached_by_name() {
        let policy =
            HostPolicy::new(["127.0.0.1:8080", "[::1]", "169.254.169.254", "*.corp.test"]).unwrap();
        let ip = |s: &str| s.parse::<std::net::IpAddr>().unwrap();
        assert_eq!(policy.addresses(), [ip("::1"), ip("169.254.169.254")]);
    }

    #[test]
    fn a_refusal_names_the_ports_its_host_is_listed_with() {
        let policy = HostPolicy::new(["127.0.0.1:8080", "127.0.0.1:8081", "api.test"]).unwrap();
        let refusal = |u: &str| policy.refusal(&url::Url::parse(u).unwrap(), Some("url"));
        assert_eq!(
            refusal("http://127.0.0.1:9090/"),
            "host '127.0.0.1' of url is not in allowedHosts of toolctl.json with port 9090: it is listed only with port 8080, 8081"
        );
        assert_eq!(
            refusal("http://other.test/"),
            "host 'other.test' of url is not in allowedHosts of toolctl.json"
        );
    }

    #[test]
    fn url_template_host_must_be_literal_and_allowed() {
        let policy = HostPolicy::new(["api.example.com"]).unwrap();
        assert!(check_url_template("https://api.example.com/v1?q=${city}", &policy).is_ok());
        assert!(check_url_template("ftp://api.example.com/", &policy).is_err());
        assert!(
            check_url_template("https://${host}/v1", &policy)
                .unwrap_err()
                .contains("literal")
        );
        assert!(
            check_url_template("https://evil.test/", &policy)
                .unwrap_err()
                .contains("allowedHosts")
        );
        assert!(check_url_template("https://api.example.com@evil.test/", &policy).is_err());
    }
}
