//! Whether a key (`db_password`, `apiKey`, `x-auth-token`) or a command-line flag names a
//! secret, judged by its words, so that `max_tokens`, `tokenizer` or `nextPageToken` are left
//! alone.

use super::value_shapes::{is_plain_value, is_secret_shaped};

/// How a command-line flag names a secret, judged as a JSON key is (`--password`, `-api-key`,
/// `--db-token`, `--passphrase`; `--openai-key` and `--pat` as far as the value is shaped
/// like a secret); skopeo's `--creds` too. Not a flag: no secrecy.
pub(super) fn flag_secrecy(word: &str) -> Secrecy {
    let Some(name) = word.strip_prefix('-') else {
        return Secrecy::None;
    };
    let name = name.strip_prefix('-').unwrap_or(name);
    if ["creds", "src-creds", "dest-creds"].contains(&name) {
        return Secrecy::Strong;
    }
    key_secrecy(name)
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
pub(super) fn is_cursor_key(before: &str) -> bool {
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

/// Whether a JSON key names a secret.
#[cfg(test)]
pub(super) fn names_a_secret(key: &str) -> bool {
    key_secrecy(key) != Secrecy::None
}

/// How a JSON key names a secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Secrecy {
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
    pub(super) fn hides(self, text: &str) -> bool {
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
pub(super) fn key_secrecy(key: &str) -> Secrecy {
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
