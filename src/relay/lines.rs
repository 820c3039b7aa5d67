//! Reading lines with a size limit, and finding the id of a line too large to hold.
//!
//! A line up to the limit is read whole and inspected. A longer one is streamed through in
//! chunks, unparsed and unrewritten, so memory stays bounded; [`IdScanner`] follows the chunks
//! to learn which request it answers, so the session can forget that request.

use std::io::BufRead;

/// What one read produced.
#[derive(Debug, PartialEq, Eq)]
pub enum Read {
    /// A whole line (with its `\n`, unless the input ended without one).
    Line(Vec<u8>),
    /// The first `limit` bytes of a longer line; the rest follows through [`Chunk`]s.
    Oversized(Vec<u8>),
    Eof,
}

/// The next piece of an oversized line.
#[derive(Debug, PartialEq, Eq)]
pub enum Chunk {
    /// More of the line; `true` when it ends the line.
    Data(Vec<u8>, bool),
    Eof,
}

/// Appends from `buf` up to and including a newline, at most `room` bytes; returns
/// (consumed, found newline).
fn take(buf: &[u8], room: usize, out: &mut Vec<u8>) -> (usize, bool) {
    let window = &buf[..buf.len().min(room)];
    match memchr::memchr(b'\n', window) {
        Some(i) => {
            out.extend_from_slice(&window[..=i]);
            (i + 1, true)
        }
        None => {
            out.extend_from_slice(window);
            (window.len(), false)
        }
    }
}

/// One step of reading a line: takes from a freshly filled `buf` into `line`. Returns how many
/// bytes were used and, when the read is over, its outcome.
fn line_step(buf: &[u8], limit: usize, line: &mut Vec<u8>) -> (usize, Option<Read>) {
    if buf.is_empty() {
        let outcome = if line.is_empty() {
            Read::Eof
        } else {
            Read::Line(std::mem::take(line))
        };
        return (0, Some(outcome));
    }
    let (used, done) = take(buf, limit - line.len(), line);
    let outcome = if done {
        Some(Read::Line(std::mem::take(line)))
    } else if line.len() >= limit {
        Some(Read::Oversized(std::mem::take(line)))
    } else {
        None
    };
    (used, outcome)
}

/// One step of reading a chunk of an oversized line.
fn chunk_step(buf: &[u8]) -> (usize, Chunk) {
    if buf.is_empty() {
        return (0, Chunk::Eof);
    }
    let mut chunk = Vec::new();
    let (used, done) = take(buf, usize::MAX, &mut chunk);
    (used, Chunk::Data(chunk, done))
}

/// Reads one line of at most `limit` bytes from a blocking reader.
pub fn read_line(reader: &mut impl BufRead, limit: usize) -> std::io::Result<Read> {
    let mut line = Vec::new();
    loop {
        let (used, outcome) = line_step(reader.fill_buf()?, limit, &mut line);
        reader.consume(used);
        if let Some(outcome) = outcome {
            return Ok(outcome);
        }
    }
}

/// The next chunk of an oversized line, from a blocking reader.
pub fn read_chunk(reader: &mut impl BufRead) -> std::io::Result<Chunk> {
    let (used, chunk) = chunk_step(reader.fill_buf()?);
    reader.consume(used);
    Ok(chunk)
}

/// Where the scanner is in the top-level object.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Before the object, or after a `,`: a key comes next.
    #[default]
    Key,
    /// Reading a key's string.
    InKey,
    /// After a key, before its `:`; whether the key is `id`.
    Colon(bool),
    /// In a value; whether it is the id's.
    Value(bool),
}

/// Finds the top-level `"id"` of a JSON object fed in chunks, holding only the id's bytes.
#[derive(Debug, Default)]
pub struct IdScanner {
    depth: u32,
    in_string: bool,
    escaped: bool,
    state: State,
    key: Vec<u8>,
    value: Vec<u8>,
    found: Option<Vec<u8>>,
}

impl IdScanner {
    pub fn feed(&mut self, mut bytes: &[u8]) {
        while let Some((&b, rest)) = bytes.split_first() {
            if self.found.is_some() {
                return;
            }
            self.byte(b);
            bytes = rest;
            // Inside a string nobody needs (a result's text, megabytes long), jump to the next
            // quote or backslash instead of looking at every byte.
            if self.in_string
                && !self.escaped
                && !(self.depth == 1 && self.state != State::Value(false))
            {
                let skip = memchr::memchr2(b'"', b'\\', bytes).unwrap_or(bytes.len());
                bytes = &bytes[skip..];
            }
        }
    }

    fn byte(&mut self, b: u8) {
        let top = self.depth == 1;
        if top && self.state == State::Value(true) {
            self.value.push(b);
        }
        if self.in_string {
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_string = false;
                if top && self.state == State::InKey {
                    self.state = State::Colon(self.key == b"id");
                    return;
                }
            }
            if top && self.state == State::InKey {
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
            b'{' | b'[' => self.depth += 1,
            b'}' | b']' => {
                if top {
                    self.finish_value(true);
                }
                self.depth = self.depth.saturating_sub(1);
            }
            b':' if top => {
                if let State::Colon(is_id) = self.state {
                    self.state = State::Value(is_id);
                    self.value.clear();
                }
            }
            b',' if top => {
                self.finish_value(true);
                self.state = State::Key;
            }
            _ => {}
        }
    }

    /// The id's value ends at a `,` or `}` that is itself already in `value`.
    fn finish_value(&mut self, drop_last: bool) {
        if self.state == State::Value(true) && self.found.is_none() {
            if drop_last {
                self.value.pop();
            }
            self.found = Some(self.value.trim_ascii().to_vec());
        }
    }

    /// The id's raw JSON, once the scanner has passed it.
    pub fn id(&self) -> Option<&[u8]> {
        self.found.as_deref()
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

    #[test]
    fn lines_are_cut_at_the_limit() {
        let input = b"short\nlonger than eight\nend";
        let mut reader = &input[..];
        assert_eq!(
            read_line(&mut reader, 8).unwrap(),
            Read::Line(b"short\n".to_vec())
        );
        assert_eq!(
            read_line(&mut reader, 8).unwrap(),
            Read::Oversized(b"longer t".to_vec())
        );
        assert_eq!(
            read_chunk(&mut reader).unwrap(),
            Chunk::Data(b"han eight\n".to_vec(), true)
        );
        assert_eq!(
            read_line(&mut reader, 8).unwrap(),
            Read::Line(b"end".to_vec())
        );
        assert_eq!(read_line(&mut reader, 8).unwrap(), Read::Eof);
        assert_eq!(read_chunk(&mut reader).unwrap(), Chunk::Eof);
    }
}
