//! Redaction of secrets in what the proxy writes itself: structured errors and its logs.
//! Upstream error texts often carry tokens, passwords in URLs or private keys; the agent and
//! the log shipper need the failure, not the secret. Pure.

use std::borrow::Cow;
use std::sync::{Arc, OnceLock};

use regex::{Regex, RegexBuilder};
use serde::Deserialize;
use serde_json::Value;

/// What replaces a secret.
pub const MASK: &str = "[REDACTED]";

/// The shortest secret found in an upstream's text that is masked again wherever the proxy
/// quotes it ([`Redactor::secrets_in`]): shorter ones would mask common words.
const MIN_QUOTED_SECRET: usize = 6;

/// A key that names a secret, as the start of a pattern: dotted or prefixed
/// (`spring.datasource.password`, `DB_PASSWORD`, `x-api-key`, `dbPassword`, `--token`,
/// `Api Key`, `APP_KEY`), quoted or not (`\"password\"` in JSON quoted in a string too), but not
/// after `/` or `.` (`/etc/passwd: ...` is a path). `pass`, `pw`, `auth` and `credentials` only
/// as words of their own: `DB_PASS`, not `bypass`.
macro_rules! secret_key {
    () => {
        r#"(?i)(?:^|[^/.A-Za-z0-9_])(?:[a-z0-9_-]+\.)*(?:[a-z0-9_-]*?(?:api[ _-]?key|apikey|(?:access|account|private|secret|signing|encryption|master|subscription|auth|client|app|functions|shared|hmac)[ _-]?key(?:[_-]?data)?|access[_-]?token|refresh[_-]?token|auth[_-]?token|token|secret|client[_-]?secret|secret[_-]?key[_-]?base|password|passwd|pwd|passphrase|storepass|keypass|session[_-]?(?:id|token|key)|signature)|(?:[a-z0-9_-]*[_-])?(?:pass|pw|auth|credentials?|psk|passcode|otp)|(?-i:[A-Z][A-Z0-9]*_KEY))\\?["'`]?\s*"#
    };
}

