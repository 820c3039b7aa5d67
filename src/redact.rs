//! Redaction of secrets in what the proxy writes itself: structured errors and its logs.
//! Upstream error texts often carry tokens, passwords in URLs or private keys; the agent and
//! the log shipper need the failure, not the secret. Pure.

use std::borrow::Cow;
use std::sync::{Arc, OnceLock};

use regex::{Regex, RegexBuilder};
use serde::Deserialize;
use serde_json::Value;

use crate::diagnostic::head;

mod patterns;

pub use patterns::DEFAULT_PATTERNS;

/// What replaces a secret.
pub const MASK: &str = "[REDACTED]";

/// The shortest secret found in an upstream's text that is masked again wherever the proxy
/// quotes it ([`Redactor::secrets_in`]): shorter ones would mask common words.
const MIN_QUOTED_SECRET: usize = 6;

/// How much of an argument's string is searched for secrets to mask elsewhere: a secret sits
/// near the key that names it, and what the proxy repeats of a long argument is its head.
const ARGUMENT_SCAN_BYTES: usize = 4096;
/// How much of a call's arguments is searched for secrets in all: what is quoted of them is
/// at most 8 KiB, and each string masked again by itself where it is quoted.
const ARGUMENTS_SCAN_BYTES: usize = 64 << 10;
/// What stands between two strings of the arguments searched together: a line each, so that
/// a command and its arguments in members of their own (`{"command": "curl", "args": ["-u",
/// "bob:x"]}`) are read as the one command line; a key word ends with its line
/// (`{"q": "reset token", "user": "alice12345"}` shows no token).
const STRINGS_APART: &str = "\n";

/// `text` as the patterns read it: without ANSI colour codes, and with quotes that came escaped
/// (HTML's `&quot;`, a JSON `\u0022` quoted once more) as quotes, so that
/// `{&quot;password&quot;:&quot;x&quot;}` is the `{"password":"x"}` it stands for. Borrowed when
/// there is nothing to undo. What is masked is this reading of the text.
fn readable(text: &str) -> Cow<'_, str> {
    match without_colours(text) {
        Cow::Borrowed(text) => with_plain_quotes(text),
        Cow::Owned(text) => Cow::Owned(with_plain_quotes(&text).into_owned()),
    }
}

/// The escapes of `"` and `'` that error texts carry, and what they stand for.
const QUOTE_ESCAPES: &[(&str, char)] = &[
    ("&quot;", '"'),
    ("&#34;", '"'),
    ("&#x22;", '"'),
    ("\\u0022", '"'),
    ("&apos;", '\''),
    ("&#39;", '\''),
    ("&#x27;", '\''),
    ("\\u0027", '\''),
];

/// `text` with [`QUOTE_ESCAPES`] undone (case-insensitively); borrowed when it has none.
fn with_plain_quotes(text: &str) -> Cow<'_, str> {
    let escape_at = |s: &str| {
        QUOTE_ESCAPES.iter().find_map(|&(escape, quote)| {
            let head = s.get(..escape.len())?;
            head.eq_ignore_ascii_case(escape)
                .then_some((escape.len(), quote))
        })
    };
    let mut plain = String::new();
    let mut from = 0;
    for (at, _) in text.match_indices(['&', '\\']) {
        let Some((len, quote)) = escape_at(&text[at..]).filter(|_| at >= from) else {
            continue;
        };
        plain.push_str(&text[from..at]);
        plain.push(quote);
        from = at + len;
    }
    if from == 0 {
        return Cow::Borrowed(text);
    }
    plain.push_str(&text[from..]);
    Cow::Owned(plain)
}

/// `text` without its ANSI colour and style codes (`ESC [ ... m`); borrowed when it has none.
fn without_colours(text: &str) -> Cow<'_, str> {
    if !text.contains('\x1b') {
        return Cow::Borrowed(text);
    }
    let mut plain = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("\x1b[") {
        plain.push_str(&rest[..at]);
        let code = &rest[at + 2..];
        let end = code.find(|c: char| !(c.is_ascii_digit() || c == ';'));
        rest = match end {
            Some(i) if code[i..].starts_with('m') => &code[i + 1..],
            // Not a colour code: kept as it is.
            _ => {
                plain.push_str("\x1b[");
                code
            }
        };
    }
    plain.push_str(rest);
    Cow::Owned(plain)
}

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

