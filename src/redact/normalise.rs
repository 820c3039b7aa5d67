//! A text as the patterns read it: without ANSI colour codes, and with quotes that came escaped
//! as the quotes they stand for.

use std::borrow::Cow;

/// `text` as the patterns read it: without ANSI colour codes, and with quotes that came escaped
/// (HTML's `&quot;`, a JSON `\u0022` quoted once more) as quotes, so that
/// `{&quot;password&quot;:&quot;x&quot;}` is the `{"password":"x"}` it stands for. Borrowed when
/// there is nothing to undo. What is masked is this reading of the text.
pub(super) fn readable(text: &str) -> Cow<'_, str> {
    match without_colours(text) {
        Cow::Borrowed(text) => with_plain_quotes(text),
        Cow::Owned(text) => Cow::Owned(with_plain_quotes(&text).into_owned()),
    }
}

/// The escapes of `"` and `'` that error texts carry, and what they stand for.
const QUOTE_ESCAPES: &[(&str, char)] = &[
    ("&quot;", '"'),
    ("&#34;", '"'),
    ("&#x22;", '"'),
    ("\\u0022", '"'),
    ("&apos;", '\''),
    ("&#39;", '\''),
    ("&#x27;", '\''),
    ("\\u0027", '\''),
];

/// `text` with [`QUOTE_ESCAPES`] undone (case-insensitively); borrowed when it has none.
pub(super) fn with_plain_quotes(text: &str) -> Cow<'_, str> {
    let escape_at = |s: &str| {
        QUOTE_ESCAPES.iter().find_map(|&(escape, quote)| {
            let head = s.get(..escape.len())?;
            head.eq_ignore_ascii_case(escape)
                .then_some((escape.len(), quote))
        })
    };
    let mut plain = String::new();
    let mut from = 0;
    for (at, _) in text.match_indices(['&', '\\']) {
        let Some((len, quote)) = escape_at(&text[at..]).filter(|_| at >= from) else {
            continue;
        };
        plain.push_str(&text[from..at]);
        plain.push(quote);
        from = at + len;
    }
    if from == 0 {
        return Cow::Borrowed(text);
    }
    plain.push_str(&text[from..]);
    Cow::Owned(plain)
}

/// `text` without its ANSI colour and style codes (`ESC [ ... m`); borrowed when it has none.
fn without_colours(text: &str) -> Cow<'_, str> {
    if !text.contains('\x1b') {
        return Cow::Borrowed(text);
    }
    let mut plain = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("\x1b[") {
        plain.push_str(&rest[..at]);
        let code = &rest[at + 2..];
        let end = code.find(|c: char| !(c.is_ascii_digit() || c == ';'));
        rest = match end {
            Some(i) if code[i..].starts_with('m') => &code[i + 1..],
            // Not a colour code: kept as it is.
            _ => {
                plain.push_str("\x1b[");
                code
            }
        };
    }
    plain.push_str(rest);
    Cow::Owned(plain)
}
