//! Message templates: literal text with `{name}` placeholders filled from a rule's named
//! captures and a few built-ins. Parsed once at load, so a placeholder that can never be filled
//! is a load error, not a surprise at run time.

/// Placeholders every template may use besides the rule's named captures.
pub const BUILTINS: &[&str] = &["tool", "text"];

#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Literal(String),
    Placeholder(String),
}

/// A parsed template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    pieces: Vec<Piece>,
}

/// Why a template does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    #[error("unclosed '{{' at offset {offset} (write '{{{{' for a brace)")]
    Unclosed { offset: usize },
    #[error("stray '}}' at offset {offset} (write '}}}}' for a brace)")]
    Stray { offset: usize },
    #[error(
        "placeholder '{{{0}}}': only named groups can be used, written (?P<name>...) in 'match' \
         and {{name}} here, not group numbers"
    )]
    Numbered(String),
    #[error(
        "placeholder '{{{0}}}' names no capture group of this rule's 'match' (built-ins: {builtins})",
        builtins = BUILTINS.join(", ")
    )]
    Unknown(String),
}

impl Template {
    /// Parses `text`; `{{` and `}}` stand for literal braces. `known` says which placeholder
    /// names may be used.
    pub fn parse(text: &str, known: impl Fn(&str) -> bool) -> Result<Template, TemplateError> {
        let mut pieces = Vec::new();
        let mut literal = String::new();
        let mut chars = text.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            match c {
                '{' if chars.peek().is_some_and(|&(_, n)| n == '{') => {
                    chars.next();
                    literal.push('{');
                }
                '}' if chars.peek().is_some_and(|&(_, n)| n == '}') => {
                    chars.next();
                    literal.push('}');
                }
                '{' => {
                    let rest = &text[i + 1..];
                    let end = rest
                        .find('}')
                        .ok_or(TemplateError::Unclosed { offset: i })?;
                    let name = rest[..end].trim();
                    if !name.is_empty() && name.bytes().all(|b| b.is_ascii_digit()) {
                        // Numbered groups are not looked up, whether or not the group exists.
                        return Err(TemplateError::Numbered(name.to_owned()));
                    }
                    if !known(name) {
                        return Err(TemplateError::Unknown(name.to_owned()));
                    }
                    if !literal.is_empty() {
                        pieces.push(Piece::Literal(std::mem::take(&mut literal)));
                    }
                    pieces.push(Piece::Placeholder(name.to_owned()));
                    for _ in 0..rest[..=end].chars().count() {
                        chars.next();
                    }
                }
                '}' => return Err(TemplateError::Stray { offset: i }),
                c => literal.push(c),
            }
        }
        if !literal.is_empty() {
            pieces.push(Piece::Literal(literal));
        }
        Ok(Template { pieces })
    }

    /// Fills the template; a placeholder whose value is absent (an optional capture that did
    /// not participate) becomes empty.
    pub fn render<'v>(&self, value: impl Fn(&str) -> Option<&'v str>) -> String {
        let mut out = String::new();
        for piece in &self.pieces {
            match piece {
                Piece::Literal(s) => out.push_str(s),
                Piece::Placeholder(name) => out.push_str(value(name).unwrap_or("")),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known(name: &str) -> bool {
        matches!(name, "path" | "tool")
    }

    #[test]
    fn fills_placeholders_and_escapes() {
        let t = Template::parse("{tool}: no file {path} {{literal}}", known).unwrap();
        let out = t.render(|n| match n {
            "tool" => Some("read"),
            "path" => Some("/a"),
            _ => None,
        });
        assert_eq!(out, "read: no file /a {literal}");
    }

    #[test]
    fn missing_value_renders_empty() {
        let t = Template::parse("[{path}]", known).unwrap();
        assert_eq!(t.render(|_| None), "[]");
    }

    #[test]
    fn rejects_unknown_placeholders_and_stray_braces() {
        let message = |text| Template::parse(text, known).unwrap_err().to_string();
        assert!(message("{nope}").contains("'{nope}'"));
        assert_eq!(
            message("a { b"),
            "unclosed '{' at offset 2 (write '{{' for a brace)"
        );
        assert_eq!(
            message("a } b"),
            "stray '}' at offset 2 (write '}}' for a brace)"
        );
    }

    #[test]
    fn a_group_number_is_said_to_be_no_name() {
        // Even when the rule's `match` has a group 1: only names are looked up.
        let e = Template::parse("got {1}", |_| true)
            .unwrap_err()
            .to_string();
        assert!(e.contains("only named groups can be used"), "{e}");
        assert!(e.contains("(?P<name>...)"), "{e}");
    }

    #[test]
    fn non_ascii_literals_survive() {
        let t = Template::parse("é{path}ü", known).unwrap();
        assert_eq!(t.render(|_| Some("→")), "é→ü");
    }
}