/// A pattern, compiled when it first finds something: most never do, and each would cost
/// start-up time and memory.
#[derive(Debug, Clone)]
struct Pattern {
    text: String,
    compiled: OnceLock<Regex>,
}

impl Pattern {
    fn get(&self) -> &Regex {
        self.compiled
            .get_or_init(|| compile(&self.text).expect("checked when the redactor was made"))
    }
}

fn compile(pattern: &str) -> Result<Regex, regex::Error> {
    RegexBuilder::new(pattern).size_limit(1 << 20).build()
}

/// The compiled patterns.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    /// Shared by the clones (the settings', each rewriter's), which then compile each once.
    patterns: Arc<[Pattern]>,
    /// How many of `patterns`, first, are the shipped ones.
    shipped: usize,
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
        // The shipped patterns compile (a test makes sure); yours are checked now.
        let shipped = shipped.map(|p| {
            Ok(Pattern {
                text: p.to_owned(),
                compiled: OnceLock::new(),
            })
        });
        let yours = config.patterns.iter().map(|p| {
            let regex = compile(p).map_err(|e| format!("invalid redaction pattern '{p}': {e}"))?;
            // Matching nothing at all, or nothing beside something (`\b`, `x?`).
            let can_be_empty = regex_automata::util::syntax::parse(p)
                .map_or(true, |hir| hir.properties().minimum_len() == Some(0));
            if can_be_empty {
                return Err(format!(
                    "redaction pattern '{p}' can match an empty text (as `\\b` or `x?` do): it \
                     would mask between characters"
                ));
            }
            Ok(Pattern {
                text: p.clone(),
                compiled: OnceLock::from(regex),
            })
        });
        let patterns = shipped
            .chain(yours)
            .collect::<Result<Arc<[Pattern]>, String>>()?;
        let any = regex::RegexSet::new(patterns.iter().map(|p| &p.text))
            .map_err(|e| format!("the redaction patterns do not compile together: {e}"))?;
        Ok(Redactor {
            patterns,
            shipped: if config.defaults {
                DEFAULT_PATTERNS.len()
            } else {
                0
            },
            any,
            attempted_query: config.attempted_query,
        })
    }

    /// The shipped patterns, full attempted queries.
    pub fn defaults() -> Redactor {
        Redactor::new(&RedactConfig::default()).expect("the shipped patterns compile")
    }

    /// Whether any pattern finds something in `text`.
    pub fn finds_any(&self, text: &str) -> bool {
        self.any.is_match(&readable(text))
    }

    /// `text` with every secret masked. Colour codes hide secrets from the patterns, or make
    /// them mask the code instead (`\x1b[2mapi_key\x1b[0m=\x1b[35mKEY`, `password:
    /// \x1b[32m'x'`, as colourful loggers and inspectors print): a coloured text is judged and
    /// masked without its colours, which it loses only when it shows a secret.
    pub fn text<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let any = &self.any;
        let plain = readable(text);
        if !any.is_match(&plain) {
            return Cow::Borrowed(text);
        }
        // Which patterns match the text as it stands: the set tells in one scan, where asking
        // each pattern in turn cost a search apiece. Masking changes the text, so it is asked
        // again after each pattern that masked something.
        let mut hits = any.matches(&plain);
        let mut out = plain;
        for (i, pattern) in self.patterns.iter().enumerate() {
            if !hits.matched(i) {
                continue;
            }
            let masked = pattern.get().replace_all(&out, self.mask(i)).into_owned();
            hits = any.matches(&masked);
            out = Cow::Owned(masked);
        }
        out
    }

    /// The secrets the patterns find in `text` (what each match masks). Found in an upstream's
    /// text, a secret is masked wherever the proxy quotes it again: a rule's message fills its
    /// template from a capture, without the context (`token: '...'`) that marked it.
    pub fn secrets_in(&self, text: &str) -> Vec<String> {
        let text = &*readable(text);
        let hits = self.any.matches(text);
        let mut found = Vec::new();
        for (i, pattern) in self.patterns.iter().enumerate() {
            if !hits.matched(i) {
                continue;
            }
            for c in pattern.get().captures_iter(text) {
                let secret = self.mask(i).secret_of(&c).map(|(_, secret)| secret);
                // Not a word or two that happen to follow a key (`POSTGRES_PASSWORD=password`,
                // `api_key=api_key`): only what could be a secret, masked wherever it is.
                let word = |s: &str| s.bytes().all(|b| b.is_ascii_lowercase() || b == b'_');
                let carried = secret.filter(|s| s.len() >= MIN_QUOTED_SECRET && !word(s.as_str()));
                if let Some(s) = carried {
                    found.push(s.as_str().to_owned());
                }
            }
        }
        found
    }

    /// The secrets a JSON value shows: what the patterns find in its strings, and the strings a
    /// secret's key holds (`{"password": "x"}`). Found in a call's arguments, they are masked
    /// wherever the proxy quotes them (the same password as another argument's value).
    pub fn secrets_in_value(&self, value: &Value) -> Vec<String> {
        let mut found = Vec::new();
        // With no pattern at all (`defaults = false` and none of yours), nothing is masked.
        if !self.active() {
            return found;
        }
        // The strings are searched together, one scan for most calls, which show no secret.
        let mut text = String::new();
        collect_strings(value, &mut text, &mut found);
        if self.finds_any(&text) {
            found.extend(self.secrets_in(&text));
        }
        found
    }

    /// [`Redactor::value`], `known` secrets masked in every string too.
    pub fn value_knowing(&self, value: &mut Value, known: &[String]) {
        if !known.is_empty() && self.active() {
            mask_known(value, known);
        }
        self.value(value);
    }

    /// `text` with every secret masked, `known` ones included wherever they are.
    pub fn text_knowing<'a>(&self, text: &'a str, known: &[String]) -> Cow<'a, str> {
        if !self.active() {
            return Cow::Borrowed(text);
        }
        let out = without_known(text, known);
        if let Cow::Owned(masked) = self.text(&out) {
            return Cow::Owned(masked);
        }
        out
    }

    /// Masks secrets in every string of a JSON value, keys included.
    pub fn value(&self, value: &mut Value) {
        // With no pattern at all (`defaults = false` and none of yours), nothing is masked.
        if !self.active() {
            return;
        }
        match value {
            Value::String(s) => {
                if let Cow::Owned(masked) = self.text(s) {
                    *s = masked;
                }
            }
            Value::Array(items) => {
                // A header as a pair (`["X-Api-Key", "x"]`, as fetch and undici list them);
                // named as headers are, so that a list of two field names stays.
                if let [Value::String(name), value @ Value::String(_)] = items.as_mut_slice() {
                    let header = name.contains('-') || name.starts_with(char::is_uppercase);
                    if header && key_secrecy(name) == Secrecy::Strong {
                        *value = Value::String(MASK.to_owned());
                    }
                }
                // A command line as a list (`["--password", "x"]`): a secret's flag, its value
                // (the flags found first: `["--token", "--password", "x"]` masks "x").
                let flags: Vec<Secrecy> = items
                    .iter()
                    .map(|v| v.as_str().map_or(Secrecy::None, flag_secrecy))
                    .collect();
                for at in 1..items.len() {
                    let hidden = flags[at] == Secrecy::None
                        && items[at].as_str().is_some_and(|s| flags[at - 1].hides(s));
                    if hidden {
                        items[at] = Value::String(MASK.to_owned());
                    }
                }
                items.iter_mut().for_each(|v| self.value(v));
            }
            Value::Object(map) => {
                // Keys are text too (`{"ghp_...": "revoked"}`).
                if map.keys().any(|k| matches!(self.text(k), Cow::Owned(_))) {
                    *map = std::mem::take(map)
                        .into_iter()
                        .map(|(k, v)| (self.text(&k).into_owned(), v))
                        .collect();
                }
                // A variable as a name and its value (`{"name": "DB_PASSWORD", "value": "x"}`,
                // as Kubernetes and ECS list them), a field's value a validator echoes beside
                // its name (express-validator's `path` and `value`, Spring's `field` and
                // `rejectedValue`, pydantic's `loc` and `input`).
                let secret_name = |name: &Value| {
                    name.as_str()
                        .is_some_and(|name| key_secrecy(name) == Secrecy::Strong)
                };
                let named_secret = NAME_KEYS
                    .iter()
                    .filter_map(|k| map.get(*k))
                    .any(secret_name)
                    || map
                        .get("loc")
                        .and_then(Value::as_array)
                        .and_then(|loc| loc.last())
                        .is_some_and(secret_name);
                if named_secret {
                    for key in VALUE_KEYS {
                        if let Some(value) = map.get_mut(*key).filter(|v| v.is_string()) {
                            *value = Value::String(MASK.to_owned());
                        }
                    }
                }
                for (key, v) in map.iter_mut() {
                    let masked = match key_secrecy(key) {
                        // Whatever it holds.
                        Secrecy::Strong => !v.is_null(),
                        // Its text as far as it hides something; a count, a flag or what it
                        // holds inside stay.
                        secrecy => v.as_str().is_some_and(|s| secrecy.hides(s)),
                    };
                    if masked {
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

    /// How the `i`-th pattern masks: a shipped one spares page cursors and plain words (a key
    /// of your own pattern means what it says).
    fn mask(&self, i: usize) -> Mask {
        Mask {
            spare_plain: i < self.shipped,
        }
    }
}

/// The keys that name the member beside them whose value is a secret: [`VALUE_KEYS`].
const NAME_KEYS: &[&str] = &[
    "name",
    "key",
    "field",
    "path",
    "param",
    "parameter",
    "property",
];
const VALUE_KEYS: &[&str] = &["value", "input", "rejectedValue"];

/// How a command-line flag names a secret, judged as a JSON key is (`--password`, `-api-key`,
/// `--db-token`, `--passphrase`; `--openai-key` and `--pat` as far as the value is shaped
/// like a secret); skopeo's `--creds` too. Not a flag: no secrecy.
fn flag_secrecy(word: &str) -> Secrecy {
    let Some(name) = word.strip_prefix('-') else {
        return Secrecy::None;
    };
    let name = name.strip_prefix('-').unwrap_or(name);
    if ["creds", "src-creds", "dest-creds"].contains(&name) {
        return Secrecy::Strong;
    }
    key_secrecy(name)
}

/// The strings of `value` (each one's head, [`ARGUMENTS_SCAN_BYTES`] of them in all) into
/// `text`, apart; the strings a secret's key holds into `found`.
fn collect_strings(value: &Value, text: &mut String, found: &mut Vec<String>) {
    if text.len() >= ARGUMENTS_SCAN_BYTES {
        return;
    }
    match value {
        Value::String(s) => {
            text.push_str(head(s, ARGUMENT_SCAN_BYTES));
            text.push_str(STRINGS_APART);
        }
        // A command line as a list, read as a shell prints it: `-p x` after `docker login`.
        Value::Array(items) if items.len() > 1 && items.iter().all(Value::is_string) => {
            let words = items.iter().filter_map(Value::as_str);
            for (i, word) in words.enumerate() {
                if i > 0 {
                    text.push(' ');
                }
                text.push_str(head(word, ARGUMENT_SCAN_BYTES));
            }
            text.push_str(STRINGS_APART);
        }
        Value::Array(items) => items.iter().for_each(|v| collect_strings(v, text, found)),
        Value::Object(map) => {
            for (key, v) in map {
                // A secret's key: its value is masked wherever it is quoted again, if it
                // could be one (a weak key's value shaped like a secret: `"pass": "ps7Xk2"`).
                let secrecy = key_secrecy(key);
                let carried = v.as_str().filter(|s| {
                    s.len() >= MIN_QUOTED_SECRET
                        && secrecy.hides(s)
                        && (secrecy == Secrecy::Strong || is_secret_shaped(s))
                });
                match carried {
                    Some(s) => found.push(s.to_owned()),
                    None if secrecy == Secrecy::Strong && v.is_string() => {}
                    None => collect_strings(v, text, found),
                }
            }
        }
        _ => {}
    }
}

/// `text` with the `known` secrets in it masked.
fn without_known<'a>(text: &'a str, known: &[String]) -> Cow<'a, str> {
    let mut out = Cow::Borrowed(text);
    for secret in known {
        if out.contains(secret.as_str()) {
            out = Cow::Owned(out.replace(secret.as_str(), MASK));
        }
    }
    out
}

/// Every string of `value` with the `known` secrets in it masked.
fn mask_known(value: &mut Value, known: &[String]) {
    match value {
        Value::String(s) => {
            if let Cow::Owned(masked) = without_known(s, known) {
                *s = masked;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| mask_known(v, known)),
        Value::Object(map) => map.values_mut().for_each(|v| mask_known(v, known)),
        _ => {}
    }
}

/// Replaces a match with [`MASK`]: only its secret group where it has one, so the reader still
/// sees which key or scheme it was; a shipped pattern leaves a page cursor's value, and a plain
/// value ([`is_plain_value`]), as they are.
struct Mask {
    spare_plain: bool,
}

/// The part of a match that is the secret: the group named `secret`, or, in a shipped pattern
/// with alternatives, one of the others (a name is given once per pattern). `secret_mixed` and
/// `secret_tight` are secrets only where they are shaped like one ([`is_secret_shaped`]).
fn secret_group<'t>(c: &regex::Captures<'t>) -> Option<regex::Match<'t>> {
    [
        "secret",
        "secret_sq",
        "secret_bt",
        "secret_br",
        "secret_bare",
        "secret_tight",
        "secret_esc",
        "secret_mixed",
    ]
    .iter()
    .find_map(|name| c.name(name))
}

/// The words that make the `token` after them a page cursor (`next_token`, `resumeToken`).
const CURSOR_WORDS: &[&str] = &[
    "page",
    "next",
    "continuation",
    "sync",
    "cursor",
    "pagination",
    "paging",
    "resume",
    "skip",
    "delta",
    "start",
    // Not cursors, but no secrets either: CloudFormation's `RequestToken`, idempotency keys,
    // MCP's own `progressToken`.
    "request",
    "idempotency",
    "progress",
];

fn is_cursor_word(word: &str) -> bool {
    CURSOR_WORDS.contains(&word)
}

/// Whether the key just before a value is a page cursor (`nextPageToken=`, `page_token: `),
/// which only looks like a secret key: its `token` comes after a cursor word of its own, so that
/// `async_token`, `authtoken` and `NGROK_AUTHTOKEN` are still secrets.
fn is_cursor_key(before: &str) -> bool {
    let trimmed = before.trim_end_matches(|c: char| !c.is_ascii_alphanumeric());
    // Words apart count too: `page token CiAK...`.
    let is_key = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | ' ');
    let start = trimmed
        .char_indices()
        .rev()
        .find(|&(_, c)| !is_key(c))
        .map_or(0, |(i, c)| i + c.len_utf8());
    let key = &trimmed[start..];
    let lower = key.to_ascii_lowercase();
    let Some(stem) = lower.strip_suffix("token") else {
        return false;
    };
    let stem = stem.trim_end_matches(['_', '-', ' ']);
    // ASCII lowercase keeps every byte where it was: `key` and `lower` share offsets.
    let key = key.as_bytes();
    CURSOR_WORDS.iter().any(|word| {
        stem.strip_suffix(word).is_some_and(|rest| {
            let at = rest.len();
            // A word of its own: first, after a separator, or a capital after a small letter.
            at == 0
                || !key[at - 1].is_ascii_alphanumeric()
                || (key[at].is_ascii_uppercase() && !key[at - 1].is_ascii_uppercase())
        })
    })
}

