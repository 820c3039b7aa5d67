//! Reading lines with a size limit, and finding the id of a line that is not held whole.
//!
//! A line up to the limit is read whole and inspected. A longer one, or a long one the caller
//! lets go early, is streamed through in chunks, unparsed and unrewritten, so memory stays
//! bounded and a large answer reaches the client as it comes; [`IdScanner`] follows the chunks
//! to learn which request it answers, so the session can forget that request.

/// What one read produced.
#[derive(Debug, PartialEq, Eq)]
pub enum Read {
    /// A whole line (with its `\n`, unless the input ended without one).
    Line(Vec<u8>),
    /// The start of a line to stream: the first `limit` bytes of a longer one, or what was here
    /// when the caller let it go early. The rest follows through [`Chunk`]s.
    Long(Vec<u8>),
    Eof,
}

/// The next piece of a [`Read::Long`] line.
#[derive(Debug, PartialEq, Eq)]
pub enum Chunk {
    /// More of the line; `true` when it ends the line.
    Data(Vec<u8>, bool),
    Eof,
}

/// How much a read asks for, and the buffer a reader starts with.
const READ_SIZE: usize = 64 << 10;

/// Reads lines from a pipe. Like a `BufReader`, but a long line grows in the reader's own buffer
/// and is handed over as it is, instead of being copied out piece by piece.
pub struct LineReader<R> {
    inner: R,
    /// `buf[start..end]` is read and not yet handed out; `buf` is initialised throughout.
    buf: Vec<u8>,
    start: usize,
    end: usize,
}

impl<R: std::io::Read> LineReader<R> {
    pub fn new(inner: R) -> LineReader<R> {
        LineReader {
            inner,
            buf: vec![0; READ_SIZE],
            start: 0,
            end: 0,
        }
    }

    /// Whether the next whole line is already here, so reading it will not wait.
    pub fn has_line(&self) -> bool {
        memchr::memchr(b'\n', &self.buf[self.start..self.end]).is_some()
    }

    /// Reads one line of at most `limit` bytes.
    pub fn read_line(&mut self, limit: usize) -> std::io::Result<Read> {
        self.read_line_or_let_go(limit, limit, |_| false)
    }

    /// Reads one line of at most `limit` bytes; once `soft` bytes of it are here without its
    /// end, asks `let_go` (once, with what is here) whether to hand that over as
    /// [`Read::Long`] now instead of holding the line whole.
    pub fn read_line_or_let_go(
        &mut self,
        soft: usize,
        limit: usize,
        let_go: impl FnOnce(&[u8]) -> bool,
    ) -> std::io::Result<Read> {
        let mut let_go = Some(let_go);
        // How much after `start` holds no newline: compacting moves `start`, not this.
        let mut scanned = 0;
        loop {
            let from = self.start + scanned;
            if let Some(i) = memchr::memchr(b'\n', &self.buf[from..self.end]) {
                let end = from + i + 1;
                return Ok(if end - self.start <= limit {
                    Read::Line(self.take(end))
                } else {
                    Read::Long(self.take(self.start + limit))
                });
            }
            let held = self.end - self.start;
            if held >= limit {
                return Ok(Read::Long(self.take(self.start + limit)));
            }
            if held >= soft {
                if let Some(ask) = let_go.take() {
                    if ask(&self.buf[self.start..self.end]) {
                        return Ok(Read::Long(self.take(self.end)));
                    }
                }
            }
            scanned = held;
            if self.fill()? == 0 {
                return Ok(if self.start == self.end {
                    Read::Eof
                } else {
                    Read::Line(self.take(self.end))
                });
            }
        }
    }

    /// The next piece of a [`Read::Long`] line: what is here up to its end, or the next read.
    pub fn read_chunk(&mut self) -> std::io::Result<Chunk> {
        if self.start == self.end && self.fill()? == 0 {
            return Ok(Chunk::Eof);
        }
        let here = &self.buf[self.start..self.end];
        Ok(match memchr::memchr(b'\n', here) {
            Some(i) => Chunk::Data(self.take(self.start + i + 1), true),
            None => Chunk::Data(self.take(self.end), false),
        })
    }

