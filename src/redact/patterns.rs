//! The shipped redaction patterns: what common secrets look like in the error texts, logs and
//! command lines of real servers and libraries. Each has a name (for the tests and the docs)
//! and, where only part of a match is the secret, a group naming it ([`super::secret_group`]).

/// A key that names a secret, as the start of a pattern: dotted or prefixed
/// (`spring.datasource.password`, `DB_PASSWORD`, `x-api-key`, `dbPassword`, `--token`,
/// `Api Key`, `APP_KEY`, `HMAC_KEY`), quoted or not (`\"password\"` in JSON quoted in a string too), but not
/// after `/` or `.` (`/etc/passwd: ...` is a path). `pass`, `pw`, `auth` and `credentials` only
/// as words of their own: `DB_PASS`, not `bypass`.
macro_rules! secret_key {
    () => {
        r#"(?i)(?:^|[^/.A-Za-z0-9_])(?:[a-z0-9_-]+\.)*(?:[a-z0-9_-]*?(?:api[ _-]?key|apikey|(?:access|account|private|secret|signing|encryption|master|subscription|auth|client|app|functions|shared|hmac)[ _-]?key(?:[_-]?data)?|access[_-]?token|refresh[_-]?token|auth[_-]?token|token|secret|client[_-]?secret|secret[_-]?key[_-]?base|password|passwd|pwd|passphrase|storepass|keypass|session[_-]?(?:id|token|key)|signature)|(?:[a-z0-9_-]*[_-])?(?:pass|pw|auth|credentials?|psk|passcode|otp)|(?-i:(?:APP|HMAC|STRIPE|JWT|CRYPT|CIPHER|LICENSE|SENDGRID|MAILGUN|TWILIO)_KEY))\\?["'`]?\s*"#
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
        // ADO.NET and ODBC: between `;`s, a password runs to the next `;`, spaces and all.
        r#"(?i);\s*(?:password|pwd)\s*=\s*(?P<secret>[^;\r\n"']*[^;\s"'][^;\r\n"']*);"#,
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
        // to the next space, delimiter or escaped line end (`\r\n` in a dumped request).
        concat!(
            secret_key!(),
            r#"(?:(?::=|=>|=|:)\s*(?:\\"(?P<secret_esc>(?:[^"\\\r\n]|\\[^"])+)\\"|b?"(?P<secret>(?:[^"\\\r\n]|\\.)+)"|b?'(?P<secret_sq>[^'\r\n]+)'|`(?P<secret_bt>[^`\r\n]+)`|\{(?P<secret_br>[^}\r\n]+)\})"#,
            r#"|(?::=|=>|=)\s*(?P<secret_bare>(?:[^\s"'`&,;})\\]|\\[^rnt"])+)|:(?P<secret_tight>(?:[^\s"'`&,;})\\]|\\[^rnt"])+))"#,
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
            r#":\s+(?P<secret>[a-z]*[^a-z0-9=\s"'`&,;}).:!?_/(<\[\\-][^\s"'`&,;}):\\]*|[a-z]+[0-9][^\s"'`&,;}):\\]*|[0-9]+[^0-9\s"'`&,;}):\\/][^\s"'`&,;}):\\]*|[0-9]{6,}|[a-z]{16,}|[a-z0-9+/=]{30,}|[a-z]+(?:[_-][a-z]+)*[_-][0-9]{3,}[^\s"'`&,;}):\\]*)(?:$|[\s"'`&,;})]|\\[rnt])"#,
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
        // OAuth code and its verifier, `key=` (Trello, Google), `appid=` (OpenWeather); long
        // enough to be one (`?code=DEU`, `?key=reports/q3.pdf` stay).
        r#"[?&#](?:code|code_verifier|key|appid|app_key)=(?P<secret>[A-Za-z0-9_~+=-]{16,})"#,
    ),
    (
        "kube-bootstrap-token",
        // `abcdef.0123456789abcdef`, where a token is given (the shape alone is an asset's
        // name: `styles.ef46db3751d8e999.css`).
        r"(?i)(?:bootstrap-token-|--token[ =]|token[:=]\s*)(?P<secret>[a-z0-9]{6}\.[a-z0-9]{16})(?-u:\b)",
    ),
    (
        "basic-credentials",
        // `Basic <base64>` with no header name before it: with a digit, a sign or padding
        // (`Basic authentication`, `Basic Subscription` stay).
        r"(?-u:\b)Basic\s+(?P<secret>[A-Za-z0-9+/]*[0-9+/][A-Za-z0-9+/]*={0,2}|[A-Za-z0-9+/]+={1,2})",
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
        // The user may be empty (`redis://:secret@host`) or an address (`smtp://a@b.c:x@host`,
        // but `smtp://a@b.c:587,c@d.e` is a port); the password runs to the last `@`
        // before the host (`user:p@ss@host`), within the authority (`host:3000?email=a@b` has
        // none).
        r"(?i)(?-u:\b)[a-z][a-z0-9+.-]*://(?:[^/\s:@]*:(?P<secret>[^\s/?#]+)|[^/\s:@]+@[^/\s:@]+:(?P<secret_sq>[^\s/?#,@]+))@",
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
        // refresh tokens.
        concat!(
            r"(?-u:\b)(?:ya29\.[A-Za-z0-9_-]{20,}|hvs\.[A-Za-z0-9_-]{24,}|whsec_[A-Za-z0-9+/=]{24,}",
            r"|ATATT3x[A-Za-z0-9_=-]{40,}|lin_api_[A-Za-z0-9]{32,}|ntn_[A-Za-z0-9]{40,}|secret_[A-Za-z0-9]{40,}",
            r"|pat[A-Za-z0-9]{14}\.[a-f0-9]{64}|PMAK-[a-f0-9]{24}-[a-f0-9]{34}|glsa_[A-Za-z0-9_]{32,}",
            r"|sbp_[a-f0-9]{40}|sq0(?:atp|csp)-[A-Za-z0-9_-]{22,}|gsk_[A-Za-z0-9]{40,}|xai-[A-Za-z0-9]{40,}",
            r"|r8_[A-Za-z0-9]{30,}|pplx-[A-Za-z0-9]{40,}|AGE-SECRET-KEY-1[0-9A-Z]{50,}",
            r"|dckr_pat_[A-Za-z0-9_-]{20,}|sntrys_[A-Za-z0-9+/=_]{20,}|[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_-]{40,}",
            r"|lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}|ATBB[A-Za-z0-9]{28,}|pul-[a-f0-9]{40}",
            r"|GOCSPX-[A-Za-z0-9_-]{24,}|1//0[A-Za-z0-9_-]{30,}|4/0A[A-Za-z0-9_-]{20,})",
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