/// Whether a value found where a word could also be (`token read-only-2`, `auth:latest`,
/// `Unexpected token 'let2'`) is shaped like a secret: six characters or more, with letters and
/// digits both (or twenty with both cases), and not a lowercase name (`db-creds-v2`,
/// `prod/postgres-credentials`, `user_profile_settings_v2`).
fn is_secret_shaped(value: &str) -> bool {
    let count = |f: fn(&u8) -> bool| value.bytes().filter(f).count();
    let (digits, lower, upper) = (
        count(u8::is_ascii_digit),
        count(u8::is_ascii_lowercase),
        count(u8::is_ascii_uppercase),
    );
    let letters = lower + upper;
    let mixed = (digits > 0 && letters > 0) || (value.len() >= 20 && lower > 0 && upper > 0);
    let lowercase_name = upper == 0
        && value.contains(['-', '_', '/', '.'])
        && letters >= 2 * digits
        && value
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-_/.".contains(&b));
    value.len() >= 6 && mixed && !lowercase_name
}

/// A value a shipped pattern finds after a key that says something and hides nothing:
/// `auth=none`, `pass=12` (a count), `Bearer authentication is required`, `token: 0x1F`, a
/// file's path, an error's class (`invalid token: ExpiredSignatureError`), a parameter's name
/// (`WWW-Authenticate: Bearer resource_metadata="..."`), a reference to where the secret is
/// (`$GITHUB_TOKEN`, `${NPM_TOKEN}`, `%DB_PASSWORD%`, `process.env.X`, `os.environ`), a
/// placeholder (`<your key>`, `YOUR_API_KEY`, `sk-ant-...`), a date (`token 2024-05-01T10:00`),
/// code (`signature: fn add(a: i32)`), a validation message (`"password": ["This field is
/// required."]`).
fn is_plain_value(value: &str) -> bool {
    const WORDS: &[&str] = &[
        "none",
        "null",
        "nil",
        "true",
        "false",
        "yes",
        "no",
        "on",
        "off",
        "disabled",
        "enabled",
        "required",
        "missing",
        "empty",
        "undefined",
        "unset",
        "invalid",
        "expired",
        "authentication",
        "authorization",
        "credentials",
        "credential",
        "token",
        "tokens",
        "header",
        "scheme",
        "realm",
        "oauth",
        "oauth2",
        "invalid_token",
        "invalid_request",
        "insufficient_scope",
    ];
    let hex_literal = value.len() <= 10
        && value.starts_with("0x")
        && value[2..].bytes().all(|b| b.is_ascii_hexdigit());
    // A call, not a value: `auth = HTTPBasicAuth(`, `auth=(`.
    let call = value.strip_suffix('(').is_some_and(|name| {
        name.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
    });
    let error_class = (value.ends_with("Error") || value.ends_with("Exception"))
        && value.starts_with(|c: char| c.is_ascii_uppercase())
        && value.bytes().all(|b| b.is_ascii_alphabetic());
    let parameter = value.strip_suffix('=').is_some_and(|name| {
        !name.is_empty() && name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
    });
    // What stands in for a secret: `$GITHUB_TOKEN`, `${X}`, `$(cat f)`, `%X%`, `<your key>` (cut
    // at its space too), a shell's `<` or a mask already there (`***`); not `$ecret`.
    let variable =
        |rest: &str| rest.starts_with(|c: char| c.is_ascii_uppercase() || "_{(".contains(c));
    let stand_in = value.strip_prefix('$').is_some_and(variable)
        || (value.len() > 2 && value.starts_with('%') && value.ends_with('%'))
        || value.strip_prefix('<').is_some_and(|rest| {
            rest.bytes()
                .all(|b| b.is_ascii_alphabetic() || b"_ ->".contains(&b))
        })
        || value.bytes().all(|b| b.is_ascii_punctuation())
        || value.ends_with("...")
        || [
            "process.env.",
            "os.environ",
            "os.getenv(",
            "settings.",
            "config.",
            "env.",
        ]
        .iter()
        .any(|prefix| value.starts_with(prefix))
        || value.starts_with("YOUR_")
        || value.starts_with("your_");
    let date = value.len() >= 10
        && value.as_bytes()[..10].iter().enumerate().all(|(i, b)| {
            if i == 4 || i == 7 {
                *b == b'-'
            } else {
                b.is_ascii_digit()
            }
        });
    let code = value.contains('(') && value.contains(' ');
    let message = value.matches(' ').count() >= 3
        && (value.ends_with('.')
            || [
                "is ", "must ", "should ", "can't ", "cannot ", "Ensure ", "This ",
            ]
            .iter()
            .any(|start| value.starts_with(start)));
    // Options as a list: `basic,bearer`, `required,min=8`, `ssh;https`.
    let options = value.contains([',', ';'])
        && value.split([',', ';']).all(|option| {
            let (name, number) = option.split_once('=').unwrap_or((option, "0"));
            !name.is_empty()
                && name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
                && !number.is_empty()
                && number.bytes().all(|b| b.is_ascii_digit())
        });
    (value.len() <= 3 && value.bytes().all(|b| b.is_ascii_digit()))
        || options
        || hex_literal
        || stand_in
        || date
        || code
        || message
        || error_class
        || parameter
        || call
        || is_file_name(value)
        || WORDS.iter().any(|w| w.eq_ignore_ascii_case(value))
}

