//! Following a JSON-RPC line that is streamed rather than held: [`IdScanner`] finds its
//! top-level id and tells an answer from a request, chunk by chunk, holding only the id's bytes;
//! [`Mentions`] finds a needle across the chunks' cuts.

/// The longest id [`IdScanner`] keeps: no id worth matching is longer.
const MAX_ID: usize = 1024;
/// How much of a key [`IdScanner`] keeps: keys are only compared with short names, which fit
/// even written all in escapes (`"\u006d..."` for `method`).
const MAX_KEY: usize = 48;

/// The longest method [`IdScanner`] keeps.
const MAX_METHOD: usize = 256;

/// Where the scanner is in the top-level object.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Before the object, or after a `,`: a key comes next.
    #[default]
    Key,
    /// Reading a key's string.
    InKey,
    /// After a key, before its `:`.
    Colon(Member),
    /// In a value.
    Value(Member),
}

/// The top-level members whose values the scanner keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Member {
    Id,
    Method,
    Other,
}

impl Member {
    /// How much of its value is kept, if it is kept at all.
    fn bound(self) -> Option<usize> {
        match self {
            Member::Id => Some(MAX_ID),
            Member::Method => Some(MAX_METHOD),
            Member::Other => None,
        }
    }
}

/// Follows the top level of a JSON object fed in chunks: finds its `"id"` and `"method"`
/// (holding only their bytes) and notes whether it has a `result` or `error` (an answer).
#[derive(Debug, Default)]
pub struct IdScanner {
    depth: u32,
    in_string: bool,
    escaped: bool,
    state: State,
    key: Vec<u8>,
    value: Vec<u8>,
    found: Option<Vec<u8>>,
    value_too_long: bool,
    method: Option<Vec<u8>>,
    has_method: bool,
    has_outcome: bool,
    /// The line is an array (a batch, or anything but a message).
    array: bool,
}

impl IdScanner {
    pub fn feed(&mut self, mut bytes: &[u8]) {
        while let Some((&b, rest)) = bytes.split_first() {
            self.byte(b);
            bytes = rest;
            // Inside a string nobody needs (a result's text, megabytes long), jump to the next
            // quote or backslash instead of looking at every byte.
            if self.in_string
                && !self.escaped
                && !(self.depth == 1 && self.state != State::Value(Member::Other))
            {
                let skip = memchr::memchr2(b'"', b'\\', bytes).unwrap_or(bytes.len());
                bytes = &bytes[skip..];
            }
        }
    }

    fn byte(&mut self, b: u8) {
        let top = self.depth == 1;
        // Bounded, so that a hostile line cannot grow them.
        let kept = match self.state {
            State::Value(member) if top => member.bound(),
            _ => None,
        };
        if let Some(bound) = kept {
            if self.value.len() <= bound {
                self.value.push(b);
            } else {
                self.value_too_long = true;
            }
        }
        if self.in_string {
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_string = false;
                if top && self.state == State::InKey {
                    let key = unescaped(&self.key);
                    let key = key.as_deref().unwrap_or(&self.key);
                    let member = match key {
                        b"id" => Member::Id,
                        b"method" => {
                            self.has_method = true;
                            Member::Method
                        }
                        b"result" | b"error" => {
                            self.has_outcome = true;
                            Member::Other
                        }
                        _ => Member::Other,
                    };
                    self.state = State::Colon(member);
                    return;
                }
            }
            if top && self.state == State::InKey && self.key.len() < MAX_KEY {
                self.key.push(b);
            }
            return;
        }
        match b {
            b'"' => {
                self.in_string = true;
                if top && self.state == State::Key {
                    self.state = State::InKey;
                    self.key.clear();
                }
            }
            b'{' | b'[' => {
                self.array |= self.depth == 0 && b == b'[';
                self.depth += 1;
            }
            b'}' | b']' => {
                if top {
                    self.finish_value(true);
                }
                self.depth = self.depth.saturating_sub(1);
            }
            b':' if top => {
                if let State::Colon(member) = self.state {
                    self.state = State::Value(member);
                    self.value.clear();
                    self.value_too_long = false;
                }
            }
            b',' if top => {
                self.finish_value(true);
                self.state = State::Key;
            }
            _ => {}
        }
    }

    /// A kept value ends at a `,` or `}` that is itself already in `value`. A member given
    /// twice counts with its last value, as clients read it (and `wire::parse`).
    fn finish_value(&mut self, drop_last: bool) {
        let State::Value(kept) = self.state else {
            return;
        };
        if kept.bound().is_none() {
            return;
        }
        if drop_last {
            self.value.pop();
        }
        // A value cut at the bound is none at all (an id must not match a shorter one).
        let value = if self.value_too_long {
            Vec::new()
        } else {
            self.value.trim_ascii().to_vec()
        };
        match kept {
            Member::Id => self.found = Some(value),
            _ => self.method = Some(value),
        }
    }

    /// The id's raw JSON, once the scanner has passed it.
    pub fn id(&self) -> Option<&[u8]> {
        self.found.as_deref().filter(|id| !id.is_empty())
    }

    /// The method, once the scanner has passed it: a JSON string, read as JSON reads it.
    pub fn method(&self) -> Option<String> {
        serde_json::from_slice(self.method.as_deref()?).ok()
    }

    /// Whether what was fed so far is a request: an object with a `method` and an id.
    pub fn is_request(&self) -> bool {
        self.has_method && self.id().is_some() && !self.array
    }

    /// Whether what was fed so far is an answer: an object with a `result` or an `error`, and no
    /// `method`.
    pub fn is_answer(&self) -> bool {
        self.has_outcome && !self.has_method && !self.array
    }
}

