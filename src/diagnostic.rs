//! Errors in files the user wrote, located as `file:line:col`, and the severity word every
//! problem we print starts with (`error: `, `warning: `, `note: `), as rustc and cargo do.

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

/// How bad a problem is: the word each line we print about it starts with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// The command fails because of it.
    Error,
    /// Worth fixing; the command goes on.
    Warning,
    /// For information.
    Note,
}

impl Severity {
    pub const ALL: [Severity; 3] = [Severity::Error, Severity::Warning, Severity::Note];

    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        }
    }

    /// The word's colour at a terminal: bold red, bold yellow, bold cyan.
    pub fn style(self) -> anstyle::Style {
        let color = match self {
            Severity::Error => anstyle::AnsiColor::Red,
            Severity::Warning => anstyle::AnsiColor::Yellow,
            Severity::Note => anstyle::AnsiColor::Cyan,
        };
        anstyle::Style::new().bold().fg_color(Some(color.into()))
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `text` with the severity word that starts a line (`error:`, `warning:`, `note:`) coloured,
/// for a stream that strips the colour again where there must be none (`anstream`): the one
/// place the words get their colour, so that a log file or JSON never carries it.
pub fn paint(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 32);
    for line in text.split_inclusive('\n') {
        let word = Severity::ALL.into_iter().find(|s| {
            line.strip_prefix(s.as_str())
                .is_some_and(|r| r.starts_with(':'))
        });
        match word {
            Some(severity) => {
                let style = severity.style();
                let rest = &line[severity.as_str().len()..];
                out.push_str(&format!("{style}{severity}{style:#}{rest}"));
            }
            None => out.push_str(line),
        }
    }
    out
}

/// `text` as a problem to print: as it is when it starts with a severity word already (a
/// list of diagnostics), else after `severity: `.
pub fn labelled(severity: Severity, text: &str) -> String {
    let has_one = Severity::ALL.into_iter().any(|s| {
        text.strip_prefix(s.as_str())
            .is_some_and(|r| r.starts_with(": "))
    });
    if has_one {
        text.to_owned()
    } else {
        format!("{severity}: {text}")
    }
}

/// A diagnostic with the severity it is reported with (see [`Diagnostic::with`]).
pub struct Labelled<'a>(Severity, &'a Diagnostic);

impl fmt::Display for Labelled<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.0)?;
        self.1.located(f)
    }
}

impl Diagnostic {
    /// This problem, as one line starting with `severity` (a plain `Display` says `error`).
    pub fn with(&self, severity: Severity) -> Labelled<'_> {
        Labelled(severity, self)
    }

    fn located(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
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

/// `error: file:line:col: rule 'id': message`.
impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.with(Severity::Error).fmt(f)
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
        assert_eq!(d.to_string(), "error: rules.toml:2:1: rule 'x': bad");
        assert_eq!(
            d.with(Severity::Warning).to_string(),
            "warning: rules.toml:2:1: rule 'x': bad"
        );
        let d = file.diagnostic(Some(9..10), Some("a\nb.toml:1:1: fine\u{1b}[2J"), "bad");
        assert_eq!(
            d.to_string(),
            "error: rules.toml:2:1: rule 'a\\nb.toml:1:1: fine\\u{1b}[2J': bad"
        );
        let whole = Diagnostic {
            line: 0,
            ..file.diagnostic(None, None, "cannot read")
        };
        assert_eq!(whole.to_string(), "error: rules.toml: cannot read");
    }

    #[test]
    fn paint_colours_the_severity_word_that_starts_a_line_and_nothing_else() {
        let text = "error: a.toml:1:1: bad\nwarning: b\n  note: indented\nnote: c\nerrors: no\n";
        assert_eq!(
            paint(text),
            "\x1b[1m\x1b[31merror\x1b[0m: a.toml:1:1: bad\n\x1b[1m\x1b[33mwarning\x1b[0m: b\n  \
             note: indented\n\x1b[1m\x1b[36mnote\x1b[0m: c\nerrors: no\n"
        );
        assert_eq!(paint("plain"), "plain");
    }

    #[test]
    fn labelled_adds_the_word_only_where_there_is_none() {
        assert_eq!(labelled(Severity::Error, "bad"), "error: bad");
        assert_eq!(labelled(Severity::Error, "warning: x"), "warning: x");
        assert_eq!(labelled(Severity::Error, "errors: x"), "error: errors: x");
    }
}