/// A file a key names rather than a secret: `GOOGLE_APPLICATION_CREDENTIALS=/home/u/sa.json`,
/// `client_key=certs/client.key`. Path characters only (no `+` or `=`, which base64 has), a
/// folder, and a last part with a file's extension.
fn is_file_name(value: &str) -> bool {
    let value = value.trim_end_matches(':');
    let Some((stem, extension)) = value.rsplit_once('.') else {
        return false;
    };
    stem.contains('/')
        && (1..=5).contains(&extension.len())
        && extension.bytes().all(|b| b.is_ascii_alphanumeric())
        && stem
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._~-".contains(&b))
}

impl Mask {
    /// The secret of a match and what precedes it in the match, unless a shipped pattern found
    /// a cursor's value or a plain word.
    fn secret_of<'t>(&self, c: &regex::Captures<'t>) -> Option<(&'t str, regex::Match<'t>)> {
        let whole = c.get(0).expect("group 0");
        let secret = secret_group(c).unwrap_or(whole);
        let before = &whole.as_str()[..secret.start() - whole.start()];
        // `arn:aws:secretsmanager:...:secret:name` names a secret, a link of a `:` chain.
        let arn_part = c.name("secret_tight").is_some() && before.starts_with(':');
        // A word or a name, where only a value shaped like a secret could be one.
        let unshaped = (c.name("secret_mixed").is_some() || c.name("secret_tight").is_some())
            && !is_secret_shaped(secret.as_str());
        // `api_key=api_key`: code passing a variable on, not a value.
        let its_own_key = before
            .trim_end_matches(|c: char| !c.is_ascii_alphanumeric())
            .strip_suffix(secret.as_str())
            .is_some_and(|rest| !rest.ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_'));
        // A placeholder or a word is one line; a secret over several (a private key, cut off
        // with `...` after it) is never spared.
        let spared = self.spare_plain
            && !secret.as_str().contains('\n')
            && (arn_part
                || unshaped
                || its_own_key
                || is_cursor_key(before)
                || is_plain_value(secret.as_str()));
        (!spared).then_some((before, secret))
    }
}