/// A key with escapes, as JSON reads it (`"\u0069d"` is `id`, as serde and every client read
/// it); `None` when it has none, or is cut at [`MAX_KEY`] and so matches no name anyway.
fn unescaped(raw: &[u8]) -> Option<Vec<u8>> {
    if !raw.contains(&b'\\') {
        return None;
    }
    let quoted = [&b"\""[..], raw, b"\""].concat();
    serde_json::from_slice::<String>(&quoted)
        .ok()
        .map(String::into_bytes)
}

/// Whether a needle occurs in bytes fed in chunks, across the cuts.
pub struct Mentions {
    finder: memchr::memmem::Finder<'static>,
    /// The last bytes fed, fewer than the needle's: a needle may start there.
    tail: Vec<u8>,
    found: bool,
}

impl Mentions {
    pub fn new(needle: &'static [u8]) -> Mentions {
        Mentions {
            finder: memchr::memmem::Finder::new(needle),
            tail: Vec::new(),
            found: false,
        }
    }

    pub fn feed(&mut self, bytes: &[u8]) {
        if self.found {
            return;
        }
        let keep = self.finder.needle().len() - 1;
        self.tail.extend_from_slice(&bytes[..bytes.len().min(keep)]);
        self.found = self.finder.find(&self.tail).is_some() || self.finder.find(bytes).is_some();
        if bytes.len() >= keep {
            self.tail.clear();
            self.tail.extend_from_slice(&bytes[bytes.len() - keep..]);
        } else {
            let excess = self.tail.len().saturating_sub(keep);
            self.tail.drain(..excess);
        }
    }

