//! Redaction of secrets in what the proxy writes itself: structured errors and its logs.
//! Upstream error texts often carry tokens, passwords in URLs or private keys; the agent and
//! the log shipper need the failure, not the secret. Pure.

use std::borrow::Cow;

use regex::{Regex, RegexBuilder};
use serde::Deserialize;
use serde_json::Value;

/// What replaces a secret.
pub const MASK: &str = "[REDACTED]";

/// The shortest secret found in an upstream's text that is masked again wherever the proxy
/// quotes it ([`Redactor::secrets_in`]): shorter ones would mask common words.
const MIN_QUOTED_SECRET: usize = 6;

/// The shipped patterns: (name, regex). Where a pattern has a group named `secret`, only that
/// group is masked, so the reader still sees which key or scheme it was.
pub const DEFAULT_PATTERNS: &[(&str, &str)] = &[
    (
        "private-key",
        // To its END line, or to the end of the text when it was cut off.
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?s:.*?)(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\z)",
    ),
    (
        "bearer",
        r"(?i)(?-u:\b)bearer\s+(?P<secret>[A-Za-z0-9._~+/=-]{8,})",
    ),
    (
        "key-value",
        // A key, possibly with a prefix (`DB_PASSWORD`, `x-api-key`, `dbPassword`, `--token`),
        // then `:` or `=`. Not after `/` or `.`: `/etc/passwd: ...` is a path, not a key. A
        // quoted value goes to its closing quote (a passphrase has spaces).
        r#"(?i)(?:^|[^/.A-Za-z0-9_])[a-z0-9_-]*?(?:api[_-]?key|apikey|access[_-]?token|refresh[_-]?token|auth[_-]?token|token|secret|client[_-]?secret|password|passwd|pwd)["']?\s*[:=]\s*(?:"(?P<secret>[^"]+)"|'(?P<secret_sq>[^']+)'|(?P<secret_bare>[^\s"'&,;}]+))"#,
    ),
    (
        "authorization-header",
        r#"(?i)(?-u:\b)authorization\s*:\s*(?:basic|bearer|token|digest)\s+(?P<secret>[^\s"',;]+)"#,
    ),
    (
        "url-credentials",
        // The user may be empty (`redis://:secret@host`); the password runs to the last `@`
        // before the host (`user:p@ss@host`).
        r"(?i)(?-u:\b)[a-z][a-z0-9+.-]*://[^/\s:@]*:(?P<secret>[^\s/]+)@",
    ),
    (
        "aws-access-key",
        r"(?-u:\b)(?:AKIA|ASIA)[A-Z0-9]{16}(?-u:\b)",
    ),
    (
        "aws-secret-key",
        r#"(?i)aws_?secret_?access_?key["']?\s*[:=]\s*["']?(?P<secret>[A-Za-z0-9/+=]{40})"#,
    ),
    (
        "github-token",
        // Also after `_` (`x_ghp_...`), where there is no word boundary.
        r"(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})",
    ),
    ("slack-token", r"(?-u:\b)xox[abposr]-[A-Za-z0-9-]{10,}"),
    (
        "openai-style-key",
        r"(?-u:\b)sk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}",
    ),
    (
        "stripe-key",
        r"(?-u:\b)[rsp]k_(?:live|test)_[A-Za-z0-9]{10,}",
    ),
    (
        "jwt",
        r"(?-u:\b)eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}",
    ),
];

/// `[redact]` in the config file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RedactConfig {
    /// Use the shipped patterns.
    pub defaults: bool,
    /// Patterns of your own (regexes; a group named `secret` limits what is masked).
    pub patterns: Vec<String>,
    /// What `attempted_query` carries: the full arguments, the tool name only, or nothing.
    pub attempted_query: QueryDetail,
}

