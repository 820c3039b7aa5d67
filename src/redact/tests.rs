use super::*;
use serde_json::json;

fn r(text: &str) -> String {
    Redactor::defaults().text(text).into_owned()
}

/// Each text is masked as its pair says, and the masked text stays as it is: every case that
/// is not, in one message.
fn assert_masked_as(cases: &[(&str, &str)]) {
    let wrong = cases
        .iter()
        .filter(|(text, want)| r(text) != *want || r(want) != *want)
        .map(|(text, want)| format!("{text}\n  got  {}\n  want {want}", r(text)))
        .collect::<Vec<_>>();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Each text comes out as it went in: every one that does not, in one message.
fn assert_kept(texts: &[&str]) {
    let wrong = texts
        .iter()
        .filter(|text| r(text) != **text)
        .map(|text| format!("{text}\n  got  {}", r(text)))
        .collect::<Vec<_>>();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
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
        ("x_ghp_abcdefghijklmnopqrstuvwxyz0123456789", "x_[REDACTED]"),
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
fn quotes_that_came_escaped_are_read_as_quotes() {
    // An HTML error page, and JSON quoted once more than the text undoes.
    assert_eq!(
        r("Error: {&quot;api_key&quot;:&quot;sk9f8e7d6c5b4a3&quot;}"),
        r#"Error: {"api_key":"[REDACTED]"}"#
    );
    assert_eq!(
        r(r"payload {\u0022token\u0022:\u0022ghx9f8e7d6c5b4a3Zq\u0022}"),
        r#"payload {"token":"[REDACTED]"}"#
    );
    assert_eq!(
        r("login failed: password=&#39;Hunter2Secret&#X27; &amp; more"),
        "login failed: password='[REDACTED]' &amp; more"
    );
    // Nothing to mask: the text is left as it came, escapes and all.
    let clean = "Expected &quot;name&quot; at 3 \\u0022x\\u0022 &amp; &#39;";
    assert!(matches!(Redactor::defaults().text(clean), Cow::Borrowed(_)));
    // An escape cut off at the end, or a lone `&`, is text.
    assert_eq!(
        with_plain_quotes("a &quot b & c \\u002"),
        "a &quot b & c \\u002"
    );
    assert_eq!(with_plain_quotes("&QUOT;é&#34;"), "\"é\"");
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
        "token expired at 2026-11-30T10:00:00Z",
        "secret /var/run/secrets/kubernetes.io/serviceaccount/token not found",
        "the password is too short",
        "Cookie consent required",
        "ENOENT: no such file or directory, open '/srv/app/session.json'",
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
fn masks_vendor_tokens_words_before_secrets_and_cookies() {
    for (text, want) in [
        (
            "auth token 0123456789abcdef0123456789abcdef invalid",
            "auth token [REDACTED] invalid",
        ),
        (
            "secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY rejected",
            "secret [REDACTED] rejected",
        ),
        (
            "Cookie: sessionid=abcdef0123; csrftoken=zyx\nnext",
            "Cookie: [REDACTED]\nnext",
        ),
        ("set-cookie: sid=abc; Path=/", "set-cookie: [REDACTED]"),
        (
            "key=AIzaSyD-abcdefghijklmnopqrstuvwxyz12345 invalid",
            "key=[REDACTED] invalid",
        ),
        (
            "npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789 expired",
            "[REDACTED] expired",
        ),
        ("glpat-AbCdEfGhIjKlMnOpQrSt rejected", "[REDACTED] rejected"),
        ("hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567 x", "[REDACTED] x"),
        (
            "SG.abcdefghijklmnopqrstuv.ABCDEFGHIJKLMNOPQRSTUVWXYZabcd x",
            "[REDACTED] x",
        ),
        (
            "api.telegram.org/bot1234567890:AAbcdefghijklmnopqrstuvwxyz0123456789/send",
            "api.telegram.org/bot[REDACTED]/send",
        ),
        (
            "AccountName=a;AccountKey=bXlLZXk+abc/def==;Endpoint",
            "AccountName=a;AccountKey=[REDACTED];Endpoint",
        ),
        (
            "?X-Amz-Signature=4d3c2b1a0f9e&x=1",
            "?X-Amz-Signature=[REDACTED]&x=1",
        ),
        ("session_id: abc123def", "session_id: [REDACTED]"),
    ] {
        assert_eq!(r(text), want, "{text}");
    }
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
    for (i, pattern) in r.patterns.iter().enumerate() {
        if pattern.get().is_match(&out) {
            out = pattern.get().replace_all(&out, r.mask(i)).into_owned();
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

/// Found by an adversarial review: secrets as servers in many languages print them.
#[test]
fn masks_secrets_in_the_shapes_of_many_stacks() {
    for (text, secret) in [
        (
            "BeanCreationException: spring.datasource.password=Hunter2!",
            "Hunter2!",
        ),
        (
            "-Djavax.net.ssl.keyStorePassword=Hunter2! -jar app.jar",
            "Hunter2!",
        ),
        (
            r#"{"Authorization": "Basic YWRtaW46c2VjcmV0cGFzcw=="}"#,
            "YWRtaW46",
        ),
        (
            "headers: {'Authorization': 'Basic YWRtaW46c2VjcmV0', 'Accept': 'json'}",
            "YWRtaW46",
        ),
        ("Authorization: YWRtaW46c2VjcmV0cGFzcw==", "YWRtaW46"),
        (
            "Proxy-Authorization: Negotiate YIIGhgYGKwYBBQUCoIIGejCC",
            "YIIGhgYG",
        ),
        (
            r#"{"headers":{"cookie":"sid=s%3Aabc123def456.sig"}}"#,
            "abc123def456",
        ),
        ("secret_key='django-insecure-abc123xyz'", "django-insecure"),
        (r#"{"secretKey": "abcDEF123456ghi"}"#, "abcDEF123456"),
        (
            "Ocp-Apim-Subscription-Key: 9f86d081884c7d65",
            "9f86d081884c7d65",
        ),
        ("DB_PASS=Hunter2! REDIS_AUTH=Hunter3!", "Hunter"),
        ("ADMIN_CREDENTIALS=admin:Hunter2!", "Hunter2!"),
        ("Api Key: 9f86d081884c7d65", "9f86d081884c7d65"),
        (":password => \"Hunter2!\"", "Hunter2!"),
        ("password := \"Hunter2!\"", "Hunter2!"),
        (r#"{"password": "pa\"ss"}"#, r#"\"ss"#),
        ("Driver={ODBC};Pwd={S3cr3t;Pwd};", "S3cr3t"),
        ("mysql -u root --password S3cretMy", "S3cretMy"),
        ("mysql -u root -pS3cretMy -h db", "S3cretMy"),
        ("sshpass -p 'S3cretSsh' ssh user@host", "S3cretSsh"),
        (
            "curl -u admin:Curl$ecret https://api.example.com",
            "Curl$ecret",
        ),
        ("redis-cli -a Hunter2! -h cache", "Hunter2!"),
        ("jdbc:oracle:thin:scott/tiger123@//db:1521/ORCL", "tiger123"),
        ("The password 'Hunter2!' is incorrect", "Hunter2!"),
        (
            "Error: token `abcdEFGH1234ijkl` is invalid",
            "abcdEFGH1234ijkl",
        ),
        ("password: `Hunter2!`", "Hunter2!"),
        (
            "SecretAccessKey wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "wJalrXUtn",
        ),
        ("Bearer: abcdEFGH1234ijkl", "abcdEFGH1234ijkl"),
        ("GET ?sv=2021&sig=abcDEF123%2Bxyz%3D&se=1", "abcDEF123"),
        (
            "SENTRY_DSN=https://abc123def456@o1.ingest.sentry.io/4",
            "abc123def456",
        ),
        (
            "https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXXXXXXXXXX",
            "XXXXXXXXXXXX",
        ),
        (
            "ya29.a0AfH6SMBx3abcdefghijklmnopqrstuvwxyz0123456789",
            "a0AfH6SMBx3",
        ),
        ("hvs.CAESIJabcdefghijklmnopqrstuvwxyz0123", "CAESIJ"),
    ] {
        let masked = r(text);
        assert!(!masked.contains(secret), "{text:?} -> {masked:?}");
        assert!(masked.contains(MASK), "{text:?} -> {masked:?}");
        // What is masked stays as it is when masked again (as the proxy does with texts that
        // quote each other): never `[REDACTED]]` or `[[REDACTED]]`.
        assert_eq!(r(&masked), masked, "{text:?}");
    }
}

/// Also found by that review: ordinary texts that lost their meaning to the mask. A word after
/// `key: ` is kept unless it looks like a secret; a page cursor is not a secret.
#[test]
fn leaves_go_style_error_chains_and_cursors_alone() {
    for text in [
        "oauth2: cannot fetch token: 400 Bad Request",
        "failed to refresh token: connection reset by peer",
        "invalid token: signature verification failed",
        "Password: must be at least 8 characters",
        "validation failed: username: required, email: required, password: required",
        "api_key: missing",
        "ERROR 1045 (28000): Access denied for user 'root'@'localhost' (using password: NO)",
        "page_token: abc123 is invalid",
        "nextPageToken=CiAKGjBpNDd2Nmp2Zml2cXRwYjBpOXA0",
        "sig=SIGTERM received",
        "bypass=true",
        "open /etc/app.password: permission denied",
        "oauth2: cannot fetch token: 401: Unauthorized",
        "token: x509: certificate has expired",
        "token: invalid_grant",
        "secret: my-app-secret not found",
        "password: too-short",
        "pwd: /home/user/project",
        "token: (nil)",
        "SyntaxError: Unexpected token 'export'",
        "Authorization: denied",
        "unexpected token github.com/foo/bar/internal/pkg",
    ] {
        assert_eq!(r(text), text);
    }
    // A word of its own, not a cursor; and your own pattern means what it says.
    assert_eq!(r("async_token=abcdef123"), "async_token=[REDACTED]");
    let own = Redactor::new(&RedactConfig {
        patterns: vec![r"nextToken=(?P<secret>\S+)".into()],
        ..RedactConfig::default()
    })
    .unwrap();
    assert_eq!(own.text("nextToken=abc123"), "nextToken=[REDACTED]");
    // A value after `key: ` that does look like a secret is still masked.
    assert_eq!(r("password: Hunter2!"), "password: [REDACTED]");
    assert_eq!(r("token: 0123456789ab"), "token: [REDACTED]");
}

#[test]
fn every_shipped_pattern_compiles_within_the_size_limit() {
    // They are compiled only when they first find something.
    for (name, pattern) in DEFAULT_PATTERNS {
        assert!(compile(pattern).is_ok(), "{name}");
    }
}

#[test]
fn masks_the_shapes_a_third_review_found() {
    let cases = [
        // JSON inside a string, as loggers and HTTP clients quote a request body.
        (
            r#""body":"{\"client_secret\":\"cs-9aQ2xyz\",\"password\":\"pW-4rT\"}""#,
            r#""body":"{\"client_secret\":\"[REDACTED]\",\"password\":\"[REDACTED]\"}""#,
        ),
        // A value runs to its `;` in a connection string, spaces and all.
        (
            "Server=db;User ID=sa;Password=Blue Horse 42!;Encrypt=True",
            "Server=db;User ID=sa;Password=[REDACTED];Encrypt=True",
        ),
        (
            r#"run --password "my long pass" now"#,
            r#"run --password "[REDACTED]" now"#,
        ),
        (
            "SecretAccessKey: wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "SecretAccessKey: [REDACTED]",
        ),
        (
            "aws configure set aws_secret_access_key wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "aws configure set aws_secret_access_key [REDACTED]",
        ),
        // Escaped line ends, as `repr` and debug dumps print them.
        (
            r"send: b'GET / HTTP/1.1\r\nX-Api-Key: abcKey123\r\nAccept: */*\r\n'",
            r"send: b'GET / HTTP/1.1\r\nX-Api-Key: [REDACTED]\r\nAccept: */*\r\n'",
        ),
        (
            "requests.get(url, auth=('admin', 'Tr0ub4dor&3'))",
            "requests.get(url, auth=('admin', '[REDACTED]'))",
        ),
        (
            r#"session.auth = HTTPBasicAuth("svc-user", "Zq8#mLp2vW")"#,
            r#"session.auth = HTTPBasicAuth("svc-user", "[REDACTED]")"#,
        ),
        (
            "metadata=[('x-api-key', 'GrpcKey789'), ('x-trace', 'abc')]",
            "metadata=[('x-api-key', '[REDACTED]'), ('x-trace', 'abc')]",
        ),
        (
            "map[Authorization:[Basic Z286cHc=] Accept:[*/*]]",
            "map[Authorization:[Basic [REDACTED]] Accept:[*/*]]",
        ),
        (
            "<user>bob</user><password>XmlPw1234</password>",
            "<user>bob</user><password>[REDACTED]</password>",
        ),
        (
            "near 'IDENTIFIED BY 'MyIdent1fied'' at line 1",
            "near 'IDENTIFIED BY '[REDACTED]'' at line 1",
        ),
        (
            r"send: 'AUTH PLAIN AGJvYkBleGFtcGxlLmNvbQBzM2NyZXQ=\r\n'",
            r"send: 'AUTH PLAIN [REDACTED]\r\n'",
        ),
        (
            "redirect to https://app/cb?code=SplxlOBeZQQYbYS6WxSbIA&state=xyz",
            "redirect to https://app/cb?code=[REDACTED]&state=xyz",
        ),
        (
            "GET https://api.trello.com/1/boards?key=3b9f2c7e1a4d8f6b0c5e9a2d7f1b4c8e&token=x failed",
            "GET https://api.trello.com/1/boards?key=[REDACTED]&token=[REDACTED] failed",
        ),
        (
            "APP_KEY=base64:q7XzAbc= missing",
            "APP_KEY=[REDACTED] missing",
        ),
        ("REDIS_PW=r3d1s is wrong", "REDIS_PW=[REDACTED] is wrong"),
        (
            "client-key-data: LS0tLS1CRUdJTiBSU0Eg",
            "client-key-data: [REDACTED]",
        ),
        (
            "sqlcmd -S db -U sa -P Sq1Cmd!Pw -Q x",
            "sqlcmd -S db -U sa -P [REDACTED] -Q x",
        ),
        (
            "mongosh -u admin -p M0ngoShPw",
            "mongosh -u admin -p [REDACTED]",
        ),
        (
            "ldapsearch -D cn=admin -w LdapPw99 -b dc=x",
            "ldapsearch -D cn=admin -w [REDACTED] -b dc=x",
        ),
        ("xapp-1-A0123456789-0123456789012-abcdef0123", "[REDACTED]"),
        ("dckr_pat_abcdefghijklmnopqrstuvwxyz0", "[REDACTED]"),
        (
            "lsv2_pt_0123456789abcdef0123456789abcdef_0123456789",
            "[REDACTED]",
        ),
        ("GOCSPX-abcdefghijklmnopqrstuvwxyz01", "[REDACTED]"),
        (
            "refresh 1//0gAbCdEfGhIjKlMnOpQrStUvWxYz0123456789 failed",
            "refresh [REDACTED] failed",
        ),
        (
            "headers={'X-Amz-Security-Token': b'IQoJb3JpZ2luX2VjEJr//////////wEaCXVz'}",
            "headers={'X-Amz-Security-Token': b'[REDACTED]'}",
        ),
        ("apikey: supabase-anon-0123", "apikey: [REDACTED]"),
        (
            "az login --service-principal -u 1111 -p Az~8Q~secretVal0e.xyz --tenant t",
            "az login --service-principal -u 1111 -p [REDACTED] --tenant t",
        ),
        (
            "htpasswd -b /etc/.htpasswd admin Htp4ssw0rd failed",
            "htpasswd -b /etc/.htpasswd admin [REDACTED] failed",
        ),
        (
            r"smbclient //srv/share -U 'CORP\svc%Smb$Pw77'",
            r"smbclient //srv/share -U 'CORP\svc%[REDACTED]'",
        ),
        (
            "ORA-12154 while connecting scott/T1gerPw@//db:1521/ORCL",
            "ORA-12154 while connecting scott/[REDACTED]@//db:1521/ORCL",
        ),
        (
            "smtp://alerts@example.com:AppPassw0rdXyz@smtp.gmail.com:587 rejected",
            "smtp://alerts@example.com:[REDACTED]@smtp.gmail.com:587 rejected",
        ),
        (
            "kubeadm join failed: token: abcdef.0123456789abcdef",
            "kubeadm join failed: token: [REDACTED]",
        ),
        (
            r#"<add key="ApiSecret" value="XmlAttrSecret9"/>"#,
            r#"<add key="ApiSecret" value="[REDACTED]"/>"#,
        ),
        (
            "proxy rejected credentials Basic dXNlcjpQYXNzdzByZA== for host",
            "proxy rejected credentials Basic [REDACTED] for host",
        ),
        (
            "GET /login?next=%2Fapi%3Fpassword%3DUrlEnc0dedPw%26x%3D1 failed",
            "GET /login?next=%2Fapi%3Fpassword%3D[REDACTED]%26x%3D1 failed",
        ),
        (
            "body=%7B%22password%22%3A%22UrlJs0nPw%22%7D",
            "body=%7B%22password%22%3A%22[REDACTED]%22%7D",
        ),
        (
            "redirect=postgres%3A%2F%2Fapp%3AEncUrlPw99%40db%3A5432",
            "redirect=postgres%3A%2F%2Fapp%3A[REDACTED]%40db%3A5432",
        ),
        (
            "header=Authorization%3A%20Bearer%20EncBearerTok12345",
            "header=Authorization%3A%20Bearer%20[REDACTED]",
        ),
        (
            "ALTER USER bob IDENTIFIED BY ArgOraPw1313;",
            "ALTER USER bob IDENTIFIED BY [REDACTED];",
        ),
    ];
    assert_masked_as(&cases);
}

#[test]
fn leaves_what_a_third_review_found_masked_needlessly() {
    let cases = [
        r#"SyntaxError: Unexpected token '<', "<!DOCTYPE "... is not valid JSON"#,
        "SyntaxError: Unexpected token '}', \"{\"a\":1,}\" is not valid JSON",
        "Bearer authentication is required",
        "Missing bearer credentials",
        "Invalid page token CiAKGjBpNDd2Nmp2Zml2cXRwYjBpOXA0",
        "pagination_token=CiAKGjBpNDd2Nmp2Zml2cXRwYjBpOXA0 expired",
        "http://localhost:3000?email=a@b.com",
        "auth=none",
        "tests: pass=12 fail=3",
        "ParseError: invalid token: 0x1F at line 3",
        "Request too large: token: 150000/128000",
        "on resource: arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/db-AbCdEf",
        "File GOOGLE_APPLICATION_CREDENTIALS=/home/u/keys/sa.json was not found",
        "Basic authentication failed",
    ];
    assert_kept(&cases);
}

#[test]
fn masks_the_shapes_a_fifth_review_found() {
    let cases = [
        (
            "Invalid access token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U: bad",
            "Invalid access token [REDACTED]: bad",
        ),
        (
            "auth failed with secret X7SlgV2M2l.d73J9IjSEW.mUZ3uKBm3vyHxa07d8T6",
            "auth failed with secret [REDACTED]",
        ),
        (
            "error loading TLS key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1234567890abcdef\n...",
            "error loading TLS key:\n[REDACTED]",
        ),
        ("invalid config: password: d5h;1bi;zO4Yw5TY18", "invalid config: password: [REDACTED]"),
        ("invalid config: password: ab,EaYR4HPKl003", "invalid config: password: [REDACTED]"),
        ("DB_PASSWORD=ab'cdUXYMN3wOQK20 rejected", "DB_PASSWORD=[REDACTED] rejected"),
        (
            r#"env: ["DB_PASSWORD=hunter2xx","PATH=/usr/bin","HOME=/root"]"#,
            r#"env: ["DB_PASSWORD=[REDACTED]","PATH=/usr/bin","HOME=/root"]"#,
        ),
        ("invalid config: password: ab,EaYR4HPKl003==", "invalid config: password: [REDACTED]"),
        (
            "environment: passwd: e/mGGI+W4FJCZ4m2E3xNpGLH (must be a mapping)",
            "environment: passwd: [REDACTED] (must be a mapping)",
        ),
        (
            "expired: connect.sid=s%3AHKz3aB9xQ2.Lm4 laravel_session=Kgk8ox5PqW2rT7yZ1aB3",
            "expired: connect.sid=[REDACTED] laravel_session=[REDACTED]",
        ),
        (
            "Command '['mysql', '-u', 'root', '-pY1ShB5JQlES2qyl7', '-e', 'SELECT 1']' failed",
            "Command '['mysql', '-u', 'root', '-p[REDACTED]', '-e', 'SELECT 1']' failed",
        ),
        (
            "htpasswd -b -c /etc/nginx/.htpasswd admin Q9XYNPkN9heejNvU failed",
            "htpasswd -b -c /etc/nginx/.htpasswd admin [REDACTED] failed",
        ),
        (
            "unauthorized (FLY_API_TOKEN=FlyV1 fo1_EghYsMGUBIxGOQuu1fCoTQXFFBXNo17KChxCO7gskuT)",
            "unauthorized (FLY_API_TOKEN=[REDACTED] [REDACTED])",
        ),
        (
            "401 - X-JFrog-Art-Api: cmVmdGtuOjAxOjE3mfwHzDZpYEgpheMY7Cf7xpuNTFiYy3r3LAczw1QvFVCD6Bq8",
            "401 - X-JFrog-Art-Api: [REDACTED]",
        ),
        (
            r#"Authorization: Digest username="admin", response="6629fae49393a05397450978507c4ef1""#,
            r#"Authorization: Digest username="admin", response="[REDACTED]""#,
        ),
        (
            r#"{"message": "API key not valid", "key": "vt0JL4himwzI5wKxm2UlsmwQHYVShFmC"}"#,
            r#"{"message": "API key not valid", "key": "[REDACTED]"}"#,
        ),
    ];
    assert_masked_as(&cases);
}

#[test]
fn masks_the_shapes_a_sixth_review_found() {
    let cases = [
        ("OPENAI_KEY=ok3Vq8Lm3Xz9Kp2Wd7 rejected", "OPENAI_KEY=[REDACTED] rejected"),
        (
            r#"{"SUPABASE_SERVICE_KEY": "sb1Vq8Lm3Xz9Kp2Wd7"}"#,
            r#"{"SUPABASE_SERVICE_KEY": "[REDACTED]"}"#,
        ),
        ("GITHUB_PAT=gp2vq8lm3xz9kp2wd7qq", "GITHUB_PAT=[REDACTED]"),
        ("approle login: secret_id=6a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d", "approle login: secret_id=[REDACTED]"),
        ("server.py --openai-key CL2Vq8Lm3Xz9 --port 8", "server.py --openai-key [REDACTED] --port 8"),
        ("server.py --pat CL3Vq8Lm3Xz9", "server.py --pat [REDACTED]"),
        ("gpg --batch --passphrase gp8Xk2Lm9Qz -d f", "gpg --batch --passphrase [REDACTED] -d f"),
        (
            "DETAIL:  Key (api_key)=(ak9Xq2Lm7Vb3) already exists.",
            "DETAIL:  Key (api_key)=([REDACTED]) already exists.",
        ),
        (
            "Duplicate entry 'dk3Xq2Lm7Vb' for key 'users.api_key'",
            "Duplicate entry '[REDACTED]' for key 'users.api_key'",
        ),
        (
            "[Parameters=[@__password_0='ef3Xq2Lm7' (Size = 4000)]",
            "[Parameters=[@__password_0='[REDACTED]' (Size = 4000)]",
        ),
        (
            r#"Variable "$token" of type "String!" got invalid value "gt4Pb7Mw"; Expected type "UUID"."#,
            r#"Variable "$token" of type "String!" got invalid value "[REDACTED]"; Expected type "UUID"."#,
        ),
        (
            "Property: spring.datasource.hikari.password\n    Value: \"sb5Xq2Lm\"",
            "Property: spring.datasource.hikari.password\n    Value: \"[REDACTED]\"",
        ),
        (
            r#"422: [{"type":"string_too_short","loc":["body","password"],"msg":"String should have at least 12 characters","input":"fa1Xq2"}]"#,
            r#"422: [{"type":"string_too_short","loc":["body","password"],"msg":"String should have at least 12 characters","input":"[REDACTED]"}]"#,
        ),
        (
            r#"{"errors":[{"type":"field","value":"ev1Xq2","msg":"Invalid value","path":"password","location":"body"}]}"#,
            r#"{"errors":[{"type":"field","value":"[REDACTED]","msg":"Invalid value","path":"password","location":"body"}]}"#,
        ),
        (
            r#"{"field":"password","rejectedValue":"sr1Xq2","code":"Size"}"#,
            r#"{"field":"password","rejectedValue":"[REDACTED]","code":"Size"}"#,
        ),
        (
            "ReplyError: WRONGPASS invalid username-password pair while running AUTH default Rp4Qz8Xc",
            "ReplyError: WRONGPASS invalid username-password pair while running AUTH default [REDACTED]",
        ),
        (
            "Stripe-Signature: t=1700000000,v1=5a57ff9c3e7fb8a1234567890abcdef12",
            "Stripe-Signature: [REDACTED]",
        ),
    ];
    assert_masked_as(&cases);
}

#[test]
fn masks_what_json_names_as_a_secret_beside_it_or_by_its_shape() {
    let mut v = json!({
        "env": {"OPENAI_KEY": "ok3Vq8Lm3Xz9Kp2Wd7", "SORT_KEY": "name", "primary_key": "u12345678"},
        "openaiKey": "ok4Vq8Lm3Xz9", "sortKey": "created_at", "pat": "gp2vq8lm3xz9kp2wd7",
        "errors": [
            {"field": "password", "rejectedValue": "sr1Xq2"},
            {"param": "api_key", "value": "pv1Xq2"},
            {"loc": ["body", "password"], "input": "fa1Xq2"},
            {"field": "email", "rejectedValue": "bob@example.com"}
        ],
        "args": ["--openai-key", "CL2Vq8Lm3Xz9", "--sort-key", "name", "--creds", "u:p"]
    });
    Redactor::defaults().value(&mut v);
    assert_eq!(
        v,
        json!({
            "env": {"OPENAI_KEY": "[REDACTED]", "SORT_KEY": "name", "primary_key": "u12345678"},
            "openaiKey": "[REDACTED]", "sortKey": "created_at", "pat": "[REDACTED]",
            "errors": [
                {"field": "password", "rejectedValue": "[REDACTED]"},
                {"param": "api_key", "value": "[REDACTED]"},
                {"loc": ["body", "password"], "input": "[REDACTED]"},
                {"field": "email", "rejectedValue": "bob@example.com"}
            ],
            "args": ["--openai-key", "[REDACTED]", "--sort-key", "name", "--creds", "[REDACTED]"]
        })
    );
}

#[test]
fn a_command_line_in_the_arguments_is_read_as_one() {
    let r = Redactor::defaults();
    let found = r.secrets_in_value(&json!({"command": "docker", "args": ["login", "-u", "bob", "-p", "dp1Xq7Lm9", "registry"]}));
    assert_eq!(found, ["dp1Xq7Lm9"]);
    let found = r
        .secrets_in_value(&json!({"command": "curl", "args": ["-u", "bob:cu3Vb9Jm", "https://x"]}));
    assert_eq!(found, ["cu3Vb9Jm"]);
    // A weak key's value shaped like a secret is carried too (the error text repeats it).
    let found = r.secrets_in_value(&json!({"user": "bob", "pass": "ps7Xk2Lm9"}));
    assert_eq!(found, ["ps7Xk2Lm9"]);
    assert!(r
        .secrets_in_value(&json!({"pass": "none", "sortKey": "name"}))
        .is_empty());
}

#[test]
fn leaves_what_the_fifth_reviews_shapes_could_take_for_secrets() {
    let cases = [
        "unexpected token github.com/org/pkg",
        "session=default",
        r#"{"key": "reports/q3.pdf"}"#,
        "token: 150000/128000",
        "password: too-short, try again",
        "Digest authentication failed",
        "supported auth: basic,bearer",
        "password: required,min=8",
        "token: expired;refresh",
        "allowed pass: ssh;https",
        "SORT_KEY=created_at",
        "PRIMARY_KEY: id",
        "server.py --sort-key name",
        "reset token\nalice12345",
    ];
    assert_kept(&cases);
}

#[test]
fn a_secret_flags_value_in_a_list_is_masked() {
    let mut args =
        serde_json::json!({"args": ["--user", "app", "--password", "Dr5t39By2H1rIQwz", "-v"]});
    Redactor::defaults().value(&mut args);
    assert_eq!(
        args,
        serde_json::json!({"args": ["--user", "app", "--password", "[REDACTED]", "-v"]})
    );
    // A flag after a secret's flag is a flag, not its value: the value after it is masked.
    let mut args = serde_json::json!(["--token", "--password", "Dr5t39By2H1rIQwz"]);
    Redactor::defaults().value(&mut args);
    assert_eq!(
        args,
        serde_json::json!(["--token", "--password", "[REDACTED]"])
    );
}

#[test]
fn the_arguments_strings_are_searched_apart() {
    let r = Redactor::defaults();
    // Read as one text, "token" and the next argument would be a key and its value.
    let found = r.secrets_in_value(&json!({"q": "reset token", "user": "alice12345"}));
    assert!(found.is_empty(), "{found:?}");
    let found = r.secrets_in_value(&json!({"q": "token: alice12345"}));
    assert_eq!(found, ["alice12345"]);
}

#[test]
fn with_no_pattern_nothing_is_masked_not_even_a_secrets_key() {
    let config = RedactConfig {
        defaults: false,
        patterns: Vec::new(),
        attempted_query: QueryDetail::Full,
    };
    let r = Redactor::new(&config).unwrap();
    let known = r.secrets_in_value(&json!({"password": "Dr5t39By2H1rIQwz"}));
    assert!(known.is_empty(), "{known:?}");
    let text = "login failed for Dr5t39By2H1rIQwz";
    assert_eq!(r.text_knowing(text, &["Dr5t39By2H1rIQwz".into()]), text);
}

#[test]
fn secret_keys_in_json_agree_with_those_in_text() {
    for key in [
        "pass",
        "DB_PASS",
        "pw",
        "auth",
        "x-auth",
        "credential",
        "Cookie",
        "passcode",
        "otp",
        "clientKey",
        "app_key",
        "x-functions-key",
        "openaiKey",
        "SUPABASE_SERVICE_KEY",
        "GITHUB_PAT",
    ] {
        assert!(names_a_secret(key), "{key}");
    }
    for key in [
        "pagination_token",
        "resumeToken",
        "author",
        "passenger",
        "primary_key",
        "sortKey",
        "routing_key",
        "progressToken",
        "csrf_token_name",
        "password_length",
        "token_type",
        "keys",
        "key",
        "patient",
        "pass_rate",
        "auth_type",
        "cookie_policy",
        "signature",
    ] {
        assert!(!names_a_secret(key), "{key}");
    }
    // Under a short word, text is masked; a count, a flag or a plain word stays.
    let mut v = json!({
        "pass": 12, "fail": 3, "pass_rate": 0.8, "auth_type": "oauth", "auth": "none",
        "x-auth": "Str0ngPa55", "DB_PASS": "hunter2hunter2", "secure_pass": true,
        "signature": "fn add(a: i32) -> i32"
    });
    Redactor::defaults().value(&mut v);
    assert_eq!(
        v,
        json!({
            "pass": 12, "fail": 3, "pass_rate": 0.8, "auth_type": "oauth", "auth": "none",
            "x-auth": "[REDACTED]", "DB_PASS": "[REDACTED]", "secure_pass": true,
            "signature": "fn add(a: i32) -> i32"
        })
    );
}

/// Found by a review of the patterns above: what they must still mask, and what they must not.
#[test]
fn the_new_patterns_neither_leak_nor_mask_plain_text() {
    let masked = [
        (
            "Protocol=https;AccountName=a;AccountKey=/Xk9Lq2Zp7Rt5Vw3Nm8Bc4Df6/Qs9Tu2Aa==;EndpointSuffix=core",
            "Protocol=https;AccountName=a;AccountKey=[REDACTED];EndpointSuffix=core",
        ),
        (
            "auth failed: client_secret=/k2Lp9Qz7Xr3Tv5Wn8Bm4Cd/6Fg1Hj0 for app",
            "auth failed: client_secret=[REDACTED] for app",
        ),
        (
            "login failed: password=S3cr(et!9 rejected",
            "login failed: password=[REDACTED] rejected",
        ),
        ("password=default", "password=[REDACTED]"),
        (
            "password=hunter2 was rejected for user bob",
            "password=[REDACTED] was rejected for user bob",
        ),
    ];
    for (text, want) in masked {
        assert_eq!(r(text), want, "{text}");
    }
    for text in [
        "Refused to load https://cdn.example.com/styles.ef46db3751d8e999.css (404)",
        "Feature not available on the Basic Subscription plan",
        "Basic configuration is missing",
        "NoSuchKey: GET https://storage.example.com/download?key=reports/2024/q3.pdf",
        "GET https://example.com/lookup?code=DEU failed: 404",
        "tls: failed to load client_key=certs/client.key: no such file",
        "upload failed for S3_KEY=uploads/2024/report.pdf: AccessDenied",
        "SORT_KEY=created_at is not indexed",
        "password: must-be-at-least-8",
        "deliver failed: smtp://ops@example.com:587,dev@example.com",
    ] {
        assert_eq!(r(text), text);
    }
}

#[test]
fn a_pattern_of_yours_that_can_match_nothing_is_refused() {
    for pattern in ["", r"\b", "(?P<secret>x)?", "^"] {
        let config = RedactConfig {
            patterns: vec![pattern.into()],
            ..RedactConfig::default()
        };
        let refused = Redactor::new(&config).unwrap_err();
        assert!(
            refused.contains("can match an empty text"),
            "{pattern}: {refused}"
        );
    }
}

#[test]
fn colour_codes_neither_hide_a_secret_nor_take_its_mask() {
    assert_eq!(
        r("\x1b[2mapi_key\x1b[0m=\x1b[35mAnsiKey456y\x1b[0m"),
        "api_key=[REDACTED]"
    );
    assert_eq!(
        r("  password: \x1b[32m'AnsiPw123x'\x1b[39m,"),
        "  password: '[REDACTED]',"
    );
    // A coloured text with no secret keeps its colours, and other escapes stay.
    let plain = "\x1b[32mready\x1b[0m \x1b[2K on port 3000";
    assert!(matches!(Redactor::defaults().text(plain), Cow::Borrowed(_)));
}

/// Found by a fourth review, which planted secrets in 310 shapes: each of these leaked.
#[test]
fn masks_the_shapes_a_fourth_review_found() {
    let leaked = [
        // Keys run together, and keys the list missed.
        ("authtoken: 2AbcNgrokAuthT0k", "authtoken: [REDACTED]"),
        ("NGROK_AUTHTOKEN=2NgrokEnvT0ken9", "NGROK_AUTHTOKEN=[REDACTED]"),
        ("NEW_RELIC_LICENSE_KEY=nrLic3nse0123456789", "NEW_RELIC_LICENSE_KEY=[REDACTED]"),
        ("MY_STRIPE_KEY=rzStr1peKeyXy rejected", "MY_STRIPE_KEY=[REDACTED] rejected"),
        ("licenseKey=LiCk3yAbc123 rejected", "licenseKey=[REDACTED] rejected"),
        ("SecretString: AwsS3cretStr1ng!", "SecretString: [REDACTED]"),
        ("requirepass Redis9ReqPass", "requirepass [REDACTED]"),
        ("X-ClickHouse-Key: chK3yAbc123xyz", "X-ClickHouse-Key: [REDACTED]"),
        // Not taken for a reference to a variable, nor for the key itself.
        ("password=$ecretPa55", "password=[REDACTED]"),
        ("password=sword", "password=[REDACTED]"),
        (r#"{"pass_phrase": "Phr4seVal", "ssh_key": "SshK3yVal"}"#, r#"{"pass_phrase": "[REDACTED]", "ssh_key": "[REDACTED]"}"#),
        // Values the key-colon-value shape spared.
        ("password: !Qaz2wsxEdc rejected", "password: [REDACTED] rejected"),
        ("credentials: admin:Wq7Zr2Lp9 rejected", "credentials: [REDACTED] rejected"),
        ("DB_PASSWORD=Xk9#mQ2;vL8pRtq9 (from .env)", "DB_PASSWORD=[REDACTED] (from .env)"),
        ("Server=db;User Id=sa;Password=Blue Tail Pw88!", "Server=db;User Id=sa;Password=[REDACTED]"),
        // Between the key and its value.
        ("os.environ['OPENAI_API_KEY'] = 'EnvSubscr1pt9'", "os.environ['OPENAI_API_KEY'] = '[REDACTED]'"),
        ("[password] => PhpPr1ntRPw", "[password] => [REDACTED]"),
        (r#"password: Some("RustOpt1onPw")"#, r#"password: Some("[REDACTED]")"#),
        (r#"{"password": ["ArrW4rappedPw"]}"#, r#"{"password": ["[REDACTED]"]}"#),
        ("ENV DB_PASSWORD DockerEnvPw77", "ENV DB_PASSWORD [REDACTED]"),
        ("invalid password Short9Pw for user bob", "invalid password [REDACTED] for user bob"),
        // On the next line.
        ("password: |\n  YamlBl0ckPw99\n", "password: |\n  [REDACTED]\n"),
        (
            "- name: POSTGRES_PASSWORD\n  value: K8sEnvVal9Pw",
            "- name: POSTGRES_PASSWORD\n  value: [REDACTED]",
        ),
        (
            "password\n  String should have at most 8 characters [type=string_too_long, input_value='Pyd4nticInput!', input_type=str]",
            "password\n  String should have at most 8 characters [type=string_too_long, input_value='[REDACTED]', input_type=str]",
        ),
        // XML, pairs and protocols.
        ("<wsse:Password Type=\"x\">WsseS0apPw!</wsse:Password>", "<wsse:Password Type=\"x\">[REDACTED]</wsse:Password>"),
        ("<property name=\"password\" value=\"SpringBeanPw7\"/>", "<property name=\"password\" value=\"[REDACTED]\"/>"),
        ("<entry key=\"db.password\">PropXmlPw66</entry>", "<entry key=\"db.password\">[REDACTED]</entry>"),
        ("[(b'x-api-key', b'HttpxByt3sK3y')]", "[(b'x-api-key', b'[REDACTED]')]"),
        ("auth=basic_auth(\"neo4j\", \"Neo4jB4sicPw\")", "auth=basic_auth(\"neo4j\", \"[REDACTED]\")"),
        ("command: { name: 'auth', args: [ 'default', 'IoR3disAuthPw' ] }", "command: { name: 'auth', args: [ 'default', '[REDACTED]' ] }"),
        ("ConvertTo-SecureString 'PsSecStr1ng!' -AsPlainText", "ConvertTo-SecureString '[REDACTED]' -AsPlainText"),
        // Headers, URLs and command lines.
        ("Authorization: Bot MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs", "Authorization: Bot [REDACTED]"),
        ("Authorization: Api-Key apiK3yVal0123", "Authorization: Api-Key [REDACTED]"),
        ("dial failed: root:GoMysqlDsn9@tcp(db:3306)/app", "dial failed: root:[REDACTED]@tcp(db:3306)/app"),
        ("postgresql://user:p#HashPw99@db/app", "postgresql://user:[REDACTED]@db/app"),
        ("POST https://hooks.slack.com/triggers/T0123ABC/1234567890/SlackTrigg3rSecretAbcdef", "POST https://hooks.slack.com/triggers/T0123ABC/1234567890/[REDACTED]"),
        ("mysql -u root -p'MyQuot3dPw!' -h db", "mysql -u root -p'[REDACTED]' -h db"),
        ("curl -uadmin:CurlN0Space9 https://x", "curl -uadmin:[REDACTED] https://x"),
        ("podman login -u bob -p PodmanL0ginPw quay.io", "podman login -u bob -p [REDACTED] quay.io"),
        ("skopeo copy --creds bob:SkopeoCr3ds9 docker://a", "skopeo copy --creds bob:[REDACTED] docker://a"),
        // Vendor tokens with no key before them.
        ("tavily tvly-dev-AbCdEf0123456789GhIjKl", "tavily [REDACTED]"),
        ("pinecone pcsk_AbCdEf0123456789_GhIjKlMnOpQrStUvWxYz0123456789AbCd", "pinecone [REDACTED]"),
        ("firecrawl fc-0123456789abcdef0123456789abcdef", "firecrawl [REDACTED]"),
    ];
    let wrong = leaked
        .into_iter()
        .filter(|(text, want)| r(text) != *want)
        .map(|(text, want)| format!("{text}\n  got  {}\n  want {want}", r(text)))
        .collect::<Vec<_>>();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    for key in [
        "authtoken",
        "PGPASSWORD",
        "clientsecret",
        "privatekey",
        "identitytoken",
    ] {
        assert!(names_a_secret(key), "{key}");
    }
    for key in ["nextpagetoken_count", "maxtoken", "primarykey", "keystone"] {
        assert!(!names_a_secret(key), "{key}");
    }
}

/// What the fourth review's patterns must leave as it is.
#[test]
fn leaves_what_the_fourth_review_found_masked_needlessly() {
    for text in [
        "invalid token: ExpiredSignatureError",
        "password: PasswordTooShortException",
        "authorization: insufficient_scope for repo acme/widgets",
        "Authorization: Unauthorized",
        r#"WWW-Authenticate: Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource""#,
        "auth: oauth2 not configured",
        "NEXT_PAGE_TOKEN=CiAKGjBpNDd2Nmp2Zml2cXRwYjBpOXA0 expired",
        "nextPageToken: CiAKGjBpNDd2Nmp2Zml2cXRwYjBpOXA0",
        "invalid token format detected",
        "password reset failed for user42",
        "Unexpected token u2028 in JSON at position 5",
        "Authorization: denied for client 12345",
        "tokens_used=1500 max_tokens=4096",
        "[token] expired",
        // Found by a review of these patterns for what they mask needlessly.
        "SyntaxError: Unexpected token '==='",
        "SyntaxError: Unexpected token 'let2'",
        "max_tokens\n  Input should be a valid integer [type=int_parsing, input_value='lots', input_type=str]",
        "npm error _authToken=${NPM_TOKEN}: Failed to replace env in config: ${NPM_TOKEN}",
        "client = OpenAI(api_key=api_key)",
        "couldn't find key password in Secret prod/postgres-credentials",
        "token read-only-2 lacks the scope",
        "dial tcp auth:443: connect: connection refused",
        r#"{"password": ["This password is too short. It must contain at least 8 characters."]}"#,
        "please run:  gh auth login\nAlternatively, populate the GH_TOKEN environment variable",
        "token 2024-05-01T10:00:00Z expired",
        "Bearer insufficient_scope",
        "GET https://x.example.com/api?key=user_profile_settings_v2 failed",
        "POST https://x.example.com/hooks/githubPushEventHandlerV2 failed",
        "Resource handler returned message: (RequestToken: 4f0e7a1c-2b3d-4e5f-8a9b-0c1d2e3f4a5b)",
        "OPENAI_API_KEY is not set. Set it with: export OPENAI_API_KEY=<your key>",
        "Usage: gh auth login --with-token < mytoken.txt",
        "password=*** (masked)",
    ] {
        assert_eq!(r(text), text);
    }
    // A found value that is a plain word is masked where it was found, not wherever it is.
    let docker =
        "superuser password is not specified. For example, \"-e POSTGRES_PASSWORD=password\"";
    let redactor = Redactor::defaults();
    let masked = redactor.text_knowing(docker, &redactor.secrets_in(docker));
    assert!(
        masked.starts_with("superuser password is not specified"),
        "{masked}"
    );
}

#[test]
fn json_names_pairs_and_run_together_keys_are_masked() {
    let mut v = json!({
        "env": [{"name": "DB_PASSWORD", "value": "K8sVal9Pw"}, {"name": "LOG_LEVEL", "value": "debug"}],
        "headers": [["X-Api-Key", "PairK3y9"], ["Accept", "text/plain"]],
        "missing": ["password", "email"],
        "cfg": {"PGPASSWORD": "PgPw9", "authtoken": "AuthT0k9", "pass_phrase": "Phr4se", "ssh_key": "SshK3y",
                "bearer": "B3arer", "max_tokens": 4096, "primary_key": "id"}
    });
    Redactor::defaults().value(&mut v);
    assert_eq!(
        v,
        json!({
            "env": [{"name": "DB_PASSWORD", "value": "[REDACTED]"}, {"name": "LOG_LEVEL", "value": "debug"}],
            "headers": [["X-Api-Key", "[REDACTED]"], ["Accept", "text/plain"]],
            "missing": ["password", "email"],
            "cfg": {"PGPASSWORD": "[REDACTED]", "authtoken": "[REDACTED]", "pass_phrase": "[REDACTED]",
                    "ssh_key": "[REDACTED]", "bearer": "[REDACTED]", "max_tokens": 4096, "primary_key": "id"}
        })
    );
}
