//! A small JSON-with-comments parser that keeps where everything is: each value's byte span in
//! the source, and every comment. `install` edits client configs by replacing spans, so whatever
//! it does not touch (comments, key order, indentation, number spelling, escapes) stays byte for
//! byte. Accepts what VS Code's `mcp.json` accepts: JSON plus `//` and `/* */` comments and
//! trailing commas.

use std::ops::Range;

use serde_json::Value;

/// A parsed value and where it is.
#[derive(Debug, Clone)]
pub struct Node {
    pub span: Range<usize>,
    pub kind: Kind,
}

#[derive(Debug, Clone)]
pub enum Kind {
    Object(Vec<Member>),
    Array(Vec<Node>),
    String(String),
    /// Numbers, `true`, `false`, `null`: kept as their source text.
    Scalar,
}

#[derive(Debug, Clone)]
pub struct Member {
    pub key: String,
    /// The key with its quotes.
    pub key_span: Range<usize>,
    pub value: Node,
}

/// A whole document.
#[derive(Debug)]
pub struct Doc {
    pub root: Node,
    /// Every comment, in order.
    pub comments: Vec<Range<usize>>,
    /// Whether any array or object ends with a trailing comma.
    pub trailing_commas: bool,
}

/// A syntax error, located (1-based line and column, counted in characters).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    pub line: usize,
    pub col: usize,
    pub message: String,
}

impl std::fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.col, self.message)
    }
}

impl Node {
    /// The member `key` of an object (the last one, as JSON.parse does with duplicates).
    pub fn get(&self, key: &str) -> Option<&Member> {
        match &self.kind {
            Kind::Object(members) => members.iter().rev().find(|m| m.key == key),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match &self.kind {
            Kind::String(s) => Some(s),
            _ => None,
        }
    }

    /// The value as serde_json sees it (for comparing and inspecting, never for writing).
    pub fn to_value(&self, src: &str) -> Value {
        match &self.kind {
            Kind::Object(members) => Value::Object(
                members
                    .iter()
                    .map(|m| (m.key.clone(), m.value.to_value(src)))
                    .collect(),
            ),
            Kind::Array(items) => Value::Array(items.iter().map(|n| n.to_value(src)).collect()),
            Kind::String(s) => Value::String(s.clone()),
            Kind::Scalar => serde_json::from_str(&src[self.span.clone()]).unwrap_or(Value::Null),
        }
    }
}

/// Parses a JSON or JSONC document.
pub fn parse(src: &str) -> Result<Doc, SyntaxError> {
    let mut p = Parser {
        src,
        bytes: src.as_bytes(),
        pos: 0,
        comments: Vec::new(),
        trailing_commas: false,
        depth: 0,
    };
    // A UTF-8 byte order mark is tolerated (and kept, since nothing before the root is edited).
    if src.starts_with('\u{feff}') {
        p.pos = 3;
    }
    p.skip_trivia()?;
    let root = p.value()?;
    p.skip_trivia()?;
    if p.pos < p.bytes.len() {
        return Err(p.error("unexpected content after the end of the document"));
    }
    Ok(Doc {
        root,
        comments: p.comments,
        trailing_commas: p.trailing_commas,
    })
}

const MAX_DEPTH: usize = 256;

struct Parser<'a> {
    src: &'a str,
    bytes: &'a [u8],
    pos: usize,
    comments: Vec<Range<usize>>,
    trailing_commas: bool,
    depth: usize,
}