impl regex::Replacer for Mask {
    fn replace_append(&mut self, c: &regex::Captures<'_>, dst: &mut String) {
        let whole = c.get(0).expect("group 0");
        match self.secret_of(c) {
            Some((before, secret)) => {
                dst.push_str(before);
                dst.push_str(MASK);
                dst.push_str(&whole.as_str()[secret.end() - whole.start()..]);
            }
            None => dst.push_str(whole.as_str()),
        }
    }
}

/// Whether a JSON key names a secret.
#[cfg(test)]
fn names_a_secret(key: &str) -> bool {
    key_secrecy(key) != Secrecy::None
}

/// How a JSON key names a secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Secrecy {
    None,
    /// A short word that names a secret only as the key's last word (`pass`, `x-auth`, not
    /// `pass_rate` or `auth_type`): its text is masked.
    Weak,
    /// `password`, `api_key`, `token` anywhere in the key: whatever it holds.
    Strong,
    /// A key of any kind (`openaiKey`, `SERVER_KEY`, not a bare `key`) or a personal access
    /// token (`pat`) as the key's last word: a value shaped like a secret ([`is_secret_shaped`];
    /// `sortKey: "name"` stays).
    Shaped,
}

impl Secrecy {
    /// Whether the text under a key of this secrecy is a secret.
    fn hides(self, text: &str) -> bool {
        match self {
            Secrecy::Strong => true,
            Secrecy::Weak => !is_plain_value(text),
            Secrecy::Shaped => is_secret_shaped(text) && !is_plain_value(text),
            Secrecy::None => false,
        }
    }
}

