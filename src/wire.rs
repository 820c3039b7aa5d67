//! JSON-RPC on the wire: one message per line, read through a borrowed envelope.
//!
//! The proxy must forward every message it does not rewrite byte for byte, so nothing here ever
//! re-serializes a message. [`parse`] borrows `id`, `params`, `result` and `error` as raw JSON
//! slices of the line; only a rewritten answer is built anew, by [`response_line`], which splices
//! the original `id` bytes back in.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

/// One JSON-RPC message, borrowed from its line.
#[derive(Debug)]
pub enum Message<'a> {
    Request {
        id: &'a RawValue,
        method: Cow<'a, str>,
        params: Option<&'a RawValue>,
    },
    Notification {
        method: Cow<'a, str>,
        params: Option<&'a RawValue>,
    },
    Response {
        id: &'a RawValue,
        result: &'a RawValue,
    },
    ErrorResponse {
        id: &'a RawValue,
        error: &'a RawValue,
    },
}

/// What a line turned out to be.
#[derive(Debug)]
pub enum Line<'a> {
    Message(Message<'a>),
    /// A JSON object or array that is not a single JSON-RPC message (a batch, an object with
    /// neither `method` nor `result`/`error`, an error response without an id): forwarded as is.
    OtherJson,
    /// No JSON-RPC message of any kind: not JSON at all (a banner, a `print`, a blank line), or
    /// a bare JSON value (`42`, `"starting"`, `null`, a server's `print(json.dumps(x))`).
    NotJson,
}

/// The members of a message the proxy reads. Read from an object only (serde would fill a
/// derived struct from an array too, by position: `[1,"ping"]` as a request), and a member given
/// twice counts with its last value, as JavaScript and Python clients read it (a derived struct
/// would reject the line, which the client then takes as the answer the proxy never settled).
#[derive(Default)]
struct Envelope<'a> {
    id: Option<&'a RawValue>,
    method: Option<Cow<'a, str>>,
    params: Option<&'a RawValue>,
    /// `"result": null` is a result (a present null), not a missing one; `"error": null` too.
    result: Option<&'a RawValue>,
    error: Option<&'a RawValue>,
}

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "lowercase")]
enum Field {
    Id,
    Method,
    Params,
    Result,
    Error,
    #[serde(other)]
    Other,
}

impl<'de> Deserialize<'de> for Envelope<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(EnvelopeVisitor)
    }
}

struct EnvelopeVisitor;

impl<'de> Visitor<'de> for EnvelopeVisitor {
    type Value = Envelope<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON-RPC message")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Envelope<'de>, A::Error> {
        let mut envelope = Envelope::default();
        while let Some(field) = map.next_key::<Field>()? {
            // `null` reads as `None` (absent), except for `result` and `error`: an answer with
            // `"error": null` is a broken answer, but an answer, which settles its request.
            match field {
                Field::Id => envelope.id = map.next_value()?,
                Field::Method => {
                    envelope.method = map.next_value::<Option<Text>>()?.map(|t| t.0);
                }
                Field::Params => envelope.params = map.next_value()?,
                Field::Result => envelope.result = Some(map.next_value()?),
                Field::Error => envelope.error = Some(map.next_value()?),
                Field::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(envelope)
    }
}

/// A string, borrowed from the line when it has no escapes.
struct Text<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Text<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct TextVisitor;
        impl<'de> Visitor<'de> for TextVisitor {
            type Value = Text<'de>;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }

            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Borrowed(s)))
            }

            fn visit_str<E: de::Error>(self, s: &str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(s.to_owned())))
            }
        }
        d.deserialize_str(TextVisitor)
    }
}

/// The line as UTF-8 text: itself, or (when it holds invalid UTF-8) its lossy reading, so that
/// a message with a broken string is still recognised and its request settled. The original
/// bytes are what gets forwarded.
pub fn text_of(line: &[u8]) -> Cow<'_, str> {
    // `from_utf8_lossy` alone would do, but checks valid text several times slower.
    match std::str::from_utf8(line) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(line),
    }
}

/// An upstream's line as the text the client gets: itself, or, when it holds invalid UTF-8
/// (which is not JSON), its lossy reading. Strict clients (the Python SDK) drop the whole
/// session over one invalid byte; U+FFFD in its place is the one change that keeps it.
pub fn repaired_text(line: Vec<u8>) -> String {
    String::from_utf8(line).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Whether a line, by its head, may be a JSON-RPC message: an object, or a batch of them. A
/// bare value (`42`, `"starting"`) or a banner never is.
pub fn may_be_message(head: &[u8]) -> bool {
    matches!(head.trim_ascii_start().first(), Some(b'{' | b'['))
}

/// The members of a batch (a JSON array of messages), borrowed from its line; `None` when
/// `line` is no array.
pub fn batch(line: &str) -> Option<Vec<&RawValue>> {
    if !line.trim_start().starts_with('[') {
        return None;
    }
    serde_json::from_str(line).ok()
}

/// Reads one line (with or without its line ending) as a JSON-RPC message. Text, not bytes:
/// validated once, its strings need no second check.
pub fn parse(line: &str) -> Line<'_> {
    let Ok(envelope) = serde_json::from_str::<Envelope>(line) else {
        return if may_be_message(line.as_bytes())
            && serde_json::from_str::<IgnoredAny>(line).is_ok()
        {
            Line::OtherJson
        } else {
            Line::NotJson
        };
    };
    // `"id": null` deserializes to None, which is what JSON-RPC means by it.
    let message = match envelope {
        Envelope {
            method: Some(method),
            id,
            params,
            ..
        } => match id {
            Some(id) => Message::Request { id, method, params },
            None => Message::Notification { method, params },
        },
        Envelope {
            id: Some(id),
            result: Some(result),
            ..
        } => Message::Response { id, result },
        Envelope {
            id: Some(id),
            error: Some(error),
            ..
        } => Message::ErrorResponse { id, error },
        _ => return Line::OtherJson,
    };
    Line::Message(message)
}

