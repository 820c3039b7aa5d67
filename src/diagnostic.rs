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

    /// Reads a file from disk, naming it by the path given.
    pub fn read(path: &std::path::Path) -> Result<Self, Diagnostic> {
        let name = path.display().to_string();
        match std::fs::read_to_string(path) {
            Ok(text) => Ok(SourceFile { name, text }),
            Err(e) => Err(Diagnostic {
                file: name,
                line: 0,
                col: 0,
                rule: None,
                message: format!("cannot read: {e}"),
            }),
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
            write!(f, "rule '{rule}': ")?;
        }
        write!(f, "{}", self.message)
    }
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
    }
}