/// The shipped patterns: (name, regex). Where a pattern has a group named `secret` (or one of
/// the others [`secret_group`] knows), only that group is masked, so the reader still sees
/// which key or scheme it was.
pub const DEFAULT_PATTERNS: &[(&str, &str)] = &[
    (
        "private-key",
        // To its END line, or to the end of the text when it was cut off.
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?s:.*?)(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\z)",
    ),
    (
        "bearer",
        r"(?i)(?-u:\b)bearer:?\s+(?P<secret>[A-Za-z0-9._~+/=-]{8,})",
    ),
    (
        "connection-string-password",
        // ADO.NET and ODBC: after a `;`, a password runs to the next `;`, spaces and all.
        r#"(?i)(?:^|;)\s*(?:password|pwd)\s*=\s*(?P<secret>[^;\r\n"']*[^;\s"'][^;\r\n"']*)"#,
    ),
    (
        "credential-pair",
        // A user and a password side by side (`auth=('admin', 'x')`, `HTTPBasicAuth("u", "x")`),
        // or a key name and its value (`('x-api-key', 'x')`, gRPC metadata).
        concat!(
            r#"(?i)(?:(?-u:\b)auth\s*=\s*\(|BasicAuth\()\s*["'][^"'\r\n]*["']\s*,\s*["'](?P<secret>[^"'\r\n]+)["']"#,
            r#"|[(\[]\s*["'](?:[a-z0-9_-]*?(?:api[_-]?key|token|secret|password|auth[a-z_-]*))["']\s*,\s*["'](?P<secret_sq>[^"'\r\n]+)["']"#,
        ),
    ),
    (
        "key-value",
        // A quoted value after any separator (`=`, `:`, `:=`, `=>`) goes to its closing quote
        // (a passphrase has spaces; `\"` inside does not end it; in JSON quoted in a string, to
        // its `\"`), or brace (ODBC's `Pwd={..}`); a bare one after `=` (or a `:` with no space)
        // to the next space, delimiter or escaped line end (`\r\n` in a dumped request), and is
        // no value when a call follows (`auth = HTTPBasicAuth(...)`).
        concat!(
            secret_key!(),
            r#"(?:(?::=|=>|=|:)\s*(?:\\"(?P<secret_esc>(?:[^"\\\r\n]|\\[^"])+)\\"|b?"(?P<secret>(?:[^"\\\r\n]|\\.)+)"|b?'(?P<secret_sq>[^'\r\n]+)'|`(?P<secret_bt>[^`\r\n]+)`|\{(?P<secret_br>[^}\r\n]+)\})"#,
            r#"|(?::=|=>|=)\s*(?P<secret_bare>(?:[^\s"'`&,;}()\\]|\\[^rnt"])+)(?P<call>\()?|:(?P<secret_tight>(?:[^\s"'`&,;})\\]|\\[^rnt"])+))"#,
        ),
    ),
    (
        "key-colon-value",
        // After `key: `, a bare value only where it looks like a secret (a digit after
        // letters, a sign, a long run, base64 with slashes) and is not itself the next link of a Go-style
        // `context: cause` chain (`token: x509: ...`, `token: 401: ...`): `token: expired`,
        // `token: invalid_grant`, `password: too-short` are words to keep.
        concat!(
            secret_key!(),
            r#":\s+(?P<secret>[a-z]*[^a-z0-9=\s"'`&,;}).:!?_/(<\[\\-][^\s"'`&,;}):\\]*|[a-z]+[0-9][^\s"'`&,;}):\\]*|[0-9]+[^0-9\s"'`&,;}):\\/][^\s"'`&,;}):\\]*|[0-9]{6,}|[a-z]{16,}|[a-z0-9+/=]{30,}|[a-z]+(?:[_-][a-z]+)*[_-][0-9][^\s"'`&,;}):\\]*)(?:$|[\s"'`&,;})]|\\[rnt])"#,
        ),
    ),
    (
        "secret-after-word",
        // `auth token 0123...`, `secret wJalr...`: a key word, a space, then a run as long as
        // only a key or token is (no English word is 20 letters; a path starts with `/` or `.`,
        // and a dot ends the run: `unexpected token github.com/org/pkg` stays; a page token is
        // a cursor).
        r"(?i)(?-u:\b)(?:(?:page|next|continuation|pagination|paging|resume|sync|cursor)\s+)?(?:token|secret|password|passwd|api[ _-]?key|access[ _-]?key|secret[ _-]?key|secret[ _-]?access[ _-]?key)\s+(?P<secret>[A-Za-z0-9+=_-][A-Za-z0-9/+=_-]{19,})",
    ),
    (
        "quoted-after-word",
        // `the password 'Hunter2!' is incorrect`, ``token `abcd1234` is invalid``: a quoted
        // value with a digit or a sign, or a long one (`Unexpected token 'export'` and
        // `Unexpected token '<'` stay).
        r#"(?i)(?-u:\b)(?:password|passwd|passphrase|token|api[ _-]?key|secret[ _-]?key)\s+["'`](?P<secret>[^"'`\s]+[^a-z"'`\s][^"'`\s]+|[^"'`\s]{2,}[^a-z"'`\s]|[^a-z"'`\s][^"'`\s]{2,}|[^"'`\s]{12,})["'`]"#,
    ),
    (
        "secret-flag",
        // `--password S3cret`, `-storepass x`, `-passin pass:x`: a flag, a space, its value.
        r#"(?i)(?:^|\s)--?[a-z0-9-]*(?:password|passwd|token|secret|api-?key|storepass|keypass|passin|passout)\s+(?:pass:)?(?:"(?P<secret>[^"\r\n]+)"|'(?P<secret_sq>[^'\r\n]+)'|(?P<secret_bare>[^\s"'-]\S*))"#,
    ),
    (
        "command-line-password",
        // Passwords on the command lines that error texts quote: `mysql -pS3cret`,
        // `sshpass -p x`, `docker login -p x`, `curl -u user:x`, `redis-cli -a x`, `sqlcmd -P x`,
        // `mongosh -p x`, `ldapsearch -w x`, `az login -p x`, `htpasswd -b file user x`,
        // `smbclient -U user%x`.
        concat!(
            r#"(?:(?:^|\s)(?:mysql|mysqldump|mysqladmin)\s(?:[^\n|;&]*\s)?-p|(?-u:\b)(?:sshpass|docker login[^\n]*?)\s-p\s+["']?"#,
            r#"|(?-u:\b)curl\s[^\n]*?(?:-u|--user)\s+[^\s:]+:|(?-u:\b)redis-cli\s[^\n]*?-a\s+|(?-u:\b)sqlcmd\s[^\n]*?-P\s+"#,
            r#"|(?-u:\b)mongo(?:sh)?\s[^\n]*?(?:-p|--password)\s+|(?-u:\b)ldap[a-z]+\s[^\n]*?-w\s+"#,
            r#"|(?-u:\b)az\s+login\s[^\n]*?\s-p\s+|(?-u:\b)htpasswd\s+-b[a-zA-Z]*\s+\S+\s+\S+\s+"#,
            r#"|(?-u:\b)smbclient\s[^\n]*?-U\s+["']?[^\s%"']+%)(?P<secret>[^\s"'-][^\s"']*)"#,
        ),
    ),
    (
        "oracle-credentials",
        // `user/password@db`, only where Oracle's tools write it (elsewhere it is a package).
        r"(?i)(?:jdbc:oracle:(?:thin|oci):|(?-u:\b)(?:sqlplus|conn(?:ect(?:ing)?)?)\s+|logon denied \()[A-Za-z0-9_$#]+/(?P<secret>[^\s/@)]+)@",
    ),
    (
        "xml-secret",
        // `<password>x</password>`, `<ApiKey>x</ApiKey>` (a `<NextToken>` is a cursor), and
        // .NET's `<add key="ApiSecret" value="x"/>`.
        concat!(
            r#"(?i)<[a-z0-9_:-]*?(?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key)>(?P<secret>[^<\r\n]+)</"#,
            r#"|key="[^"]*(?:password|secret|token|api[_-]?key|apikey|connectionstring)[^"]*"\s+value="(?P<secret_sq>[^"]+)""#,
        ),
    ),
    (
        "protocol-password",
        // SQL's `IDENTIFIED BY 'x'`, SMTP's `AUTH PLAIN <base64>`.
        r#"(?i)(?-u:\b)identified\s+(?:with\s+[a-z0-9_]+\s+)?by\s+(?:password\s+)?(?:'(?P<secret>[^'\r\n]+)'|(?P<secret_sq>[^\s'";]+))|(?-u:\b)AUTH\s+(?:PLAIN|LOGIN|XOAUTH2)\s+(?P<secret_bare>[A-Za-z0-9+/=]{8,})"#,
    ),
    (
        "url-query-secret",
        // Query parameters that carry a credential under a name too plain for `key-value`: an
        // OAuth code and its verifier, `key=` (Trello, Google), `appid=` (OpenWeather).
        r#"[?&#](?:code|code_verifier|key|appid|app_key)=(?P<secret>[^&#\s"']+)"#,
    ),
    (
        "basic-credentials",
        // `Basic <base64>` with no header name before it (plain words after it stay).
        r"(?-u:\b)Basic\s+(?P<secret>[A-Za-z0-9+/]{12,}={0,2})",
    ),
    (
        "percent-encoded",
        // The same shapes percent-encoded, as a URL quoted in a URL carries them: a key and
        // its `%3D` or `%22%3A%22`, a URL's `%3A...%40`, `Bearer%20`.
        concat!(
            r"(?i)(?:password|passwd|pwd|secret|token|api_?key|apikey)(?:%22)?%3[AD](?:%20)*(?:%22)?(?P<secret>(?:[A-Za-z0-9._~+-]|%(?:2[14ABF]|40))+)",
            r"|%3A%2F%2F[A-Za-z0-9._~+-]*%3A(?P<secret_sq>[A-Za-z0-9._~+-]+)%40",
            r"|Bearer%20(?P<secret_bare>[A-Za-z0-9._~+/=-]+)",
        ),
    ),
    (
        "url-signature",
        // An Azure SAS `sig=` (a bare `sig` elsewhere is too short a word to judge).
        r#"[?&]sig=(?P<secret>[^&\s"']+)"#,
    ),
    (
        "cookie-header",
        // Every cookie in the header: which of them is the session, no pattern can tell.
        r#"(?i)(?-u:\b)(?:set-)?cookie["']?\s*[:=]\s*["']?(?P<secret>[^\r\n"']+)"#,
    ),
    (
        "authorization-header",
        // Whatever the scheme, which stays readable; with none, a value shaped like a token
        // (`Authorization: denied` stays). Go prints headers as `map[Authorization:[Basic x]]`:
        // a `]` ends the value, unless it ends a mask already there.
        concat!(
            r#"(?i)(?-u:\b)(?:proxy-)?authorization["']?\s*[:=]\s*\[?["']?(?:(?:basic|bearer|token|digest|negotiate|ntlm|apikey|aws4-hmac-sha256|aws|ssws|hmac)\s+(?P<secret>\[REDACTED\]|[^\s"',;\]]+)"#,
            r#"|(?P<secret_bare>[^\s"',;]*[0-9=+/][^\s"',;]*|[^\s"',;]{12,}))"#,
        ),
    ),
    (
        "url-credentials",
        // The user may be empty (`redis://:secret@host`) or an address (`smtp://a@b.c:x@host`);
        // the password runs to the last `@`
        // before the host (`user:p@ss@host`), within the authority (`host:3000?email=a@b` has
        // none).
        r"(?i)(?-u:\b)[a-z][a-z0-9+.-]*://[^/\s:]*:(?P<secret>[^\s/?#]+)@",
    ),
    (
        "aws-access-key",
        r"(?-u:\b)(?:AKIA|ASIA)[A-Z0-9]{16}(?-u:\b)",
    ),
    (
        "aws-secret-key",
        r#"(?i)aws_?secret_?access_?key["']?(?:\s*[:=]\s*["']?|\s+)(?P<secret>[A-Za-z0-9/+=]{40})"#,
    ),
    (
        "github-token",
        // Also after `_` (`x_ghp_...`), where there is no word boundary.
        r"(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})",
    ),
    (
        "slack-token",
        r"(?-u:\b)(?:xox[abposre]-[A-Za-z0-9-]{10,}|xapp-[0-9]-[A-Za-z0-9-]{10,})",
    ),
    (
        "openai-style-key",
        r"(?-u:\b)sk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}",
    ),
    (
        "stripe-key",
        r"(?-u:\b)[rsp]k_(?:live|test)_[A-Za-z0-9]{10,}",
    ),
    (
        "vendor-token",
        // Keys whose vendors give them a fixed prefix: Google (`AIza`), npm, GitLab, Hugging
        // Face, SendGrid, PyPI, DigitalOcean, Shopify, Databricks, Mailgun, Twilio, Telegram.
        concat!(
            r"(?-u:\b)(?:AIza[0-9A-Za-z_-]{35}|npm_[A-Za-z0-9]{36}|gl(?:pat|dt|ptt|rt|cbt)-[A-Za-z0-9_-]{20,}",
            r"|hf_[A-Za-z0-9]{30,}|SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}|pypi-[A-Za-z0-9_-]{50,}",
            r"|do[opr]_v1_[a-f0-9]{64}|shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}|dapi[a-f0-9]{32}",
            r"|key-[a-f0-9]{32}|SK[a-f0-9]{32})(?-u:\b)|[0-9]{8,10}:AA[A-Za-z0-9_-]{33,}",
        ),
    ),
    (
        "vendor-token-more",
        // Google OAuth (`ya29.`), Vault, Stripe webhooks, Atlassian, Linear, Notion, Airtable,
        // Postman, Grafana, Supabase, Square, Groq, xAI, Replicate, Perplexity, age, Docker Hub,
        // Sentry, Terraform Cloud, LangSmith, Bitbucket, Pulumi, Google OAuth clients, codes and
        // refresh tokens, Kubernetes bootstrap tokens.
        concat!(
            r"(?-u:\b)(?:ya29\.[A-Za-z0-9_-]{20,}|hvs\.[A-Za-z0-9_-]{24,}|whsec_[A-Za-z0-9+/=]{24,}",
            r"|ATATT3x[A-Za-z0-9_=-]{40,}|lin_api_[A-Za-z0-9]{32,}|ntn_[A-Za-z0-9]{40,}|secret_[A-Za-z0-9]{40,}",
            r"|pat[A-Za-z0-9]{14}\.[a-f0-9]{64}|PMAK-[a-f0-9]{24}-[a-f0-9]{34}|glsa_[A-Za-z0-9_]{32,}",
            r"|sbp_[a-f0-9]{40}|sq0(?:atp|csp)-[A-Za-z0-9_-]{22,}|gsk_[A-Za-z0-9]{40,}|xai-[A-Za-z0-9]{40,}",
            r"|r8_[A-Za-z0-9]{30,}|pplx-[A-Za-z0-9]{40,}|AGE-SECRET-KEY-1[0-9A-Z]{50,}",
            r"|dckr_pat_[A-Za-z0-9_-]{20,}|sntrys_[A-Za-z0-9+/=_]{20,}|[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_-]{40,}",
            r"|lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}|ATBB[A-Za-z0-9]{28,}|pul-[a-f0-9]{40}",
            r"|GOCSPX-[A-Za-z0-9_-]{24,}|1//0[A-Za-z0-9_-]{30,}|4/0A[A-Za-z0-9_-]{20,}|[a-z0-9]{6}\.[a-z0-9]{16}(?-u:\b))",
        ),
    ),
    (
        "webhook-url",
        r"(?i)(?:hooks\.slack\.com/services/[A-Z0-9]+/[A-Z0-9]+/|discord(?:app)?\.com/api/webhooks/[0-9]+/)(?P<secret>[A-Za-z0-9_-]{20,})",
    ),
    (
        "url-token",
        // A token as the URL's user: `https://TOKEN@host`, Sentry's DSN.
        r"(?i)(?-u:\b)https?://(?P<secret>[A-Za-z0-9_-]{12,})@",
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
        self.any.is_match(text)
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
        let hits = self.any.matches(text);
        let mut found = Vec::new();
        for (i, pattern) in self.patterns.iter().enumerate() {
            if !hits.matched(i) {
                continue;
            }
            for c in pattern.get().captures_iter(text) {
                let secret = self.mask(i).secret_of(&c).map(|(_, secret)| secret);
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

    /// How the `i`-th pattern masks: a shipped one spares page cursors and plain words (a key
    /// of your own pattern means what it says).
    fn mask(&self, i: usize) -> Mask {
        Mask {
            spare_plain: i < self.shipped,
        }
    }
}

/// Replaces a match with [`MASK`]: only its secret group where it has one, so the reader still
/// sees which key or scheme it was; a shipped pattern leaves a page cursor's value as it is.
struct Mask {
    spare_plain: bool,
}

/// The part of a match that is the secret: the group named `secret`, or, in a shipped pattern
/// with alternatives, one of the others (a name is given once per pattern).
fn secret_group<'t>(c: &regex::Captures<'t>) -> Option<regex::Match<'t>> {
    [
        "secret",
        "secret_sq",
        "secret_bt",
        "secret_br",
        "secret_bare",
        "secret_tight",
        "secret_esc",
    ]
    .iter()
    .find_map(|name| c.name(name))
}

