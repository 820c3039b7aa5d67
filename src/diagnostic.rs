//! Errors in files the user wrote, located as `file:line:col`.

use std::fmt;
use std::ops::Range;

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

    /// A file's bytes as text, or where they stop being UTF-8.
    pub fn from_bytes(name: String, bytes: Vec<u8>) -> Result<Self, Diagnostic> {
        match String::from_utf8(bytes) {
            Ok(text) => Ok(SourceFile { name, text }),
            Err(e) => {
                // Located where the text stops being UTF-8.
                let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
                let text = std::str::from_utf8(valid).expect("valid up to here");
                let (line, col) = line_col(text, text.len());
                Err(Diagnostic {
                    file: name,
                    line,
                    col,
                    rule: None,
                    message: "not UTF-8 text".into(),
                })
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
