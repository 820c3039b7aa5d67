//! The shipped redaction patterns: what common secrets look like in the error texts, logs and
//! command lines of real servers and libraries. Each has a name (for the tests and the docs)
//! and, where only part of a match is the secret, a group naming it ([`super::mask::secret_group`]).

/// A key that names a secret, as the start of a pattern: dotted or prefixed
/// (`spring.datasource.password`, `DB_PASSWORD`, `x-api-key`, `dbPassword`, `--token`,
/// `Api Key`, `APP_KEY`, `NEW_RELIC_LICENSE_KEY`), quoted or not (`\"password\"` in JSON quoted
/// in a string too), subscripted (`environ['API_KEY']`, `user[password]`), but not after `/` or
/// `.` (`/etc/passwd: ...` is a path). `pass`, `pw`, `auth` and `credentials` only as words of
/// their own: `DB_PASS`, not `bypass`.
macro_rules! secret_key {
    () => {
        r#"(?i)(?:^|[^/.A-Za-z0-9_])(?:[a-z0-9_-]+\.)*(?:[a-z0-9_-]*?(?:api[ _-]?key|apikey|(?:access|account|private|secret|signing|encryption|master|subscription|auth|client|app|functions|shared|hmac|license|admin|write|deploy|fernet|jwt|application|ssh|clickhouse)[ _-]?key(?:[_-]?data)?|jfrog[_-]art[_-]api|access[_-]?token|refresh[_-]?token|auth[_-]?token|token|secret|client[_-]?secret|secret[_-]?key[_-]?base|secret[_-]?string|password|passwd|pwd|pass[_-]?phrase|storepass|keypass|requirepass|masterauth|sessid|session[_-]?(?:id|token|key)|signature)|(?:[a-z0-9_-]*[_-])?(?:pass|pw|auth|credentials?|psk|passcode|otp)|(?-i:(?:[A-Z0-9]+_)*(?:APP|HMAC|STRIPE|JWT|CRYPT|CIPHER|LICENSE|SENDGRID|MAILGUN|TWILIO|ADMIN|WRITE|FERNET|DEPLOY|ENC)_KEY))\\?["'`]?\]?\s*"#
    };
}

/// The plain words that name a secret, where a pattern needs no more (a YAML block's key, a
/// variable's name, an XML attribute) than these, not `secret_key!`'s many forms.
macro_rules! secret_word {
    () => {
        r"(?:password|passwd|secret|token|api[_-]?key|apikey|private[_-]?key|credentials?)"
    };
}