/// How a JSON key names a secret, judged by its words (`db_password`, `apiKey`,
/// `x-auth-token`) so that `max_tokens`, `tokenizer` or `nextPageToken` are left alone. Runs for
/// every key of every attempted query, so it allocates nothing.
fn key_secrecy(key: &str) -> Secrecy {
    let mut before = Word::default();
    let mut word = Word::default();
    let mut chars = key.chars().peekable();
    let mut previous: Option<char> = None;
    let mut strong = false;
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
            strong |= word.secrecy_after(&before) == Secrecy::Strong;
            before = std::mem::take(&mut word);
        }
        if c.is_alphanumeric() {
            c.to_lowercase().for_each(|l| word.push(l));
        }
        previous = Some(c);
    }
    if word.is_empty() {
        return if strong {
            Secrecy::Strong
        } else {
            Secrecy::None
        };
    }
    // What is said of a secret, not the secret: `csrf_token_name`, `password_length`,
    // `token_type`, `api_key_url`.
    if strong && ABOUT_A_SECRET.contains(&word.as_str()) {
        return Secrecy::None;
    }
    if strong {
        Secrecy::Strong
    } else {
        word.secrecy_after(&before)
    }
}

/// The last words of a key that describe a secret rather than hold it.
const ABOUT_A_SECRET: &[&str] = &[
    "name",
    "type",
    "length",
    "len",
    "count",
    "url",
    "uri",
    "endpoint",
    "policy",
    "expiry",
    "expires",
    "expiration",
    "ttl",
    "header",
    "field",
    "param",
    "format",
    "kind",
    "hint",
    "required",
    "set",
    "present",
    "provided",
    "valid",
    "enabled",
];