/// A word that makes the `token` after it a page cursor (`next_token`, `resumeToken`).
fn is_cursor_word(word: &str) -> bool {
    matches!(
        word,
        "page"
            | "next"
            | "continuation"
            | "sync"
            | "cursor"
            | "pagination"
            | "paging"
            | "resume"
            | "skip"
            | "delta"
            | "start"
    )
}

/// Whether the key just before a value is a page cursor (`nextPageToken=`, `page_token: `),
/// which only looks like a secret key: judged by its words, as JSON keys are
/// ([`names_a_secret`]), so that `async_token` is still a secret.
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
    key.to_ascii_lowercase().ends_with("token") && !names_a_secret(key)
}

/// A value a shipped pattern finds after a key that says something and hides nothing:
/// `auth=none`, `pass=12` (a count), `Bearer authentication is required`, `token: 0x1F`, a
/// file's path.
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
        "default",
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
    ];
    let hex_literal = value.len() <= 10
        && value.starts_with("0x")
        && value[2..].bytes().all(|b| b.is_ascii_hexdigit());
    // A file it names, not a secret (`GOOGLE_APPLICATION_CREDENTIALS=/home/u/sa.json`).
    let path = ["/", "./", "~/"].iter().any(|p| value.starts_with(p)) && value[1..].contains('/');
    (value.len() <= 3 && value.bytes().all(|b| b.is_ascii_digit()))
        || hex_literal
        || path
        || WORDS.iter().any(|w| w.eq_ignore_ascii_case(value))
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
        let spared = c.name("call").is_some()
            || self.spare_plain
                && (arn_part || is_cursor_key(before) || is_plain_value(secret.as_str()));
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
            "password" | "passwd" | "pwd" | "pw" | "pass" | "passcode" | "secret"
            | "authorization" | "auth" | "credentials" | "credential" | "apikey" | "passphrase"
            | "cookie" | "signature" | "sig" | "otp" => true,
            "key" => matches!(
                before,
                Some(
                    "api"
                        | "private"
                        | "secret"
                        | "access"
                        | "client"
                        | "app"
                        | "functions"
                        | "shared"
                        | "signing"
                        | "encryption"
                        | "master"
                        | "subscription"
                        | "account"
                        | "hmac"
                        | "license"
                )
            ),
            // A token is a secret; a page token is a cursor.
            "token" => !before.is_some_and(is_cursor_word),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests;
