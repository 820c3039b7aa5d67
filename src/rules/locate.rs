//! Where things are in a rule file's text: line and column of an offset, and the id of the
//! rule around an offset when the file does not deserialize (a TOML error still names its rule).

use std::sync::LazyLock;

use regex::Regex;

use crate::diagnostic::line_col;

/// [`line_col`] for the many offsets of one file (every rule and example): the line starts are
/// found once instead of counting from the top each time.
pub(super) struct Lines<'t> {
    text: &'t str,
    /// Byte offset of each line's start.
    starts: Vec<usize>,
}

impl<'t> Lines<'t> {
    pub(super) fn new(text: &'t str) -> Self {
        let newlines = memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1);
        Lines {
            text,
            starts: std::iter::once(0).chain(newlines).collect(),
        }
    }

    /// 1-based line and column (in characters) of a byte offset, as [`line_col`] gives them.
    pub(super) fn line_col(&self, offset: usize) -> (usize, usize) {
        if !self.text.is_char_boundary(offset.min(self.text.len())) {
            return line_col(self.text, offset);
        }
        let offset = offset.min(self.text.len());
        let line = self.starts.partition_point(|&start| start <= offset);
        let col = self.text[self.starts[line - 1]..offset].chars().count() + 1;
        (line, col)
    }
}

/// The id of the `[[rule]]` table around a byte offset, found in the text itself: a file that
/// does not deserialize has no parsed rules to ask. The table is the last header up to the end
/// of the offset's line (an error at a header points at the header); a `[[rule.example]]`
/// belongs to the rule before it; any other table is no rule.
pub(super) fn rule_id_around(text: &str, offset: usize) -> Option<String> {
    static HEADER: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?m)^[ \t]*(\[\[?)[ \t]*([^\]\n]*?)[ \t]*\]").expect("valid")
    });
    static ID: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r#"(?m)^\s*id\s*=\s*["']([^"'\n]*)["']"#).expect("valid"));
    let offset = offset.min(text.len());
    let line_end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
    let mut rule = None;
    for header in HEADER.captures_iter(&text[..line_end]) {
        match (&header[1], &header[2]) {
            ("[[", "rule") => rule = Some(header.get(0).expect("whole").end()),
            ("[[", "rule.example") => {}
            _ => rule = None,
        }
    }
    let body = &text[rule?..];
    let body = HEADER.find(body).map_or(body, |next| &body[..next.start()]);
    ID.captures(body).map(|c| c[1].to_owned())
}

/// The id of the inline rule (`rule = [{ id = "...", ... }]`) around a byte offset, in a file
/// that is TOML but not a rule file. No table headers to go by there: the TOML's own spans.
pub(super) fn inline_rule_id_around(text: &str, offset: usize) -> Option<String> {
    let doc = toml_edit::ImDocument::parse(text).ok()?;
    let rules = doc.get("rule")?.as_array()?;
    let rule = rules
        .iter()
        .filter_map(toml_edit::Value::as_inline_table)
        .find(|rule| rule.span().is_some_and(|span| span.contains(&offset)))?;
    rule.get("id")?.as_str().map(str::to_owned)
}

#[cfg(test)]
mod tests {
    #[test]
    fn lines_agree_with_line_col() {
        let text = "a\nbé\n\nxyz\n";
        let lines = super::Lines::new(text);
        for offset in 0..=text.len() + 2 {
            assert_eq!(
                lines.line_col(offset),
                crate::diagnostic::line_col(text, offset),
                "{offset}"
            );
        }
    }
}

/// The text of the `[[rule]]` table written around 1-based `line` (its `id`'s), as written:
/// from the comment lines just above its header to its last line of its own (its
/// `[[rule.example]]` tables included), without the blank and comment lines that lead to the
/// next table. None when `line` is in no `[[rule]]` table.
pub fn written_rule(text: &str, line: usize) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let at = line.checked_sub(1).filter(|&i| i < lines.len())?;
    let is_header = |l: &str| l.trim_start().starts_with('[');
    let is_rule = |l: &str| {
        let l = l.trim_start();
        l.starts_with("[[rule]]") || l.starts_with("[[ rule ]]")
    };
    let is_own = |l: &str| {
        let l = l.trim_start();
        l.starts_with("[[rule.") || l.starts_with("[rule.")
    };
    let header = (0..=at).rev().find(|&i| is_header(lines[i]))?;
    // A sub-table of the rule (an example) above `line` leads back to the rule's header.
    let header = (0..=header)
        .rev()
        .find(|&i| is_header(lines[i]) && !is_own(lines[i]))?;
    if !is_rule(lines[header]) {
        return None;
    }
    let mut start = header;
    while start > 0 && lines[start - 1].trim_start().starts_with('#') {
        start -= 1;
    }
    let mut end = (header + 1..lines.len())
        .find(|&i| is_header(lines[i]) && !is_own(lines[i]))
        .unwrap_or(lines.len());
    while end > header + 1 {
        let last = lines[end - 1].trim();
        if last.is_empty() || last.starts_with('#') {
            end -= 1;
        } else {
            break;
        }
    }
    Some(lines[start..end].join("\n") + "\n")
}

#[cfg(test)]
mod written_rule_tests {
    use super::written_rule;

    const FILE: &str = "# the file's header\n\ntier = \"meaning\"\n\n# the first rule\n# in two lines\n[[rule]]\nid = \"a\"\nmatch = 'x'\n  [[rule.example]]\n  text = \"x\"\n\n# the second rule\n[[rule]]\nid = \"b\"\nmatch = 'y'\n";

    #[test]
    fn a_rule_is_shown_with_its_comment_and_examples_and_nothing_of_the_next() {
        assert_eq!(
            written_rule(FILE, 8).as_deref(),
            Some(
                "# the first rule\n# in two lines\n[[rule]]\nid = \"a\"\nmatch = 'x'\n  [[rule.example]]\n  text = \"x\"\n"
            )
        );
        assert_eq!(
            written_rule(FILE, 15).as_deref(),
            Some("# the second rule\n[[rule]]\nid = \"b\"\nmatch = 'y'\n")
        );
        assert_eq!(written_rule(FILE, 3), None, "not in a rule");
        assert_eq!(written_rule(FILE, 99), None);
    }
}