/// The words that make the `key` after them a secret (`api_key`, `privateKey`).
const KEY_KINDS: &[&str] = &[
    "api",
    "private",
    "secret",
    "access",
    "client",
    "app",
    "functions",
    "shared",
    "signing",
    "encryption",
    "master",
    "subscription",
    "account",
    "hmac",
    "license",
    "admin",
    "write",
    "deploy",
    "fernet",
    "jwt",
    "ssh",
];

/// The words that make the `key` after them a name of data, not of a secret (`primary_key`,
/// `sortKey`, `routing_key`, which RabbitMQ routes by).
const PLAIN_KEY_KINDS: &[&str] = &[
    "primary",
    "foreign",
    "sort",
    "partition",
    "range",
    "hash",
    "shard",
    "routing",
    "cache",
    "object",
    "idempotency",
    "dedup",
    "unique",
    "composite",
    "row",
    "group",
    "message",
    "lookup",
    "index",
    "map",
    "field",
    "column",
    "public",
];

/// The words that make a `token` run together with them a secret (`authtoken`), where a word
/// of any other kind could be a count (`maxtoken`).
const TOKEN_KINDS: &[&str] = &[
    "auth", "access", "refresh", "session", "id", "bearer", "bot", "client", "identity",
    "personal", "oauth", "csrf", "xsrf", "jwt", "api", "app", "user", "service", "registry",
    "github", "gitlab", "slack", "npm", "pypi", "ngrok", "docker", "hf", "vault",
];