impl Default for RedactConfig {
    fn default() -> Self {
        RedactConfig {
            defaults: true,
            patterns: Vec::new(),
            attempted_query: QueryDetail::Full,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum QueryDetail {
    #[default]
    Full,
    Tool,
    None,
}

/// The compiled patterns.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    patterns: Vec<Regex>,
    /// All patterns at once: most texts hold no secret, and one scan tells.
    any: regex::RegexSet,
    pub attempted_query: QueryDetail,
}

impl Redactor {
    pub fn new(config: &RedactConfig) -> Result<Redactor, String> {
        let shipped = DEFAULT_PATTERNS
            .iter()
            .map(|(_, p)| *p)
            .filter(|_| config.defaults);
        let patterns = shipped
            .chain(config.patterns.iter().map(String::as_str))
            .map(|p| {
                RegexBuilder::new(p)
                    .size_limit(1 << 20)
                    .build()
                    .map_err(|e| format!("invalid redaction pattern '{p}': {e}"))
            })
            .collect::<Result<Vec<Regex>, _>>()?;
        let any = regex::RegexSet::new(patterns.iter().map(Regex::as_str))
            .map_err(|e| format!("the redaction patterns do not compile together: {e}"))?;
        Ok(Redactor {
            patterns,
            any,
            attempted_query: config.attempted_query,
        })
    }

    /// The shipped patterns, full attempted queries.
    pub fn defaults() -> Redactor {
        Redactor::new(&RedactConfig::default()).expect("the shipped patterns compile")
    }

    /// `text` with every secret masked.
    pub fn text<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(text);
        let any = &self.any;
        if !any.is_match(text) {
            return out;
        }
        // Which patterns match the text as it stands: the set tells in one scan, where asking
        // each pattern in turn cost a search apiece. Masking changes the text, so it is asked
        // again after each pattern that masked something.
        let mut hits = any.matches(text);
        for (i, pattern) in self.patterns.iter().enumerate() {
            if !hits.matched(i) {
                continue;
            }
            let masked = pattern.replace_all(&out, Mask).into_owned();
            hits = any.matches(&masked);
            out = Cow::Owned(masked);
        }
        out
    }

    /// The secrets the patterns find in `text` (what each match masks). Found in an upstream's
    /// text, a secret is masked wherever the proxy quotes it again: a rule's message fills its
    /// template from a capture, without the context (`token: '...'`) that marked it.
    pub fn secrets_in(&self, text: &str) -> Vec<String> {
        let hits = self.any.matches(text);
        let mut found = Vec::new();
        for (i, pattern) in self.patterns.iter().enumerate() {
            if !hits.matched(i) {
                continue;
            }
            for c in pattern.captures_iter(text) {
                let secret = secret_group(&c).or_else(|| c.get(0));
                // Not a word or two that happen to follow a key: only what could be a secret.
                if let Some(s) = secret.filter(|s| s.len() >= MIN_QUOTED_SECRET) {
                    found.push(s.as_str().to_owned());
                }
            }
        }
        found
    }

    /// `text` with every secret masked, `known` ones included wherever they are.
    pub fn text_knowing<'a>(&self, text: &'a str, known: &[String]) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(text);
        for secret in known {
            if out.contains(secret.as_str()) {
                out = Cow::Owned(out.replace(secret.as_str(), MASK));
            }
        }
        if let Cow::Owned(masked) = self.text(&out) {
            return Cow::Owned(masked);
        }
        out
    }

    /// Masks secrets in every string of a JSON value, keys included.
    pub fn value(&self, value: &mut Value) {
        match value {
            Value::String(s) => {
                if let Cow::Owned(masked) = self.text(s) {
                    *s = masked;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.value(v)),
            Value::Object(map) => {
                // Keys are text too (`{"ghp_...": "revoked"}`).
                if map.keys().any(|k| matches!(self.text(k), Cow::Owned(_))) {
                    *map = std::mem::take(map)
                        .into_iter()
                        .map(|(k, v)| (self.text(&k).into_owned(), v))
                        .collect();
                }
                for (key, v) in map.iter_mut() {
                    // A value under a key that names a secret is masked whole, whatever it is.
                    if names_a_secret(key) && !v.is_null() && self.active() {
                        *v = Value::String(MASK.to_owned());
                    } else {
                        self.value(v);
                    }
                }
            }
            _ => {}
        }
    }

    fn active(&self) -> bool {
        !self.patterns.is_empty()
    }
}