/// A request id as a table key. Two spellings of one id (`"a"` and `"\u0061"`, `1` and `1.0`)
/// are the same key, because clients compare ids by value; the original bytes are kept apart
/// for answering.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum IdKey {
    Str(String),
    /// An integral number (the usual id), kept as a number: no allocation.
    Int(i64),
    /// Any other number, by its canonical text.
    Num(String),
}

impl IdKey {
    /// The key for a raw id, or `None` for an id that is neither a string nor a number.
    pub fn new(raw: &RawValue) -> Option<IdKey> {
        let text = raw.get();
        // The usual id, an integer: no need for the JSON parser (the text is valid JSON, so
        // whatever `i64` reads is a JSON integer, and it reads each one as JSON means it).
        if let Ok(int) = text.parse::<i64>() {
            return Some(IdKey::Int(int));
        }
        if text.starts_with('"') {
            return serde_json::from_str::<String>(text).ok().map(IdKey::Str);
        }
        // An integer too large for i64, by its digits: as f64 (serde's reading without
        // arbitrary precision) two of them could be one key, and one request never answered.
        let digits = text.strip_prefix('-').unwrap_or(text);
        if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            return Some(IdKey::Num(text.to_owned()));
        }
        // Any other number (a fraction, an exponent) as f64, as JavaScript reads it.
        let number = serde_json::from_str::<f64>(text).ok()?;
        // Integral floats within f64's exact range compare equal to integers in JS.
        Some(
            if number.fract() == 0.0 && number.abs() < 9_007_199_254_740_992.0 {
                IdKey::Int(number as i64)
            } else {
                IdKey::Num(number.to_string())
            },
        )
    }
}

/// A complete response line `{"jsonrpc":"2.0","id":<id>,"result":<result>}\n`, with the id's
/// original bytes.
pub fn response_line(id: &RawValue, result: &serde_json::Value) -> Vec<u8> {
    let mut line = Vec::with_capacity(256);
    line.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    line.extend_from_slice(id.get().as_bytes());
    line.extend_from_slice(b",\"result\":");
    serde_json::to_writer(&mut line, result).expect("a Value always serializes");
    line.extend_from_slice(b"}\n");
    line
}

/// A complete response line around a `result` that is already JSON text, with the id's original
/// bytes.
pub fn response_line_json(id: &RawValue, result: &[u8]) -> Vec<u8> {
    answer_line_bytes(id, "result", result)
}

/// A complete answer line with a raw `result` or `error` (`key`) kept byte for byte, under
/// another id: a retry's answer going back under the client's id.
pub fn answer_line(id: &RawValue, key: &str, raw: &RawValue) -> Vec<u8> {
    answer_line_bytes(id, key, raw.get().as_bytes())
}

fn answer_line_bytes(id: &RawValue, key: &str, json: &[u8]) -> Vec<u8> {
    let mut line = Vec::with_capacity(id.get().len() + json.len() + 32);
    line.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    line.extend_from_slice(id.get().as_bytes());
    line.extend_from_slice(b",\"");
    line.extend_from_slice(key.as_bytes());
    line.extend_from_slice(b"\":");
    line.extend_from_slice(json);
    line.extend_from_slice(b"}\n");
    line
}