/// A key that is one word run together of a secret's words: `pgpassword`, `clientsecret`,
/// `identitytoken`, `secretkey`.
fn is_compound_secret(word: &str) -> bool {
    ["password", "passwd", "passphrase", "secret"]
        .iter()
        .any(|s| word.len() > s.len() && word.ends_with(s))
        || word
            .strip_suffix("token")
            .is_some_and(|kind| TOKEN_KINDS.contains(&kind))
        || word
            .strip_suffix("key")
            .is_some_and(|kind| KEY_KINDS.contains(&kind))
}

/// A lowercase word of a key, kept only as far as it could be one of the words judged (all
/// short and ASCII); a longer or non-ASCII word is "some other word".
#[derive(Default)]
struct Word {
    bytes: [u8; 24],
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

    fn secrecy_after(&self, before: &Word) -> Secrecy {
        let before = (!before.is_empty()).then(|| before.as_str());
        let strong = match self.as_str() {
            "password" | "passwd" | "pwd" | "passcode" | "secret" | "authorization"
            | "credentials" | "apikey" | "passphrase" | "bearer" | "requirepass" | "masterauth" => {
                true
            }
            "phrase" => before == Some("pass"),
            "pw" | "pass" | "auth" | "credential" | "cookie" | "otp" => return Secrecy::Weak,
            "key" if before.is_some_and(|b| KEY_KINDS.contains(&b)) => true,
            "key" if before.is_some_and(|b| !PLAIN_KEY_KINDS.contains(&b)) => {
                return Secrecy::Shaped
            }
            "pat" => return Secrecy::Shaped,
            // A token is a secret; a page token is a cursor.
            "token" => !before.is_some_and(is_cursor_word),
            // Words run together (`PGPASSWORD`, `clientsecret`, `authtoken`, `privatekey`).
            word => is_compound_secret(word),
        };
        if strong {
            Secrecy::Strong
        } else {
            Secrecy::None
        }
    }
}

#[cfg(test)]
mod tests;