    pub fn found(&self) -> bool {
        self.found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id_of(text: &str, chunk: usize) -> Option<String> {
        let mut scanner = IdScanner::default();
        for piece in text.as_bytes().chunks(chunk) {
            scanner.feed(piece);
        }
        scanner
            .id()
            .map(|id| String::from_utf8(id.to_vec()).unwrap())
    }

    #[test]
    fn finds_the_top_level_id_wherever_it_is() {
        for chunk in [1, 3, 1000] {
            assert_eq!(
                id_of(r#"{"jsonrpc":"2.0","id":42,"result":{"id":7}}"#, chunk).as_deref(),
                Some("42")
            );
            assert_eq!(
                id_of(r#"{"result":{"content":[{"text":"\"id\":9, }"}],"id":1},"jsonrpc":"2.0","id":"a\"b"}"#, chunk)
                    .as_deref(),
                Some(r#""a\"b""#)
            );
            assert_eq!(id_of(r#"{ "id" : -3 }"#, chunk).as_deref(), Some("-3"));
            assert_eq!(id_of(r#"{"result":[1,{"id":2}]}"#, chunk), None);
        }
    }

    fn scanned(text: &str, chunk: usize) -> IdScanner {
        let mut scanner = IdScanner::default();
        for piece in text.as_bytes().chunks(chunk) {
            scanner.feed(piece);
        }
        scanner
    }

    #[test]
    fn tells_answers_from_requests_whatever_the_order() {
        for chunk in [1, 5, 1000] {
            let answer = |t| scanned(t, chunk).is_answer();
            assert!(answer(
                r#"{"result":{"method":"x"},"jsonrpc":"2.0","id":1}"#
            ));
            assert!(answer(r#"{"jsonrpc":"2.0","id":1,"error":{"code":-1}}"#));
            assert!(!answer(
                r#"{"jsonrpc":"2.0","id":1,"params":{"result":1},"method":"m"}"#
            ));
            assert!(!answer(r#"{"id":1,"result":{},"method":"m"}"#));
            assert!(!answer(r#"{"id":1,"params":{"error":2}}"#));
            assert_eq!(
                scanned(r#"{"id":1,"result":{},"id":2}"#, chunk).id(),
                Some(&b"2"[..]),
                "the last of two ids"
            );
            // No message is an array, even one that reads like keys and values.
            assert!(!answer(r#"["id":1,"result":{}]"#));
            assert!(!answer(r#" [{"id":1,"result":{}}]"#));
        }
    }

    #[test]
    fn keys_are_read_with_their_escapes_as_json_means_them() {
        let line = r#"{"jsonrpc":"2.0","\u0069d":7,"\u0072\u0065\u0073\u0075\u006c\u0074":{}}"#;
        for chunk in [1, 4, 1000] {
            let scanner = scanned(line, chunk);
            assert_eq!(scanner.id(), Some(&b"7"[..]), "chunks of {chunk}");
            assert!(scanner.is_answer(), "chunks of {chunk}");
            let request = r#"{"id":1,"\u006d\u0065\u0074\u0068\u006f\u0064":"m","result":{}}"#;
            assert!(!scanned(request, chunk).is_answer(), "chunks of {chunk}");
            // Escapes that are not a name: still no id.
            assert_eq!(scanned(r#"{"i\"d":1,"result":{}}"#, chunk).id(), None);
        }
    }

    #[test]
    fn an_id_past_the_bound_is_no_id() {
        let fits = format!("\"{}\"", "a".repeat(MAX_ID - 2));
        let long = format!("\"{}\"", "a".repeat(MAX_ID - 1));
        for id in [&fits, &long] {
            let line = format!(r#"{{"id":{id},"result":{{}}}}"#);
            let got = scanned(&line, 100).id().map(|i| i.to_vec());
            let expected = (id.len() <= MAX_ID).then(|| id.as_bytes().to_vec());
            assert_eq!(got, expected, "id of {} bytes", id.len());
        }
        let number = format!(r#"{{"result":{{}},"id":{}}}"#, "1".repeat(MAX_ID + 1));
        assert_eq!(
            scanned(&number, 64).id(),
            None,
            "cut, it would be another id"
        );
    }

    /// Any JSON value, deep enough to hide `id`, `method` and `result` keys below the top.
    fn any_json() -> impl proptest::strategy::Strategy<Value = serde_json::Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::from),
            any::<i64>().prop_map(serde_json::Value::from),
            "[a-z\"\\\\{}:, \u{e9}]{0,12}".prop_map(serde_json::Value::from),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::from),
                proptest::collection::vec(
                    (
                        prop_oneof![Just("id"), Just("method"), Just("result"), Just("x")],
                        inner
                    ),
                    0..4
                )
                .prop_map(|members| {
                    let map = members
                        .into_iter()
                        .map(|(k, v)| (k.to_owned(), v))
                        .collect();
                    serde_json::Value::Object(map)
                }),
            ]
        })
    }

    proptest::proptest! {
        /// Whatever the object and wherever the cuts fall, the scanner sees the top-level id
        /// and keys serde sees.
        #[test]
        fn the_scanner_agrees_with_serde(
            members in proptest::collection::vec(
                (proptest::prop_oneof![
                    proptest::strategy::Just("id"),
                    proptest::strategy::Just("method"),
                    proptest::strategy::Just("result"),
                    proptest::strategy::Just("error"),
                    proptest::strategy::Just("jsonrpc"),
                ], any_json()),
                0..5,
            ),
            spaced in proptest::bool::ANY,
            escaped in proptest::bool::ANY,
            chunk in 1usize..40,
        ) {
            let mut object = serde_json::Map::new();
            for (key, value) in members {
                object.insert(key.to_owned(), value);
            }
            let value = serde_json::Value::Object(object.clone());
            let text = if spaced {
                serde_json::to_string_pretty(&value).unwrap()
            } else {
                value.to_string()
            };
            // The same JSON with its names written in escapes (a string `"id"` stays `id`).
            let text = if escaped {
                text.replace("\"id\"", r#""\u0069d""#)
                    .replace("\"method\"", r#""m\u0065thod""#)
                    .replace("\"result\"", r#""\u0072esult""#)
            } else {
                text
            };
            let scanner = scanned(&text, chunk);
            let id = scanner.id().map(serde_json::from_slice::<serde_json::Value>);
            match object.get("id") {
                // Not an id JSON-RPC allows: it must not come out as one that matches.
                Some(structure) if structure.is_array() || structure.is_object() => {
                    let seen = id.and_then(Result::ok);
                    proptest::prop_assert!(!seen.is_some_and(|v| v.is_string() || v.is_number()));
                }
                expected => {
                    let seen = id.map(Result::unwrap);
                    proptest::prop_assert_eq!(seen.as_ref(), expected);
                }
            }
            let answer = (object.contains_key("result") || object.contains_key("error"))
                && !object.contains_key("method");
            proptest::prop_assert_eq!(scanner.is_answer(), answer);
            let method = object.get("method").and_then(serde_json::Value::as_str);
            let seen = scanner.method();
            proptest::prop_assert_eq!(seen.as_deref(), method);
            let request = object.contains_key("method") && object.contains_key("id");
            proptest::prop_assert_eq!(scanner.is_request(), request);
        }
    }

    #[test]
    fn mentions_are_found_across_cuts() {
        let text = format!(
            r#"{{"content":[{{"text":"{}"}}],"isError":true}}"#,
            "z".repeat(300)
        );
        for chunk in 1..=12 {
            let mut mentions = Mentions::new(b"\"isError\"");
            for piece in text.as_bytes().chunks(chunk) {
                mentions.feed(piece);
            }
            assert!(mentions.found(), "chunks of {chunk}");
            let mut none = Mentions::new(b"\"isError\"");
            for piece in text.replace("isError", "isErrxr").as_bytes().chunks(chunk) {
                none.feed(piece);
            }
            assert!(!none.found(), "chunks of {chunk}");
        }
    }
}
