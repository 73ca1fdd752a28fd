//! JSON pointers (RFC 6901), as every error message names a place in a document.

/// `base` with one more JSON pointer token, escaped per RFC 6901 (`~` → `~0`, `/` → `~1`).
pub fn join(base: &str, token: &str) -> String {
    if token.contains(['~', '/']) {
        return format!("{base}/{}", token.replace('~', "~0").replace('/', "~1"));
    }
    let mut pointer = String::with_capacity(base.len() + 1 + token.len());
    pointer.push_str(base);
    pointer.push('/');
    pointer.push_str(token);
    pointer
}

/// One JSON pointer token as the key it stands for (`~1` → `/`, then `~0` → `~`).
pub fn unescape(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

#[cfg(test)]
mod tests {
    #[test]
    fn tokens_round_trip() {
        for key in ["a/b", "c~d", "~1", "plain", ""] {
            let joined = super::join("", key);
            assert_eq!(super::unescape(&joined[1..]), key, "{joined}");
        }
    }
}
