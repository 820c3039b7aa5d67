//! Reading a `CallToolResult` that may be a failure: its members, its failure text, the blocks
//! that are kept, and its `structuredContent`.
//!
//! Most failures are plain: `{"content":[{"type":"text","text":"..."}],"isError":true}` and
//! nothing else. Those are read without building a `Value` tree (which costs a hashed map per
//! object and a copy of every string); anything more (another member, another kind of block, a
//! member twice, an unexpected type) is read as a `Value`, as every result used to be. Both
//! readings give the same [`ReadResult`] for a plain result.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// A result object as the rewrite needs it.
#[derive(Debug, PartialEq)]
pub(super) struct ReadResult {
    /// The members in their order; a plain result's are placeholders (`null`), since the
    /// rewrite replaces both.
    pub members: Map<String, Value>,
    pub is_error: bool,
    /// The text blocks, joined by newlines.
    pub text: String,
    /// How many text blocks there are.
    pub text_blocks: usize,
    /// The other blocks of `content`, kept after the error.
    pub kept_blocks: Vec<Value>,
    /// The upstream's `structuredContent`, taken out of `members`.
    pub partial: Option<Value>,
}

/// Reads a result; `None` when it is no object, or is a task handle or `input_required`, which
/// pass untouched.
pub(super) fn read(raw: &RawValue) -> Option<ReadResult> {
    match serde_json::from_str::<Plain>(raw.get()) {
        Ok(plain) => Some(plain.into()),
        Err(_) => read_value(raw),
    }
}

fn read_value(raw: &RawValue) -> Option<ReadResult> {
    let mut members = match serde_json::from_str::<Value>(raw.get()) {
        Ok(Value::Object(members)) => members,
        Ok(_) => return None,
        // Valid JSON (the envelope was read) that serde_json will not build: nested deeper than
        // 128, or a number beyond f64. Said, because a failure in it goes on unrewritten.
        Err(e) => {
            tracing::warn!("a tool result the proxy cannot read ({e}): passed as it came");
            return None;
        }
    };
    if members.contains_key("task")
        || matches!(
            members.get("resultType").and_then(Value::as_str),
            Some("task" | "input_required")
        )
    {
        return None;
    }
    let is_error = members.get("isError") == Some(&Value::Bool(true));
    let (text, text_blocks, kept_blocks) = split_content(members.get("content"));
    let partial = members.remove("structuredContent");
    Some(ReadResult {
        members,
        is_error,
        text,
        text_blocks,
        kept_blocks,
        partial,
    })
}

/// The failure text (every text block, joined by newlines), how many text blocks it joins, and
/// the other blocks, which are kept. A bare string `content`, a legacy anti-pattern, counts as
/// text.
pub(super) fn split_content(content: Option<&Value>) -> (String, usize, Vec<Value>) {
    let mut texts = Vec::new();
    let mut kept = Vec::new();
    match content {
        Some(Value::Array(blocks)) => {
            for block in blocks {
                match (block.get("type").and_then(Value::as_str), block.get("text")) {
                    (Some("text"), Some(Value::String(text))) => texts.push(text.as_str()),
                    _ => kept.push(block.clone()),
                }
            }
        }
        Some(Value::String(text)) => texts.push(text.as_str()),
        _ => {}
    }
    (texts.join("\n"), texts.len(), kept)
}

/// A plain result: at most `content` (text blocks only) and `isError` (a boolean), each once.
struct Plain<'a> {
    /// The members in the order they came.
    order: Vec<Member>,
    texts: Vec<Cow<'a, str>>,
    is_error: bool,
}

#[derive(Deserialize, Clone, Copy, PartialEq)]
#[serde(field_identifier)]
enum Member {
    #[serde(rename = "content")]
    Content,
    #[serde(rename = "isError")]
    IsError,
}

/// `{"type":"text","text":"..."}`, each member once, nothing else.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TextBlock<'a> {
    #[serde(rename = "type")]
    _kind: TextKind,
    #[serde(borrow)]
    text: Cow<'a, str>,
}

#[derive(Deserialize)]
enum TextKind {
    #[serde(rename = "text")]
    Text,
}

impl<'de> Deserialize<'de> for Plain<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(PlainVisitor)
    }
}

struct PlainVisitor;

impl<'de> Visitor<'de> for PlainVisitor {
    type Value = Plain<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a plain CallToolResult")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Plain<'de>, A::Error> {
        let mut plain = Plain {
            order: Vec::with_capacity(2),
            texts: Vec::new(),
            is_error: false,
        };
        while let Some(member) = map.next_key::<Member>()? {
            if plain.order.contains(&member) {
                return Err(de::Error::custom("a member twice"));
            }
            plain.order.push(member);
            match member {
                Member::Content => {
                    let blocks: Vec<TextBlock<'de>> = map.next_value()?;
                    plain.texts = blocks.into_iter().map(|b| b.text).collect();
                }
                Member::IsError => plain.is_error = map.next_value()?,
            }
        }
        Ok(plain)
    }
}

impl From<Plain<'_>> for ReadResult {
    fn from(plain: Plain) -> ReadResult {
        let mut members = Map::new();
        for member in plain.order {
            let key = match member {
                Member::Content => "content",
                Member::IsError => "isError",
            };
            members.insert(key.to_owned(), Value::Null);
        }
        ReadResult {
            members,
            is_error: plain.is_error,
            text: plain.texts.join("\n"),
            text_blocks: plain.texts.len(),
            kept_blocks: Vec::new(),
            partial: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_results_read_as_their_values_do() {
        for text in [
            r#"{"content":[{"type":"text","text":"ENOENT"}],"isError":true}"#,
            r#"{"isError":false,"content":[{"text":"a\n\"b\"","type":"text"},{"type":"text","text":"c"}]}"#,
            r#"{ "content" : [ ] , "isError" : true }"#,
            r#"{"content":[{"type":"te\u0078t","text":"é"}],"is\u0045rror":true}"#,
            r#"{"isError":true}"#,
            r#"{}"#,
        ] {
            let raw = RawValue::from_string(text.to_owned()).unwrap();
            let plain = ReadResult::from(serde_json::from_str::<Plain>(text).unwrap());
            let mut value = read_value(&raw).unwrap();
            // The rewrite replaces both members: only their order matters.
            value.members.values_mut().for_each(|v| *v = Value::Null);
            assert_eq!(plain, value, "{text}");
        }
    }

    #[test]
    fn anything_more_is_read_as_a_value() {
        for text in [
            r#"{"content":[{"type":"text","text":"a"}],"isError":true,"isError":false}"#,
            r#"{"content":[{"type":"image","data":"AA=="}],"isError":true}"#,
            r#"{"content":[{"type":"text","text":"a","annotations":{}}],"isError":true}"#,
            r#"{"content":[{"type":"text","type":"text","text":"a"}],"isError":true}"#,
            r#"{"content":[{"type":"text","text":5}],"isError":true}"#,
            r#"{"content":"bare","isError":true}"#,
            r#"{"content":[],"isError":"true"}"#,
            r#"{"content":[],"isError":true,"_meta":{}}"#,
            r#"{"content":[],"isError":true,"structuredContent":{"x":1}}"#,
            r#"[1]"#,
        ] {
            assert!(serde_json::from_str::<Plain>(text).is_err(), "{text}");
        }
    }
}
