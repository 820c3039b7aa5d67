//! Whether a value is shaped like a secret, or is plain: a word, a count, a path, a date, code,
//! a message, or a reference to where the secret is.

/// Whether a value found where a word could also be (`token read-only-2`, `auth:latest`,
/// `Unexpected token 'let2'`) is shaped like a secret: six characters or more, with letters and
/// digits both (or twenty with both cases), and not a lowercase name (`db-creds-v2`,
/// `prod/postgres-credentials`, `user_profile_settings_v2`).
pub(super) fn is_secret_shaped(value: &str) -> bool {
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
pub(super) fn is_plain_value(value: &str) -> bool {
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