/// A complete error response line, with the id's original bytes.
pub fn error_line(id: &RawValue, code: i64, message: &str) -> Vec<u8> {
    let error = serde_json::json!({ "code": code, "message": message });
    let mut line = Vec::with_capacity(128);
    line.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    line.extend_from_slice(id.get().as_bytes());
    line.extend_from_slice(b",\"error\":");
    serde_json::to_writer(&mut line, &error).expect("a Value always serializes");
    line.extend_from_slice(b"}\n");
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(line: &str) -> &'static str {
        match parse(line) {
            Line::Message(Message::Request { .. }) => "request",
            Line::Message(Message::Notification { .. }) => "notification",
            Line::Message(Message::Response { .. }) => "response",
            Line::Message(Message::ErrorResponse { .. }) => "error",
            Line::OtherJson => "other",
            Line::NotJson => "not-json",
        }
    }

    #[test]
    fn recognizes_every_shape() {
        assert_eq!(
            kind(r#"{"jsonrpc":"2.0","id":0,"method":"ping"}"#),
            "request"
        );
        assert_eq!(
            kind(r#"{"method":"x","jsonrpc":"2.0","id":"a"}"#),
            "request"
        );
        assert_eq!(
            kind(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            "notification"
        );
        assert_eq!(
            kind(r#"{"jsonrpc":"2.0","id":null,"method":"x"}"#),
            "notification"
        );
        assert_eq!(kind(r#"{"result":{},"jsonrpc":"2.0","id":3}"#), "response");
        assert_eq!(
            kind(r#"{"jsonrpc":"2.0","id":3,"error":{"code":1}}"#),
            "error"
        );
        assert_eq!(
            kind(r#"{"jsonrpc":"2.0","id":3,"result":null}"#),
            "response"
        );
        // Broken, but an answer: it settles its request (JSON-RPC 1.0 sends both).
        assert_eq!(kind(r#"{"jsonrpc":"2.0","id":3,"error":null}"#), "error");
        assert_eq!(kind(r#"{"id":3,"result":{},"error":null}"#), "response");
        assert_eq!(
            kind(r#"{"jsonrpc":"2.0","id":null,"error":{"code":1}}"#),
            "other"
        );
        assert_eq!(kind(r#"[{"jsonrpc":"2.0","id":1,"method":"x"}]"#), "other");
        assert_eq!(kind(r#"[1,"ping"]"#), "other");
        assert_eq!(kind(r#" [7,null,null,{"isError":true}]"#), "other");
        assert_eq!(
            kind("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\r\n"),
            "response"
        );
        assert_eq!(kind("Server listening on stdio"), "not-json");
        // A bare value is JSON, but no message: a stray print of a server's.
        for bare in ["42", "\"starting server\"", "null", "true", " 3.14"] {
            assert_eq!(kind(bare), "not-json", "{bare}");
        }
        assert_eq!(kind(""), "not-json");
        assert_eq!(kind("{\"id\":1,"), "not-json");
    }

    #[test]
    fn a_member_given_twice_counts_with_its_last_value() {
        let Line::Message(Message::Response { id, result }) =
            parse(r#"{"jsonrpc":"2.0","id":1,"result":{"a":1},"id":2,"result":null}"#)
        else {
            panic!("not a response")
        };
        assert_eq!((id.get(), result.get()), ("2", "null"));
        assert_eq!(kind(r#"{"id":null,"method":"m","id":4}"#), "request");
        assert_eq!(kind(r#"{"id":4,"method":"m","method":null}"#), "other");
    }

    #[test]
    fn a_plain_method_is_borrowed() {
        let Line::Message(Message::Request { method, .. }) =
            parse(r#"{"id":1,"method":"tools/call"}"#)
        else {
            panic!("not a request")
        };
        assert!(matches!(method, Cow::Borrowed("tools/call")));
    }

    #[test]
    fn method_with_escapes_is_decoded() {
        let Line::Message(Message::Request { method, .. }) =
            parse(r#"{"id":1,"method":"tools\/call"}"#)
        else {
            panic!("not a request")
        };
        assert_eq!(method, "tools/call");
    }

    #[test]
    fn id_keys_compare_by_value() {
        let key = |s: &str| IdKey::new(&RawValue::from_string(s.to_owned()).unwrap());
        assert_eq!(key(r#""a""#), key(r#""\u0061""#));
        assert_eq!(key("1"), key("1.0"));
        assert_ne!(key("1"), key(r#""1""#));
        assert_eq!(key("0"), Some(IdKey::Int(0)));
        assert_eq!(
            key("123456789012345678901234567890"),
            key("123456789012345678901234567890")
        );
        assert_eq!(key("{}"), None);
        assert_eq!(key("42"), Some(IdKey::Int(42)));
        assert_eq!(key("-0"), key("0"));
        assert_eq!(key("-7"), key("-7.0"));
        assert_eq!(key("1.0e3"), key("1000"));
        assert_eq!(key("18446744073709551615"), key("18446744073709551615"));
        assert_ne!(key("18446744073709551615"), key("-1"));
        assert_eq!(key("0.5"), Some(IdKey::Num("0.5".into())));
        // Past i64, integers keep their digits: as f64 these two would be one key.
        assert_ne!(
            key("12345678901234567890123"),
            key("12345678901234567890124")
        );
        assert_eq!(key("-9223372036854775809"), key("-9223372036854775809"));
        assert_ne!(key("9223372036854775808"), key("-9223372036854775808"));
    }

    #[test]
    fn response_line_keeps_id_bytes() {
        let id = RawValue::from_string(r#""\u0061b""#.to_owned()).unwrap();
        let line = response_line(&id, &serde_json::json!({"isError": true}));
        assert_eq!(
            String::from_utf8(line).unwrap(),
            "{\"jsonrpc\":\"2.0\",\"id\":\"\\u0061b\",\"result\":{\"isError\":true}}\n"
        );
    }
}