impl Parser<'_> {
    fn error(&self, message: impl Into<String>) -> SyntaxError {
        self.error_at(self.pos, message)
    }

    fn error_at(&self, pos: usize, message: impl Into<String>) -> SyntaxError {
        let before = &self.src[..pos.min(self.src.len())];
        let line = before.matches('\n').count() + 1;
        let col = before[before.rfind('\n').map_or(0, |i| i + 1)..]
            .chars()
            .count()
            + 1;
        SyntaxError {
            line,
            col,
            message: message.into(),
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn skip_trivia(&mut self) -> Result<(), SyntaxError> {
        loop {
            match self.peek() {
                Some(b' ' | b'\t' | b'\n' | b'\r') => self.pos += 1,
                Some(b'/') => {
                    let start = self.pos;
                    match self.bytes.get(self.pos + 1) {
                        Some(b'/') => {
                            let end = self.src[start..]
                                .find('\n')
                                .map_or(self.src.len(), |i| start + i);
                            self.pos = end;
                        }
                        Some(b'*') => match self.src[start + 2..].find("*/") {
                            Some(i) => self.pos = start + 2 + i + 2,
                            None => return Err(self.error("unterminated /* comment")),
                        },
                        _ => return Err(self.error("unexpected '/'")),
                    }
                    self.comments.push(start..self.pos);
                }
                _ => return Ok(()),
            }
        }
    }

    fn value(&mut self) -> Result<Node, SyntaxError> {
        let start = self.pos;
        match self.peek() {
            Some(b'{') => self.nested(|p| p.object_body()),
            Some(b'[') => self.nested(|p| p.array_body()),
            Some(b'"') => {
                let s = self.string()?;
                Ok(Node {
                    span: start..self.pos,
                    kind: Kind::String(s),
                })
            }
            Some(b't') => self.literal("true"),
            Some(b'f') => self.literal("false"),
            Some(b'n') => self.literal("null"),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => Err(self.error(format!(
                "expected a value, found '{}'",
                self.src[self.pos..].chars().next().unwrap_or(' ')
            ))),
            None => Err(self.error("unexpected end of file, expected a value")),
        }
    }

    fn nested(
        &mut self,
        body: impl FnOnce(&mut Self) -> Result<Kind, SyntaxError>,
    ) -> Result<Node, SyntaxError> {
        let start = self.pos;
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error("nested too deeply"));
        }
        self.pos += 1;
        let kind = body(self)?;
        self.depth -= 1;
        Ok(Node {
            span: start..self.pos,
            kind,
        })
    }

    fn object_body(&mut self) -> Result<Kind, SyntaxError> {
        let mut members = Vec::new();
        loop {
            self.skip_trivia()?;
            match self.peek() {
                Some(b'}') => {
                    if !members.is_empty() {
                        self.trailing_commas = true;
                    }
                    self.pos += 1;
                    return Ok(Kind::Object(members));
                }
                Some(b'"') => {}
                _ => return Err(self.error("expected a key in double quotes or '}'")),
            }
            let key_start = self.pos;
            let key = self.string()?;
            let key_span = key_start..self.pos;
            self.skip_trivia()?;
            if self.peek() != Some(b':') {
                return Err(self.error("expected ':' after the key"));
            }
            self.pos += 1;
            self.skip_trivia()?;
            let value = self.value()?;
            members.push(Member {
                key,
                key_span,
                value,
            });
            self.skip_trivia()?;
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Kind::Object(members));
                }
                _ => return Err(self.error("expected ',' or '}'")),
            }
        }
    }

    fn array_body(&mut self) -> Result<Kind, SyntaxError> {
        let mut items = Vec::new();
        loop {
            self.skip_trivia()?;
            if self.peek() == Some(b']') {
                if !items.is_empty() {
                    self.trailing_commas = true;
                }
                self.pos += 1;
                return Ok(Kind::Array(items));
            }
            items.push(self.value()?);
            self.skip_trivia()?;
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Kind::Array(items));
                }
                _ => return Err(self.error("expected ',' or ']'")),
            }
        }
    }

    fn literal(&mut self, word: &str) -> Result<Node, SyntaxError> {
        let start = self.pos;
        if self.src[start..].starts_with(word) {
            self.pos += word.len();
            Ok(Node {
                span: start..self.pos,
                kind: Kind::Scalar,
            })
        } else {
            Err(self.error("expected a value"))
        }
    }

    fn number(&mut self) -> Result<Node, SyntaxError> {
        let start = self.pos;
        while let Some(b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
        let text = &self.src[start..self.pos];
        if serde_json::from_str::<serde_json::Number>(text).is_err() {
            return Err(self.error_at(start, format!("invalid number '{text}'")));
        }
        Ok(Node {
            span: start..self.pos,
            kind: Kind::Scalar,
        })
    }

    /// A string starting at the opening quote; returns its decoded text.
    fn string(&mut self) -> Result<String, SyntaxError> {
        let start = self.pos;
        self.pos += 1;
        let mut out = String::new();
        loop {
            let Some(c) = self.src[self.pos..].chars().next() else {
                return Err(self.error_at(start, "unterminated string"));
            };
            match c {
                '"' => {
                    self.pos += 1;
                    return Ok(out);
                }
                '\\' => {
                    let esc_at = self.pos;
                    self.pos += 1;
                    let Some(e) = self.peek() else {
                        return Err(self.error_at(start, "unterminated string"));
                    };
                    self.pos += 1;
                    match e {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let hi = self.hex4(esc_at)?;
                            let code = if (0xD800..0xDC00).contains(&hi)
                                && self.src[self.pos..].starts_with("\\u")
                            {
                                let save = self.pos;
                                self.pos += 2;
                                let lo = self.hex4(esc_at)?;
                                if (0xDC00..0xE000).contains(&lo) {
                                    0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                                } else {
                                    self.pos = save;
                                    hi
                                }
                            } else {
                                hi
                            };
                            // A lone surrogate cannot be a Rust char; it only matters for
                            // comparisons, so it becomes U+FFFD there (the bytes are kept).
                            out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
                        }
                        _ => return Err(self.error_at(esc_at, "invalid escape in string")),
                    }
                }
                c if (c as u32) < 0x20 => {
                    return Err(self.error("control character in string (write it escaped)"))
                }
                c => {
                    out.push(c);
                    self.pos += c.len_utf8();
                }
            }
        }
    }

    fn hex4(&mut self, esc_at: usize) -> Result<u32, SyntaxError> {
        let digits = self.src.get(self.pos..self.pos + 4).unwrap_or("");
        match u32::from_str_radix(digits, 16) {
            Ok(v) if digits.len() == 4 && digits.bytes().all(|b| b.is_ascii_hexdigit()) => {
                self.pos += 4;
                Ok(v)
            }
            _ => Err(self.error_at(esc_at, "invalid \\u escape in string")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn plain_json_matches_serde() {
        let src = r#"{"a": [1, -2.5e3, true, null, "x\u00e9\ud83d\ude00\n"], "b": {}}"#;
        let doc = parse(src).unwrap();
        assert_eq!(
            doc.root.to_value(src),
            serde_json::from_str::<Value>(src).unwrap()
        );
        assert!(doc.comments.is_empty());
        assert!(!doc.trailing_commas);
    }

    #[test]
    fn comments_and_trailing_commas() {
        let src = "// top\n{\n  /* a */ \"a\": [1, 2,], // end\n  \"b\": 3,\n}\n";
        let doc = parse(src).unwrap();
        assert_eq!(doc.root.to_value(src), json!({"a": [1, 2], "b": 3}));
        assert_eq!(doc.comments.len(), 3);
        assert_eq!(&src[doc.comments[0].clone()], "// top");
        assert!(doc.trailing_commas);
    }

    #[test]
    fn spans_point_at_the_source() {
        let src = "{ \"k\" : \"v\\\"\" }";
        let doc = parse(src).unwrap();
        let m = doc.root.get("k").unwrap();
        assert_eq!(&src[m.key_span.clone()], "\"k\"");
        assert_eq!(&src[m.value.span.clone()], "\"v\\\"\"");
        assert_eq!(m.value.as_str(), Some("v\""));
    }

    #[test]
    fn errors_are_located() {
        let e = parse("{\n  \"a\": 1\n  \"b\": 2\n}").unwrap_err();
        assert_eq!((e.line, e.col), (3, 3));
        assert!(e.message.contains("expected ','"), "{e}");
        assert!(parse("{\"a\": }").is_err());
        assert!(parse("{} x").is_err());
        assert!(parse("{\"a\": 1 /* open").is_err());
        assert!(parse("").is_err());
        assert!(parse("[01x]").is_err());
    }
}