/// Replaces a match with [`MASK`]: only its secret group where it has one, so the reader still
/// sees which key or scheme it was.
struct Mask;

/// The part of a match that is the secret: the group named `secret`, or, in a shipped pattern
/// with alternatives, `secret_sq` or `secret_bare` (a name is given once per pattern).
fn secret_group<'t>(c: &regex::Captures<'t>) -> Option<regex::Match<'t>> {
    ["secret", "secret_sq", "secret_bare"]
        .iter()
        .find_map(|name| c.name(name))
}

impl regex::Replacer for Mask {
    fn replace_append(&mut self, c: &regex::Captures<'_>, dst: &mut String) {
        let whole = c.get(0).expect("group 0");
        let secret = secret_group(c);
        match secret {
            Some(secret) => {
                dst.push_str(&whole.as_str()[..secret.start() - whole.start()]);
                dst.push_str(MASK);
                dst.push_str(&whole.as_str()[secret.end() - whole.start()..]);
            }
            None => dst.push_str(MASK),
        }
    }
}

/// Whether a JSON key names a secret, judged by its words (`db_password`, `apiKey`, `x-auth-token`)
/// so that `max_tokens`, `tokenizer` or `nextPageToken` are left alone. Runs for every key of
/// every attempted query, so it allocates nothing.
fn names_a_secret(key: &str) -> bool {
    let mut before = Word::default();
    let mut word = Word::default();
    let mut chars = key.chars().peekable();
    let mut previous: Option<char> = None;
    while let Some(c) = chars.next() {
        let next = chars.peek().copied();
        // Words split at anything not a letter or digit, at a lower-to-upper step (`apiKey`),
        // at the last capital of an acronym (`DBPassword`, `APIToken`), and between letters
        // and digits (`password1`, `oauth2Token`).
        let boundary = !c.is_alphanumeric()
            || previous.is_some_and(|p| {
                (c.is_uppercase() && (p.is_lowercase() || p.is_numeric()))
                    || (c.is_uppercase()
                        && p.is_uppercase()
                        && next.is_some_and(char::is_lowercase))
                    || (p.is_alphanumeric() && p.is_numeric() != c.is_numeric())
            });
        if boundary && !word.is_empty() {
            if word.is_secret_after(&before) {
                return true;
            }
            before = std::mem::take(&mut word);
        }
        if c.is_alphanumeric() {
            c.to_lowercase().for_each(|l| word.push(l));
        }
        previous = Some(c);
    }
    !word.is_empty() && word.is_secret_after(&before)
}

/// A lowercase word of a key, kept only as far as it could be one of the words judged (all
/// short and ASCII); a longer or non-ASCII word is "some other word".
#[derive(Default)]
struct Word {
    bytes: [u8; 16],
    len: usize,
    other: bool,
}

impl Word {
    fn push(&mut self, c: char) {
        if c.is_ascii() && self.len < self.bytes.len() {
            self.bytes[self.len] = c as u8;
            self.len += 1;
        } else {
            self.other = true;
        }
    }

    fn is_empty(&self) -> bool {
        self.len == 0 && !self.other
    }

    fn as_str(&self) -> &str {
        if self.other {
            return "";
        }
        std::str::from_utf8(&self.bytes[..self.len]).expect("ASCII")
    }

