//! Errors in files the user wrote, located as `file:line:col`.

use std::fmt;
use std::ops::Range;

/// The largest config or rule file read: far above any real one (the embedded rules are a few
/// hundred KiB in all).
pub const MAX_FILE: u64 = 8 << 20;

/// The bytes of a regular file of at most [`MAX_FILE`], opened without blocking (a FIFO put in
/// its place since it was looked at would otherwise wait for a writer).
fn read_regular(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let meta = file.metadata()?;
    // A FIFO (`<(...)` too) can only be read by waiting for its writer, which a reload must
    // not; a character device (`/dev/null`) reads at once, and the cap below bounds it.
    if !meta.is_file() && !meta.file_type().is_char_device() {
        return Err(std::io::Error::other(
            "not a regular file (a FIFO or `<(...)` cannot be reread: write it to a file)",
        ));
    }
    if meta.len() > MAX_FILE {
        return Err(std::io::Error::other(format!(
            "{} bytes, more than the {MAX_FILE} a config or rule file may have",
            meta.len()
        )));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(MAX_FILE + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_FILE {
        return Err(std::io::Error::other(
            "it grew past the size a config or rule file may have",
        ));
    }
    Ok(bytes)
}

/// A file's name (as it should appear in messages) and its text.
#[derive(Debug, Clone)]
pub struct SourceFile {
    pub name: String,
    pub text: String,
}

impl SourceFile {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Self {
        SourceFile {
            name: name.into(),
            text: text.into(),
        }
    }

    /// Reads a config or rule file from disk, naming it by the path given. Only a regular file
    /// (or a character device) of at most [`MAX_FILE`] is read: a FIFO would block the reader
    /// (at start, or a reload) until someone writes to it, `/dev/zero` would never end.
    pub fn read(path: &std::path::Path) -> Result<Self, Diagnostic> {
        let name = path.display().to_string();
        let problem = |line, col, message: String| Diagnostic {
            file: name.clone(),
            line,
            col,
            rule: None,
            message,
        };
        let bytes = read_regular(path).map_err(|e| problem(0, 0, format!("cannot read: {e}")))?;
        match String::from_utf8(bytes) {
            Ok(text) => Ok(SourceFile { name, text }),
            Err(e) => {
                // Located where the text stops being UTF-8.
                let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
                let text = std::str::from_utf8(valid).expect("valid up to here");
                let (line, col) = line_col(text, text.len());
                Err(problem(line, col, "not UTF-8 text".into()))
            }
        }
    }

    /// A diagnostic at a byte span of this file.
    pub fn diagnostic(
        &self,
        span: Option<Range<usize>>,
        rule: Option<&str>,
        message: impl Into<String>,
    ) -> Diagnostic {
        let (line, col) = span.map_or((1, 1), |s| line_col(&self.text, s.start));
        Diagnostic {
            file: self.name.clone(),
            line,
            col,
            rule: rule.map(str::to_owned),
            message: message.into(),
        }
    }

    /// A diagnostic for a TOML error in this file, on one line like every other. A regex (or
    /// a Windows path) written in double quotes is the usual cause of an invalid escape
    /// (`"\d"`): the message says how to write it instead.
    pub fn toml_diagnostic(&self, e: &toml::de::Error, rule: Option<&str>) -> Diagnostic {
        let mut message = e.message().trim_end().replace('\n', " ");
        if message.starts_with("invalid escape sequence") {
            message.push_str(
                " (in single quotes a backslash stays as written: '\\d+ files', 'C:\\Users'; \
                 in double quotes it is doubled: \"\\\\d+ files\")",
            );
        }
        self.diagnostic(e.span(), rule, message)
    }
}

/// One problem in one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub file: String,
    /// 1-based; 0 when the problem is the file as a whole (it cannot be read).
    pub line: usize,
    pub col: usize,
    /// The id of the rule the problem is in, where there is one.
    pub rule: Option<String>,
    pub message: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if self.line > 0 {
            write!(f, ":{}:{}", self.line, self.col)?;
        }
        write!(f, ": ")?;
        if let Some(rule) = &self.rule {
            write!(f, "rule '{}': ", printable(rule))?;
        }
        write!(f, "{}", self.message)
    }
}

/// `text` with its control characters escaped (`\n`, `\u{1b}`): an id read from a file must
/// not break a diagnostic into lines of its own making, or drive the terminal.
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains(char::is_control) {
        return text.into();
    }
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect::<String>()
        .into()
}

/// Every problem found in a set of files; loading fails as a whole when there is any.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

/// 1-based line and column (in characters) of a byte offset.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..floor_char_boundary(text, offset)];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let col = before[line_start..].chars().count() + 1;
    (line, col)
}

/// The first `bytes` of `text` at most, cut at a char boundary.
pub(crate) fn head(text: &str, bytes: usize) -> &str {
    &text[..floor_char_boundary(text, bytes.min(text.len()))]
}

/// The largest char boundary of `text` at or before `offset` (at most `text.len()`).
pub(crate) fn floor_char_boundary(text: &str, mut offset: usize) -> usize {
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_of_a_sane_size_in_utf8_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let message = |path: &std::path::Path| SourceFile::read(path).unwrap_err().to_string();
        // A FIFO would block the reader until someone writes to it.
        let fifo = dir.path().join("rules.toml");
        let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid C string.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
        assert!(
            message(&fifo).contains("not a regular file"),
            "{}",
            message(&fifo)
        );
        let zero = message(std::path::Path::new("/dev/zero"));
        assert!(zero.contains("grew past"), "{zero}");
        assert_eq!(
            SourceFile::read(std::path::Path::new("/dev/null"))
                .unwrap()
                .text,
            ""
        );
        let big = dir.path().join("big.toml");
        std::fs::File::create(&big)
            .unwrap()
            .set_len(MAX_FILE + 1)
            .unwrap();
        assert!(message(&big).contains("more than"), "{}", message(&big));
        let latin1 = dir.path().join("latin1.toml");
        std::fs::write(&latin1, b"[[rule]]\nid = \"caf\xe9\"\n").unwrap();
        assert_eq!(
            message(&latin1),
            format!("{}:2:10: not UTF-8 text", latin1.display())
        );
    }

    #[test]
    fn line_and_column() {
        let text = "a = 1\nbé = 2\n";
        assert_eq!(line_col(text, 0), (1, 1));
        assert_eq!(line_col(text, 6), (2, 1));
        assert_eq!(line_col(text, 9), (2, 3));
        assert_eq!(line_col(text, 1000), (3, 1));
    }

    #[test]
    fn display_names_file_line_col_and_rule() {
        let file = SourceFile::new("rules.toml", "[[rule]]\nid = \"x\"\n");
        let d = file.diagnostic(Some(9..10), Some("x"), "bad");
        assert_eq!(d.to_string(), "rules.toml:2:1: rule 'x': bad");
        let d = file.diagnostic(Some(9..10), Some("a\nb.toml:1:1: fine\u{1b}[2J"), "bad");
        assert_eq!(
            d.to_string(),
            "rules.toml:2:1: rule 'a\\nb.toml:1:1: fine\\u{1b}[2J': bad"
        );
    }
}
