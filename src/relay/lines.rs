//! Reading lines with a size limit.
//!
//! A line up to the limit is read whole and inspected. A longer one, or a long one the caller
//! lets go early, is streamed through in chunks, unparsed and unrewritten, so memory stays
//! bounded and a large answer reaches the client as it comes (`super::scan` follows those
//! chunks).

/// What one read produced.
#[derive(Debug, PartialEq, Eq)]
pub enum Read {
    /// A whole line (with its `\n`, unless the input ended without one).
    Line(Vec<u8>),
    /// The start of a line to stream: the first `limit` bytes of a longer one, or what was here
    /// when the caller let it go early. The rest follows through [`LineReader::pass_rest`].
    Long(Vec<u8>),
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

    /// Hands the rest of a [`Read::Long`] line to `each`, piece by piece as it is read, straight
    /// from the buffer; whether the line ended (`false`: the input ended or failed first). An
    /// error from `each` stops it there.
    pub fn pass_rest<E>(
        &mut self,
        mut each: impl FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<bool, E> {
        loop {
            if self.start == self.end {
                (self.start, self.end) = (0, 0);
                if !matches!(self.fill(), Ok(1..)) {
                    return Ok(false);
                }
            }
            let here = &self.buf[self.start..self.end];
            let (piece, ended) = match memchr::memchr(b'\n', here) {
                Some(i) => (&here[..=i], true),
                None => (here, false),
            };
            each(piece)?;
            self.start += piece.len();
            if ended {
                return Ok(true);
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;

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
            let (rest, ended) = rest_of(&mut reader);
            assert!(ended);
            assert_eq!([head, rest].concat(), long.as_bytes());
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
        assert_eq!(rest_of(&mut reader), (b"han eight\n".to_vec(), true));
        assert_eq!(reader.read_line(8).unwrap(), Read::Line(b"end".to_vec()));
        assert_eq!(reader.read_line(8).unwrap(), Read::Eof);
        assert_eq!(rest_of(&mut reader), (Vec::new(), false));
    }

    /// The rest of a long line, and whether it ended.
    fn rest_of<R: std::io::Read>(reader: &mut LineReader<R>) -> (Vec<u8>, bool) {
        let mut rest = Vec::new();
        let ended = reader.pass_rest(|piece| {
            rest.extend_from_slice(piece);
            Ok::<(), ()>(())
        });
        (rest, ended.unwrap())
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
            let (rest, ended) = rest_of(&mut reader);
            assert!(ended, "ended early");
            assert_eq!(
                [first, rest].concat(),
                format!("{}\n", "y".repeat(100_000)).into_bytes()
            );
            assert_eq!(
                reader.read_line(1024).unwrap(),
                Read::Line(b"next\n".to_vec())
            );
        }
    }
}