/// The shipped patterns: (name, regex). Where a pattern has a group named `secret` (or one of
/// the others `super::mask::secret_group` knows), only that group is masked, so the reader still sees
/// which key or scheme it was.
pub const DEFAULT_PATTERNS: &[(&str, &str)] = &[
    (
        "private-key",
        // To its END line, or to the end of the text when it was cut off.
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?s:.*?)(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\z)",
    ),
    (
        "jwt",
        // Before the patterns that find a token after its key: they stop at a `.`, and would
        // mask only a JWT's header, which anyone can rebuild.
        r"(?-u:\b)eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}",
    ),
    (
        "bearer",
        r"(?i)(?-u:\b)bearer:?\s+(?P<secret>[A-Za-z0-9._~+/=-]{8,})",
    ),
    (
        "connection-string-password",
        // ADO.NET and ODBC: after a `;`, a password runs to the next `;` or the end of the
        // line, spaces and all.
        r#"(?im);\s*(?:password|pwd)\s*=\s*(?P<secret>[^;\r\n"']*[^;\s"'][^;\r\n"']*)(?:;|\r?$)"#,
    ),
    (
        "credential-pair",
        // A user and a password side by side (`auth=('admin', 'x')`, `HTTPBasicAuth("u", "x")`,
        // neo4j's `basic_auth("u", "x")`, Elasticsearch's `api_key=('id', 'x')`), or a key name
        // and its value (`('x-api-key', 'x')`, gRPC metadata, httpx's `(b'x-api-key', b'x')`,
        // Node's `rawHeaders: [..., 'X-Api-Key', 'x']`), and ioredis's failed `AUTH` command.
        concat!(
            r#"(?i)(?:(?-u:\b)(?:auth|api_key)\s*=\s*\(|BasicAuth\(|basic_auth\(|auth\.basic\()\s*["'][^"'\r\n]*["']\s*,\s*["'](?P<secret>[^"'\r\n]+)["']"#,
            r#"|[(\[,]\s*b?["'](?:[a-z0-9_-]*?(?:api[_-]?key|token|secret|password|auth[a-z_-]*))["']\s*,\s*b?["'](?P<secret_sq>[^"'\r\n]+)["']"#,
            r#"|name:\s*'auth',\s*args:\s*\[\s*(?:'[^'\r\n]*',\s*)?'(?P<secret_bare>[^'\r\n]+)'"#,
        ),
    ),
    (
        "key-value",
        // A quoted value after any separator (`=`, `:`, `:=`, `=>`) goes to its closing quote
        // (a passphrase has spaces; `\"` inside does not end it; in JSON quoted in a string, to
        // its `\"`), or brace (ODBC's `Pwd={..}`), also inside a call (Rust's `Some("x")`,
        // `SecretString("x")`); a bare one after `=` (or a `:` with no space) to the next space,
        // delimiter or escaped line end (`\r\n` in a dumped request).
        concat!(
            secret_key!(),
            r#"(?:(?::=|=>|=|:)\s*(?:some\(|secret[a-z]*\(|\[\s*)*(?:\\"(?P<secret_esc>(?:[^"\\\r\n]|\\[^"])+)\\"|b?"(?P<secret>(?:[^"\\\r\n]|\\.)+)"|b?'(?P<secret_sq>[^'\r\n]+)'|`(?P<secret_bt>[^`\r\n]+)`|\{(?P<secret_br>[^}\r\n]+)\})"#,
            r#"|(?::=|=>|=)\s*(?P<secret_bare>(?:[^\s"'`&,;})\\]|\\[^rnt"])+)|:(?P<secret_tight>(?:[^\s"'`&,;})\\]|\\[^rnt"])+))"#,
        ),
    ),
    (
        "key-colon-value",
        // After `key: `, a bare value only where it looks like a secret (a digit after
        // letters, a sign, a long run, base64 with slashes, a digit after a leading `!`, `_` or
        // `.`, `user:secret`) and is not itself the next link of a Go-style `context: cause`
        // chain (`token: x509: ...`, `token: 401: ...`): `token: expired`,
        // `token: invalid_grant`, `password: too-short` are words to keep. A value runs on past
        // a `,`, `;`, `)` or `\` with more of it after (`d5h;1bi;zO4`), not past one a space
        // follows (a list of words, `basic,bearer` or `required,min=8`, is a plain value).
        concat!(
            secret_key!(),
            r#":\s+(?P<secret>(?:[a-z]*[^a-z0-9=\s"'`&,;}).:!?_/(<\[\\|>-][^\s"'`&,;}):\\]*|[a-z]+[0-9][^\s"'`&,;}):\\]*|[0-9]+[^0-9\s"'`&,;}):\\/][^\s"'`&,;}):\\]*|[0-9]{6,}|[a-z]{16,}|[a-z0-9+/=]{30,}|[0-9]*[a-z+][a-z0-9+]*/[a-z0-9+/]*[0-9+][a-z0-9+/]*={0,2}|[^\s"'`&,;}):\\]+(?:[,;)]|\\[^rnt"\\])[^\s"'`&,;}):\\]+|[a-z]+(?:[_-][a-z]+)*[_-][0-9]{3,}[^\s"'`&,;}):\\]*|[!_.][^\s"'`&,;}):\\]*[0-9][^\s"'`&,;}):\\]*|[^\s"'`&,;}):\\]+:[^\s"'`&,;}):\\/][^\s"'`&,;})\\]*)(?:(?:[,;)]|\\[^rnt"\\])[^\s"'`&,;}):\\]+)*)(?:$|[\s"'`&,;})]|\\[rnt])"#,
        ),
    ),
    (
        "secret-on-the-next-line",
        // A secret key's value on the line after it: a YAML block (`password: |`), a name and
        // its value (Kubernetes' `- name: DB_PASSWORD` / `value: x`, ECS's
        // `{"name":"API_TOKEN","value":"x"}`), and the input pydantic quotes under a secret
        // field, its whole name on the line before (`password` / `String should have at most 8
        // characters [..., input_value='x'`; not `max_tokens`, not a dict of the other fields).
        concat!(
            "(?i)",
            secret_word!(),
            r#"["']?:[ \t]*(?:!!binary[ \t]+)?[|>][-+0-9]*[ \t]*\r?\n[ \t]+(?P<secret>[^\r\n]+)"#,
            r#"|name["']?\s*[:=]\s*["']?[a-z0-9_.-]*"#,
            secret_word!(),
            r#"["']?\s*,?\s*-?\s*["']?value["']?\s*[:=]\s*["']?(?P<secret_sq>[^\s"',}]+)"#,
            r#"|(?m:^)[ \t]*(?:[a-z0-9_]+\.)*[a-z0-9_]*"#,
            secret_word!(),
            r#"[ \t]*\r?\n[^\r\n]*?input_value=(?:'(?P<secret_bare>[^'\r\n]*)'|"(?P<secret_bt>[^"\r\n]*)"|(?P<secret_br>[^\s,\]{\[][^\s,\]]*))"#,
        ),
    ),
    (
        "env-assignment",
        // `DB_PASSWORD=Xk9#mQ2;vL8p` in an environment dump: to the next space or quote, `;`
        // and `,` included (`key-value` stops there, for query strings and code); past a quote
        // inside it (`ab'cd`), not one that ends an item of a list (`"A_TOKEN=x","PATH=/bin"`).
        r#"(?m)(?:^|[\s'"])(?:export\s+)?[A-Z][A-Z0-9_]*(?:PASSWORD|PASSWD|PWD|SECRET|TOKEN|API_?KEY|ACCESS_KEY|PRIVATE_KEY|SECRET_KEY|_PASS|_PW)=(?P<secret>[^\s"'`]+(?:["'`][^\s"'`,;:\])}][^\s"'`]*)*)"#,
    ),
    (
        "env-name-key",
        // A variable named as a key of any vendor, a personal access token or a secret's id
        // (`OPENAI_KEY=...`, `"SUPABASE_SERVICE_KEY": "..."`, `GITHUB_PAT=...`, Vault's
        // `secret_id=...`): only a value shaped like a secret, since `SORT_KEY=name` or
        // `PRIMARY_KEY: id` name no secret.
        r#"(?-u:\b)(?:(?-i:[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*_(?:KEY|PAT|SECRET_ID|CREDENTIALS?))|(?i:secret[_-]?id|role[_-]?secret))\\?["'`]?\s*(?::=|=>|=|:)\s*\\?["'`]?(?P<secret_mixed>[A-Za-z0-9+/_.~-]{12,}={0,2})"#,
    ),
    (
        "named-field-value",
        // A field's value that a validator echoes beside the field's name: express-validator's
        // `{"path": "password", "value": "x"}`, Spring's `"field": "password", "rejectedValue":
        // "x"`, FastAPI's `"loc": ["body", "password"], ..., "input": "x"` (in one object: no
        // brace between the two).
        concat!(
            r#"(?i)"(?:field|path|param|parameter|property)"\s*:\s*"(?:[a-z0-9_.\[\]-]*[._\[-])?"#,
            secret_word!(),
            r#"(?:[._\]][a-z0-9_.\]]*)?"[^{}]*?"(?:value|input|rejectedValue)"\s*:\s*"(?P<secret>(?:[^"\\\r\n]|\\.)*)""#,
            r#"|"(?:value|input|rejectedValue)"\s*:\s*"(?P<secret_sq>(?:[^"\\\r\n]|\\.)*)"[^{}]*?"(?:field|path|param|parameter|property)"\s*:\s*"(?:[a-z0-9_.\[\]-]*[._\[-])?"#,
            secret_word!(),
            r#"(?:[._\]][a-z0-9_.\]]*)?""#,
            r#"|"loc"\s*:\s*\[[^\]]*"(?:[a-z0-9_]*_)?"#,
            secret_word!(),
            r#"(?:_[a-z0-9_]*)?"\s*\][^{}]*?"input"\s*:\s*"(?P<secret_bare>(?:[^"\\\r\n]|\\.)*)""#,
        ),
    ),
    (
        "echoed-value",
        // Values that databases and APIs echo under a secret's name: PostgreSQL's `Key
        // (api_key)=(x) already exists`, MySQL's `Duplicate entry 'x' for key 'users.api_key'`,
        // EF Core's `@__password_0='x'`, GraphQL's `Variable "$password" got invalid value
        // "x"`, Spring Boot's `Property: spring.datasource.password` / `Value: "x"`.
        concat!(
            r#"(?i)Key \([^)\r\n]*"#,
            secret_word!(),
            r#"[^)\r\n]*\)=\((?P<secret>[^)\r\n]*)\)"#,
            r#"|Duplicate entry '(?P<secret_sq>[^'\r\n]*)' for key '[^'\r\n]*"#,
            secret_word!(),
            r#"[^'\r\n]*'"#,
            r#"|@(?:__)?[a-z0-9_]*"#,
            secret_word!(),
            r#"[a-z0-9_]*='(?P<secret_bare>[^'\r\n]*)'"#,
            r#"|Variable "\$[a-z0-9_]*"#,
            secret_word!(),
            r#"[a-z0-9_]*"(?: of type "[^"\r\n]*")? got invalid value (?:"(?P<secret_bt>(?:[^"\\\r\n]|\\.)*)"|(?P<secret_br>[^\s";,]+))"#,
            r#"|Property: [a-z0-9._\[\]-]*"#,
            secret_word!(),
            r#"[a-z0-9._\[\]-]*[ \t]*\r?\n[ \t]*Value: (?:"(?P<secret_esc>[^"\r\n]*)"|(?P<secret_tight>[^\s"][^\r\n]*))"#,
        ),
    ),
    (
        "secret-after-word",
        // `auth token 0123...`, `secret wJalr...`, `ENV DB_PASSWORD x`, `invalid password
        // Short9Pw`: a key word, a space, then a run as long as only a key or token is (no
        // English word is 20 letters; a path starts with `/` or `.`, and a dot ends the run:
        // `unexpected token github.com/org/pkg` stays, unless long runs follow it as in a dotted
        // token, `X7Slg.d73J9IjSEW.mUZ3u`; a page token is a cursor): eight
        // characters or more shaped like a secret (`Secret prod/postgres-credentials`, a
        // Kubernetes name, stays).
        concat!(
            r"(?i)(?-u:\b)(?:(?:page|next|continuation|pagination|paging|resume|sync|cursor)\s+)?(?:[a-z0-9]+[_.])*(?:token|secret|password|passwd|api[ _-]?key|access[ _-]?key|secret[ _-]?key|secret[ _-]?access[ _-]?key)[ \t]+",
            r"(?P<secret_mixed>[A-Za-z0-9+=_-][A-Za-z0-9/+=_~-]{7,}(?:\.[A-Za-z0-9_-]{8,})*)(?:$|[\s.,;:)\]])",
        ),
    ),
    (
        "quoted-after-word",
        // `the password 'Hunter2!' is incorrect`, ``token `abcd1234` is invalid``: after a
        // password, a quoted value with a digit or a sign, or a long one; after a token (a
        // parser's word too: `Unexpected token 'let2'`, `'==='`, `'<'`), one shaped like a secret.
        concat!(
            r#"(?i)(?-u:\b)(?:password|passwd|passphrase|api[ _-]?key|secret[ _-]?key)\s+["'`](?P<secret>[^"'`\s]+[^a-z"'`\s][^"'`\s]+|[^"'`\s]{2,}[^a-z"'`\s]|[^a-z"'`\s][^"'`\s]{2,}|[^"'`\s]{12,})["'`]"#,
            r#"|(?-u:\b)token\s+["'`](?P<secret_mixed>[^"'`\s]{6,})["'`]"#,
        ),
    ),
    (
        "secret-flag",
        // `--password S3cret`, `-storepass x`, `-passin pass:x`: a flag, a space, its value.
        // A flag of any key (`--openai-key`, `--license-key`), a `--pat` or a `--secret-id`:
        // only a value shaped like a secret (`--sort-key name` stays).
        concat!(
            r#"(?i)(?:^|\s)--?[a-z0-9-]*(?:password|passwd|pass-?phrase|token|secret|api-?key|storepass|keypass|passin|passout)\s+(?:pass:)?(?:"(?P<secret>[^"\r\n]+)"|'(?P<secret_sq>[^'\r\n]+)'|(?P<secret_bare>[^\s"'-]\S*))"#,
            r#"|(?i)(?:^|\s)--?(?:[a-z0-9]+-)*(?:[a-z0-9]+-key|pat|secret-id)[\s=]+(?P<secret_mixed>[^\s"'-]\S*)"#,
        ),
    ),
    (
        "command-line-password",
        // Passwords on the command lines that error texts quote: `mysql -pS3cret` (or
        // `-p'x'`, or as Python lists one: `['mysql', '-u', 'root', '-px']`), `sshpass -p x`,
        // `docker login -p x` (podman, helm, ...), `twine -p x`, `curl -u user:x`,
        // `http --auth user:x`, `redis-cli -a x`, `sqlcmd -P x`, `bcp -P x`, `mongosh -p x`,
        // `ldapsearch -w x`, `az login -p x`, `htpasswd -b file user x` (`-b -c` too),
        // `smbclient -U user%x`, `cmdkey /pass:x`, `zip -P x`, `7z -px`, `openssl -k x`,
        // `ssh-keygen -P x -N y`, `nuget -k x`, `lftp -u user,x`, `skopeo --creds user:x`.
        concat!(
            r#"(?:(?:^|\s)(?:mysql|mysqldump|mysqladmin)\s(?:[^\n|;&]*\s)?-p["']?|\[\s*["'](?:mysql|mysqldump|mysqladmin)["'],[^\]\n]*?["']-p|(?-u:\b)(?:sshpass|(?:docker|podman|nerdctl|buildah|oras|helm\s+registry)\s+login[^\n]*?|twine\s[^\n]*?|psexec\s[^\n]*?)\s-p\s+["']?"#,
            r#"|(?-u:\b)curl\s[^\n]*?(?:-u|--user)\s*[^\s:]+:|(?-u:\b)redis-cli\s[^\n]*?(?:-a|--pass)\s+|(?-u:\b)(?:sqlcmd|bcp)\s[^\n]*?-P\s+"#,
            r#"|(?-u:\b)https?\s[^\n]*?(?:-a|--auth)\s+[^\s:]+:|(?-u:\b)cmdkey\s[^\n]*?/pass:|(?-u:\b)zip\s[^\n]*?\s-P\s+|(?-u:\b)7z\s[^\n]*?\s-p"#,
            r#"|(?-u:\b)openssl\s[^\n]*?\s-k\s+|(?-u:\b)ssh-keygen\s[^\n]*?\s-[PN]\s+|(?-u:\b)nuget\s[^\n]*?\s-k\s+"#,
            r#"|(?-u:\b)lftp\s[^\n]*?-u\s+[^\s,]+,|(?-u:\b)skopeo\s[^\n]*?--(?:src-|dest-)?creds[ =][^\s:]+:"#,
            r#"|(?-u:\b)mongo(?:sh)?\s[^\n]*?(?:-p|--password)\s+|(?-u:\b)ldap[a-z]+\s[^\n]*?-w\s+"#,
            r#"|(?-u:\b)az\s+login\s[^\n]*?\s-p\s+|(?-u:\b)htpasswd\s+(?:-[a-zA-Z]+\s+)*-[a-zA-Z]*b[a-zA-Z]*\s+(?:-[a-zA-Z]+\s+)*\S+\s+\S+\s+"#,
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
        // `<password>x</password>`, `<wsse:Password Type="...">x</...>`, `<ApiKey>x</ApiKey>` (a
        // `<NextToken>` is a cursor), .NET's `<add key="ApiSecret" value="x"/>`, Spring's
        // `<property name="password" value="x"/>`, and an element named by its attribute
        // (`<entry key="db.password">x</entry>`).
        concat!(
            r#"(?i)<[a-z0-9_:-]*?(?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key)(?:\s[^<>]*)?>(?P<secret>[^<\r\n]+)</"#,
            r#"|(?:key|name)="[^"]*(?:connectionstring|"#,
            secret_word!(),
            r#")[^"]*"\s+value="(?P<secret_sq>[^"]+)""#,
            r#"|<[a-z0-9_:-]+\s+(?:key|name)="[^"]*"#,
            secret_word!(),
            r#"[^"]*"\s*>(?P<secret_bare>[^<\r\n]+)</"#,
        ),
    ),
    (
        "protocol-password",
        // SQL's `IDENTIFIED BY 'x'` and `PASSWORD('x')`, SMTP's `AUTH PLAIN <base64>`, Redis's
        // `requirepass x` (and `AUTH` as MONITOR prints it, or a client's failed `running AUTH
        // default x`), PowerShell's
        // `ConvertTo-SecureString 'x'`, WordPress's `define('AUTH_KEY', 'x')`.
        concat!(
            r#"(?i)(?-u:\b)identified\s+(?:with\s+[a-z0-9_]+\s+)?by\s+(?:password\s+)?(?:'(?P<secret>[^'\r\n]+)'|(?P<secret_sq>[^\s'";]+))|(?-u:\b)(?-i:AUTH\s+(?:PLAIN|LOGIN|XOAUTH2))\s+(?P<secret_bare>[A-Za-z0-9+/]*[0-9+/=][A-Za-z0-9+/=]*)"#,
            r#"|(?-u:\b)(?:requirepass|masterauth)["']?\s+(?:[0-9]\)\s*)?["']?(?P<secret_tight>[^\s"']+)|"auth"\s+(?:"[^"\r\n]*"\s+)?"(?P<secret_esc>[^"\r\n]+)"|(?-i:(?:running|command|sent|send|cmd:?)\s+AUTH\s+(?:[A-Za-z0-9_.@-]+\s+)?)(?P<secret_br>[^\s"']+)"#,
            r#"|(?-u:\b)(?:password\(\s*'|ConvertTo-SecureString\s+(?:-String\s+)?["']|define\(\s*'[A-Z_]*(?:KEY|SALT|PASSWORD|SECRET)'\s*,\s*')(?P<secret_bt>[^"'\r\n]+)"#,
        ),
    ),
    (
        "url-query-secret",
        // Query parameters that carry a credential under a name too plain for `key-value`: an
        // OAuth code, its verifier and a device code, `key=` (Trello, Google), `appid=`
        // (OpenWeather), `jwt=`, a CAS `ticket=`; long enough and shaped like one (`?code=DEU`,
        // `?key=reports/q3.pdf`, `?code=ERR_BAD_REQUEST_TIMEOUT` stay).
        r#"[?&#](?:code|code_verifier|device_code|key|appid|app_key|jwt|ticket)=(?P<secret_mixed>[A-Za-z0-9_~+=.-]{16,})"#,
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
        "session-cookie",
        // A session cookie outside a `Cookie:` header, shaped like a secret: Express's
        // `connect.sid=s%3A...`, `laravel_session=...`, a bare `session=...`.
        r#"(?i)(?-u:\b)(?:connect\.sid|[a-z0-9]+_session|session)=(?P<secret_mixed>[^\s;,&"']{16,})"#,
    ),
    (
        "authorization-header",
        // Whatever the scheme, which stays readable: a known one with any value, another
        // (`Bot`, `Api-Key`, `SharedKey`) with a value shaped like a token; with none, a value
        // shaped like a token (`Authorization: denied`, `Authorization: Unauthorized` stay). Go
        // prints headers as `map[Authorization:[Basic x]]`: a `]` ends the value, unless it ends
        // a mask already there.
        concat!(
            r#"(?i)(?-u:\b)(?:proxy-)?authorization["']?\s*[:=]\s*\[?["']?(?:(?:basic|bearer|token|digest|negotiate|ntlm|apikey|aws4-hmac-sha256|aws|ssws|hmac)\s+(?P<secret>\[REDACTED\]|[^\s"',;\]]+)"#,
            r#"|[a-z][a-z0-9_.-]*\s+(?P<secret_sq>[^\s"',;\]]*[0-9=+/:][^\s"',;\]]*|[^\s"',;\]]{16,})"#,
            r#"|(?P<secret_bare>[^\s"',;]*[0-9=+/][^\s"',;]*|[^\s"',;]{20,}))"#,
        ),
    ),
    (
        "digest-response",
        // HTTP Digest's `response="..."`: a hash of the password, open to guessing offline.
        r#"(?i)(?-u:\b)Digest\s[^\r\n]*?(?-u:\b)response=\\?"(?P<secret>[^"\\\r\n]+)"#,
    ),
    (
        "json-key-field",
        // A JSON member named just `key` (Google's APIs echo the key they refused): only a long
        // value shaped like a secret (`"key": "reports/q3.pdf"` stays).
        r#"\\?"key\\?"\s*:\s*\\?"(?P<secret_mixed>[A-Za-z0-9_-]{20,})\\?""#,
    ),
    (
        "url-credentials",
        // The user may be empty (`redis://:secret@host`) or an address (`smtp://a@b.c:x@host`,
        // but `smtp://a@b.c:587,c@d.e` is a port); the password runs to the last `@`
        // before the host (`user:p@ss@host`, `#` included), within the authority
        // (`host:3000?email=a@b` has none). Go's MySQL DSNs have no scheme:
        // `user:secret@tcp(host:3306)/db`.
        concat!(
            r"(?i)(?-u:\b)[a-z][a-z0-9+._-]*://(?:[^/\s:@]*:(?P<secret>[^\s/?]+)|[^/\s:@]+@[^/\s:@]+:(?P<secret_sq>[^\s/?#,@]+))@",
            r"|(?-u:\b)[A-Za-z0-9_.-]+:(?P<secret_bare>[^\s@/]+)@(?:tcp|unix)\(",
        ),
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
        "vendor-token-others",
        // Supabase, Grafana Cloud, Figma, Netlify, Alibaba and Tencent Cloud, PlanetScale,
        // Doppler, PostHog, Sentry user tokens, New Relic, RubyGems, NuGet, Mapbox, Tavily,
        // Firecrawl, Jina, Pinecone, Heroku, Brevo, Apify, Yandex, HubSpot, GitLab runners,
        // CircleCI, Buildkite, Dynatrace, JFrog, Bitbucket Data Center, Vault batch tokens,
        // Discord bots, Firebase Cloud Messaging, Meta and Square, Resend, 1Password service
        // accounts, Dropbox, ElevenLabs, Fly.io.
        concat!(
            r"(?-u:\b)(?:sb_secret_[A-Za-z0-9_-]{20,}|glc_[A-Za-z0-9+/=]{32,}|figd_[A-Za-z0-9_-]{30,}",
            r"|nfp_[A-Za-z0-9]{30,}|LTAI[A-Za-z0-9]{12,20}|AKID[A-Za-z0-9]{28,}|pscale_(?:pw|tkn|oauth)_[A-Za-z0-9_.-]{30,}",
            r"|dp\.(?:st|pt|ct|sa|scim|audit)\.[A-Za-z0-9_.-]{30,}|phx_[A-Za-z0-9]{30,}|sntryu_[A-Za-z0-9]{40,}",
            r"|NRAK-[A-Z0-9]{27}|rubygems_[A-Za-z0-9]{40,}|oy2[A-Za-z0-9]{40,}|sk\.eyJ[A-Za-z0-9_.-]{20,}",
            r"|tvly-(?:dev-)?[A-Za-z0-9]{20,}|fc-[A-Za-z0-9]{32,}|jina_[A-Za-z0-9_]{40,}|pcsk_[A-Za-z0-9_]{40,}",
            r"|HRKU-[A-Za-z0-9_-]{20,}|xkeysib-[A-Za-z0-9]{40,}-[A-Za-z0-9]{10,}|apify_api_[A-Za-z0-9]{30,}",
            r"|y0_[A-Za-z0-9_-]{40,}|hvb\.[A-Za-z0-9_-]{24,}|pat-(?:na|eu)1-[A-Za-z0-9-]{30,}",
            r"|GR1348941[A-Za-z0-9_-]{20}|CCIPAT_[A-Za-z0-9_]{30,}|bkua_[A-Za-z0-9]{40,}|sk_[A-Za-z0-9]{40,}",
            r"|dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{40,}|AKCp[A-Za-z0-9]{60,}|BBDC-[A-Za-z0-9+/]{30,}",
            r"|re_[A-Za-z0-9]{8,}_[A-Za-z0-9]{16,}|ops_eyJ[A-Za-z0-9_-]{20,}|sl\.[A-Za-z0-9_-]{60,}",
            r"|[MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}",
            r"|AAAA[A-Za-z0-9_-]{7}:APA91b[A-Za-z0-9_-]{30,}|EAA[A-Za-z0-9]{40,}",
            r"|fo1_[A-Za-z0-9_-]{20,}|fm[12][ab]?_[A-Za-z0-9+/=_,-]{20,})",
        ),
    ),
    (
        "webhook-url",
        // Slack (incoming, workflow and trigger), Discord, Teams, Mattermost (and any other
        // `/hooks/<id>`), IFTTT, Zapier.
        concat!(
            r"(?i)(?:hooks\.slack\.com/(?:services|triggers|workflows)/(?:[A-Z0-9]+/){2,3}|discord(?:app)?\.com/api/webhooks/[0-9]+/)(?P<secret>[A-Za-z0-9_-]{20,})",
            r"|webhook\.office\.com/webhookb2/[^\s/]+/IncomingWebhook/(?P<secret_sq>[A-Za-z0-9]{16,})",
            r"|/hooks/(?P<secret_bare>[a-z0-9]{26})(?:[/?#\s]|$)|maker\.ifttt\.com/\S*?/key/(?P<secret_bt>[A-Za-z0-9_-]{16,})",
            r"|hooks\.zapier\.com/hooks/catch/[0-9]+/(?P<secret_br>[A-Za-z0-9]{6,})",
        ),
    ),
    (
        "url-token",
        // A token as the URL's user: `https://TOKEN@host`, Sentry's DSN.
        r"(?i)(?-u:\b)https?://(?P<secret>[A-Za-z0-9_-]{12,})@",
    ),
];