    /// Hands out `buf[start..end]`. A long line that starts the buffer is handed over whole
    /// (the few bytes after it move to a fresh buffer); anything else is copied out.
    fn take(&mut self, end: usize) -> Vec<u8> {
        if self.start == 0 && end > READ_SIZE {
            let mut fresh = vec![0; READ_SIZE.max(self.end - end)];
            fresh[..self.end - end].copy_from_slice(&self.buf[end..self.end]);
            let mut line = std::mem::replace(&mut self.buf, fresh);
            line.truncate(end);
            self.end -= end;
            return line;
        }
        let line = self.buf[self.start..end].to_vec();
        self.start = end;
        if self.start == self.end {
            (self.start, self.end) = (0, 0);
        }
        line
    }

    /// Reads more after `end`, making room first: what is unread moves to the front, and the
    /// buffer doubles when that is not enough. Returns how much was read (0 at the end).
    fn fill(&mut self) -> std::io::Result<usize> {
        if self.end == self.buf.len() {
            if self.start > 0 {
                self.buf.copy_within(self.start..self.end, 0);
                (self.start, self.end) = (0, self.end - self.start);
            }
            if self.buf.len() - self.end < READ_SIZE / 2 {
                self.buf.resize(self.buf.len() * 2, 0);
            }
        }
        loop {
            match self.inner.read(&mut self.buf[self.end..]) {
                Ok(n) => {
                    self.end += n;
                    return Ok(n);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }
}

/// The longest id [`IdScanner`] keeps, and how much of a key it looks at.
const MAX_ID: usize = 1024;
const MAX_KEY: usize = 16;

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

/// Follows the top level of a JSON object fed in chunks: finds its `"id"` (holding only the
/// id's bytes) and notes whether it has a `method` (a request or notification) or a `result` or
/// `error` (an answer).
#[derive(Debug, Default)]
pub struct IdScanner {
    depth: u32,
    in_string: bool,
    escaped: bool,
    state: State,
    key: Vec<u8>,
    value: Vec<u8>,
    found: Option<Vec<u8>>,
    id_too_long: bool,
    has_method: bool,
    has_outcome: bool,
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
                && !(self.depth == 1 && self.state != State::Value(false))
            {
                let skip = memchr::memchr2(b'"', b'\\', bytes).unwrap_or(bytes.len());
                bytes = &bytes[skip..];
            }
        }
    }

    fn byte(&mut self, b: u8) {
        let top = self.depth == 1;
        // Bounded, so that a hostile line cannot grow them: no id worth matching is longer, and
        // a key is only compared with short names.
        if top && self.state == State::Value(true) {
            if self.value.len() <= MAX_ID {
                self.value.push(b);
            } else {
                self.id_too_long = true;
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
                    match self.key.as_slice() {
                        b"method" => self.has_method = true,
                        b"result" | b"error" => self.has_outcome = true,
                        _ => {}
                    }
                    self.state = State::Colon(self.key == b"id");
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
            // An id cut at the bound is no id at all (it must not match a shorter one).
            self.found = Some(if self.id_too_long {
                Vec::new()
            } else {
                self.value.trim_ascii().to_vec()
            });
        }
    }

    /// The id's raw JSON, once the scanner has passed it.
    pub fn id(&self) -> Option<&[u8]> {
        self.found.as_deref().filter(|id| !id.is_empty())
    }

    /// Whether what was fed so far is an answer: it has a `result` or an `error`, no `method`.
    pub fn is_answer(&self) -> bool {
        self.has_outcome && !self.has_method
    }
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

    #[test]
    fn a_long_line_is_let_go_once_past_the_soft_limit() {
        let long = format!("{{\"text\":\"{}\"}}\n", "x".repeat(5000));
        let input = format!("short\n{long}next\n");
        for step in [7, 4096, READ_SIZE] {
            let mut asked = Vec::new();
            let mut reader = LineReader::new(Trickle(input.as_bytes(), step));
            let mut read = |reader: &mut LineReader<Trickle>, answer: bool| {
                reader
                    .read_line_or_let_go(1000, 1 << 20, |head| {
                        asked.push(head.len());
                        answer
                    })
                    .unwrap()
            };
            assert_eq!(read(&mut reader, true), Read::Line(b"short\n".to_vec()));
            if step >= input.len() {
                // It came whole with the first read: nothing to let go.
                assert_eq!(
                    read(&mut reader, true),
                    Read::Line(long.as_bytes().to_vec())
                );
                assert!(asked.is_empty());
                continue;
            }
            let Read::Long(head) = read(&mut reader, true) else {
                panic!("not let go")
            };
            assert!(head.len() >= 1000 && long.starts_with(std::str::from_utf8(&head).unwrap()));
            let mut rest = head;
            while let Chunk::Data(chunk, end) = reader.read_chunk().unwrap() {
                rest.extend_from_slice(&chunk);
                if end {
                    break;
                }
            }
            assert_eq!(rest, long.as_bytes());
            // Refused: held whole, asked once only.
            let mut reader = LineReader::new(Trickle(input.as_bytes(), step));
            assert_eq!(read(&mut reader, false), Read::Line(b"short\n".to_vec()));
            assert_eq!(
                read(&mut reader, false),
                Read::Line(long.as_bytes().to_vec())
            );
            assert_eq!(read(&mut reader, false), Read::Line(b"next\n".to_vec()));
            assert_eq!(asked.len(), 2, "step {step}: {asked:?}");
            assert!(asked.iter().all(|&n| n >= 1000));
        }
    }

    #[test]
    fn lines_are_cut_at_the_limit() {
        let input = b"short\nlonger than eight\nend";
        let mut reader = LineReader::new(&input[..]);
        assert_eq!(
            reader.read_line(8).unwrap(),
            Read::Line(b"short\n".to_vec())
        );
        assert!(reader.has_line(), "the next line came with the first read");
        assert_eq!(
            reader.read_line(8).unwrap(),
            Read::Long(b"longer t".to_vec())
        );
        assert_eq!(
            reader.read_chunk().unwrap(),
            Chunk::Data(b"han eight\n".to_vec(), true)
        );
        assert_eq!(reader.read_line(8).unwrap(), Read::Line(b"end".to_vec()));
        assert_eq!(reader.read_line(8).unwrap(), Read::Eof);
        assert_eq!(reader.read_chunk().unwrap(), Chunk::Eof);
    }

    /// A reader that hands out at most `step` bytes per read, as a pipe does.
    struct Trickle<'a>(&'a [u8], usize);

    impl std::io::Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            let n = self.0.len().min(self.1).min(out.len());
            out[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn long_and_short_lines_come_out_whole_whatever_the_reads() {
        let long = format!("{{\"text\":\"{}\"}}\n", "x".repeat(3 * READ_SIZE + 17));
        let lines = [
            "a\n".to_owned(),
            long.clone(),
            "b\n".to_owned(),
            long,
            "c".to_owned(),
        ];
        let input = lines.concat();
        for step in [1, 7, 4096, READ_SIZE, 1 << 20] {
            let mut reader = LineReader::new(Trickle(input.as_bytes(), step));
            for line in &lines {
                assert_eq!(
                    reader.read_line(1 << 20).unwrap(),
                    Read::Line(line.as_bytes().to_vec()),
                    "step {step}"
                );
            }
            assert_eq!(reader.read_line(1 << 20).unwrap(), Read::Eof);
        }
    }

    #[test]
    fn an_oversized_line_streams_and_the_next_one_is_whole() {
        let input = format!("{}\nnext\n", "y".repeat(100_000));
        for step in [3, 4096, READ_SIZE] {
            let mut reader = LineReader::new(Trickle(input.as_bytes(), step));
            let Read::Long(first) = reader.read_line(1024).unwrap() else {
                panic!("not cut")
            };
            let mut streamed = first;
            loop {
                match reader.read_chunk().unwrap() {
                    Chunk::Data(chunk, end) => {
                        streamed.extend_from_slice(&chunk);
                        if end {
                            break;
                        }
                    }
                    Chunk::Eof => panic!("ended early"),
                }
            }
            assert_eq!(streamed, format!("{}\n", "y".repeat(100_000)).into_bytes());
            assert_eq!(
                reader.read_line(1024).unwrap(),
                Read::Line(b"next\n".to_vec())
            );
        }
    }
}