    fn is_secret_after(&self, before: &Word) -> bool {
        let before = (!before.is_empty()).then(|| before.as_str());
        match self.as_str() {
            "password" | "passwd" | "pwd" | "secret" | "authorization" | "credentials"
            | "apikey" | "passphrase" => true,
            "key" => matches!(before, Some("api" | "private" | "secret" | "access")),
            // A token is a secret; a page token is a cursor.
            "token" => !matches!(
                before,
                Some("page" | "next" | "continuation" | "sync" | "cursor")
            ),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn r(text: &str) -> String {
        Redactor::defaults().text(text).into_owned()
    }

    #[test]
    fn masks_the_common_secrets() {
        assert_eq!(
            r("401: Authorization: Bearer abc.def.ghi123"),
            "401: Authorization: Bearer [REDACTED]"
        );
        assert_eq!(
            r("GET /x?api_key=s3cr3tvalue&q=1 failed"),
            "GET /x?api_key=[REDACTED]&q=1 failed"
        );
        assert_eq!(
            r("password: hunter22 rejected"),
            "password: [REDACTED] rejected"
        );
        assert_eq!(
            r("connect postgres://admin:pa55w0rd@db.internal:5432/app: refused"),
            "connect postgres://admin:[REDACTED]@db.internal:5432/app: refused"
        );
        assert_eq!(
            r("key AKIAIOSFODNN7EXAMPLE is invalid"),
            "key [REDACTED] is invalid"
        );
        assert_eq!(
            r("Bad credentials for ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
            "Bad credentials for [REDACTED]"
        );
        assert_eq!(
            r("invalid key sk-proj-abcdefghijklmnopqrstuvwx"),
            "invalid key [REDACTED]"
        );
        assert_eq!(
            r("bad pem -----BEGIN RSA PRIVATE KEY-----\nMIIE\nabc\n-----END RSA PRIVATE KEY----- end"),
            "bad pem [REDACTED] end"
        );
    }

    #[test]
    fn masks_the_shapes_a_review_found_missing() {
        for (text, want) in [
            (
                "connect redis://:s3cretpass@cache:6379",
                "connect redis://:[REDACTED]@cache:6379",
            ),
            (
                "fetch https://user:p@ss@host/x",
                "fetch https://user:[REDACTED]@host/x",
            ),
            ("dbPassword=hunter2xyz", "dbPassword=[REDACTED]"),
            ("run --password=hunter2xyz", "run --password=[REDACTED]"),
            (
                "password='correct horse battery staple' rejected",
                "password='[REDACTED]' rejected",
            ),
            (
                r#"{"password": "correct horse"}"#,
                r#"{"password": "[REDACTED]"}"#,
            ),
            (
                "bad -----BEGIN PRIVATE KEY-----\nMIIEvQIBADAN",
                "bad [REDACTED]",
            ),
            (
                "-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBF\n-----END PGP PRIVATE KEY BLOCK----- x",
                "[REDACTED] x",
            ),
            (
                "x_ghp_abcdefghijklmnopqrstuvwxyz0123456789",
                "x_[REDACTED]",
            ),
        ] {
            assert_eq!(r(text), want, "{text}");
        }
    }

    #[test]
    fn a_secret_found_in_context_is_masked_wherever_it_is_quoted() {
        let redactor = Redactor::defaults();
        let upstream = "No such token: 'tok_1N3T00LkdIwHu7ixt44h1F8k'";
        let known = redactor.secrets_in(upstream);
        assert_eq!(known, ["tok_1N3T00LkdIwHu7ixt44h1F8k"]);
        assert_eq!(
            redactor.text_knowing(
                "No token with id 'tok_1N3T00LkdIwHu7ixt44h1F8k' exists.",
                &known
            ),
            "No token with id '[REDACTED]' exists."
        );
    }

    #[test]
    fn keys_of_values_are_masked_too() {
        let mut data = json!({"ghp_abcdefghijklmnopqrstuvwxyz0123456789": "revoked", "n": 1});
        Redactor::defaults().value(&mut data);
        assert_eq!(data, json!({"[REDACTED]": "revoked", "n": 1}));
    }

    #[test]
    fn non_ascii_text_keeps_the_fast_path() {
        // Unicode word boundaries would leave the DFA for every non-ASCII text: the shipped
        // patterns use ASCII ones.
        for (_, pattern) in DEFAULT_PATTERNS {
            assert!(
                !pattern.contains(r"\b") || pattern.contains(r"(?-u:\b)"),
                "{pattern}"
            );
            assert!(!pattern.contains(r"\w"), "{pattern}");
        }
        assert_eq!(r("é token=abcdef123 é"), "é token=[REDACTED] é");
    }

    #[test]
    fn leaves_ordinary_text_alone() {
        for text in [
            "ENOENT: no such file or directory, open '/tmp/token-list.txt'",
            "Invalid time format. Expected HH:MM",
            "429 Too Many Requests; Retry-After: 120",
            "fetch failed",
            "Error processing file file:///etc/passwd: Unsupported URL protocol for file:///etc/passwd.",
            "open /home/u/.config/token: permission denied",
        ] {
            assert!(
                matches!(Redactor::defaults().text(text), Cow::Borrowed(_)),
                "{text}"
            );
        }
    }

    #[test]
    fn masks_prefixed_keys_headers_and_more_token_kinds() {
        assert_eq!(
            r("env DB_PASSWORD=hunter2 missing"),
            "env DB_PASSWORD=[REDACTED] missing"
        );
        assert_eq!(
            r("GITHUB_TOKEN=abc123def456 rejected"),
            "GITHUB_TOKEN=[REDACTED] rejected"
        );
        assert_eq!(
            r("header x-api-key: abcdef123456 invalid"),
            "header x-api-key: [REDACTED] invalid"
        );
        assert_eq!(
            r("Authorization: Basic dXNlcjpwYXNz"),
            "Authorization: Basic [REDACTED]"
        );
        assert_eq!(
            r("No such key sk_live_abcdefghijklmnop"),
            "No such key [REDACTED]"
        );
        assert_eq!(
            r("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abcdefghij expired"),
            "jwt [REDACTED] expired"
        );
    }

    #[test]
    fn secret_keys_are_judged_by_their_words() {
        for key in [
            "password",
            "db_password",
            "apiKey",
            "api_key",
            "x-auth-token",
            "accessToken",
            "client_secret",
            "Authorization",
            "api_\u{212A}ey",
            "DBPassword",
            "APIToken",
            "AWSSecretKey",
            "password1",
            "oauth2Token",
        ] {
            assert!(names_a_secret(key), "{key}");
        }
        for key in [
            "max_tokens",
            "tokenizer",
            "nextPageToken",
            "page_token",
            "secretary_name",
            "keyword",
            "monkey",
            "passwordé",
            "averylongpasswordhintfield",
        ] {
            assert!(!names_a_secret(key), "{key}");
        }
    }

    #[test]
    fn masks_json_strings_and_secret_keys() {
        let mut v = json!({"query": "x", "password": 1234, "nested": ["Bearer abcdefghijk"]});
        Redactor::defaults().value(&mut v);
        assert_eq!(
            v,
            json!({"query": "x", "password": "[REDACTED]", "nested": ["Bearer [REDACTED]"]})
        );
    }

    #[test]
    fn own_patterns_and_no_defaults() {
        let config = RedactConfig {
            defaults: false,
            patterns: vec![r"internal-host-\d+".into()],
            attempted_query: QueryDetail::Tool,
        };
        let redactor = Redactor::new(&config).unwrap();
        assert_eq!(
            redactor.text("internal-host-7 said Bearer abcdefghijk"),
            "[REDACTED] said Bearer abcdefghijk"
        );
        let bad = RedactConfig {
            patterns: vec!["(".into()],
            ..RedactConfig::default()
        };
        assert!(Redactor::new(&bad)
            .unwrap_err()
            .contains("invalid redaction pattern '('"));
    }

    /// Every pattern asked in turn, as first written: the reference for `Redactor::text`.
    fn reference(r: &Redactor, text: &str) -> String {
        let mut out = text.to_owned();
        for pattern in &r.patterns {
            if pattern.is_match(&out) {
                out = pattern.replace_all(&out, Mask).into_owned();
            }
        }
        out
    }

    #[test]
    fn asking_the_set_masks_as_asking_each_pattern() {
        let own = Redactor::new(&RedactConfig {
            patterns: vec!["REDACTED".into(), r"^x+$".into()],
            ..RedactConfig::default()
        })
        .unwrap();
        for r in [Redactor::defaults(), own] {
            for text in [
                "401 Unauthorized (Authorization: Bearer abcdefghijklmnop1234)",
                "token=abc password=def api_key: ghi https://u:p4ss@host/ AKIAIOSFODNN7EXAMPLE",
                "x",
                "xxx",
                "nothing to see",
                "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abcdefghij, Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abcdefghij",
            ] {
                assert_eq!(r.text(text), reference(&r, text), "{text}");
            }
        }
    }
}
