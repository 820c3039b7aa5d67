//! What a business verdict tells the user: why the action is not allowed and what to do instead,
//! in the failure's own words. Nothing is invented: a text that says no reason gets no
//! `userMessage`, a text that names no way out gets no `alternatives`.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

/// The most a `userMessage` says: a sentence or two.
const MAX_CHARS: usize = 240;

/// The reason a business failure gives, as a sentence for the user; `None` when the text says
/// too little to be one. `message` is the failure without SDK prefixes.
pub fn user_message(message: &str) -> Option<String> {
    static NOISE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"(?x)^(?:
                (?i:HTTP(?:/\d(?:\.\d)?)?|error|api\ error|status(?:\ code)?|request\ failed|code)\s*[:\#]?\s*\d{3}\b\s*[:\-–]?\s*
              | \d{3}\s+[A-Z][A-Za-z\ ]{2,30}?\s*[:\-–]\s*
              | Error\ code:\ \d+\ -\ 
              | \(\d+,\ ['\x22]
              | [A-Za-z]*(?:Error|Exception):\s+
              | [A-Z][A-Za-z\ ]{1,30}:\s+
              | \d{3,6}\s+
            )",
        )
        .expect("valid")
    });
    let text = json_message(message).unwrap_or_else(|| message.to_owned());
    let mut text = text.trim();
    // Peel status tokens and short labels ("Conflict detected: ", "Order rejected: ") while
    // what is left still makes a sentence.
    while let Some(m) = NOISE.find(text) {
        let rest = text[m.end()..].trim();
        if rest.split_whitespace().count() < 3 {
            break;
        }
        text = rest;
    }
    let text = text.trim_end_matches(['"', '\'', ')']);
    let sentences = first_sentences(text, 2);
    if sentences.split_whitespace().count() < 3 {
        return None;
    }
    Some(as_sentence(&sentences))
}

/// What the text itself says to do instead: "upgrade your plan", "use action 'stop' first".
/// At most three, never the failure's first words (which state the failure).
pub fn alternatives(message: &str) -> Vec<String> {
    static WAY_OUT: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"(?ix)(?:[.;!?]\s+|,\s*(?:or\s+|and\s+)?|\s[-–]\s)
              (?:please\s+|you\s+(?:can|may|could|should|need\s+to|must)\s+|consider\s+|instead,?\s+)?
              (?P<alt>(?:upgrade|use|try|contact|add|switch|request|ask|enable|choose|select|wait|visit|check|reduce|remove|increase|update|verify|provide|run|start|stop|create|close|reopen|unlock|unarchive|restore|lower|split|purchase|buy|top\ up|go\ to|set\ up|configure)\b[^.;!?\n]{3,160})",
        )
        .expect("valid")
    });
    let text = json_message(message).unwrap_or_else(|| message.to_owned());
    let mut found: Vec<String> = Vec::new();
    for c in WAY_OUT.captures_iter(&text) {
        let alt = c["alt"].trim().trim_end_matches([',', ':', ' ']);
        let alt = capitalize(alt);
        if !found.contains(&alt) {
            found.push(alt);
        }
        if found.len() == 3 {
            break;
        }
    }
    found
}

/// The human sentence inside a JSON error body: `{"error": {"message": "..."}}`, `{"detail":
/// "..."}`, `{"errors": [{"message": "..."}]}`.
fn json_message(text: &str) -> Option<String> {
    let start = text.find('{')?;
    let value: Value = serde_json::from_str(&text[start..]).ok()?;
    fn find(v: &Value, depth: usize) -> Option<String> {
        const KEYS: [&str; 8] = [
            "message",
            "error_description",
            "detail",
            "error",
            "errors",
            "title",
            "description",
            "msg",
        ];
        if depth > 3 {
            return None;
        }
        match v {
            Value::String(s) if s.split_whitespace().count() >= 2 => Some(s.clone()),
            Value::Array(items) => items.iter().find_map(|i| find(i, depth + 1)),
            Value::Object(map) => KEYS
                .iter()
                .filter_map(|k| map.get(*k))
                .find_map(|v| find(v, depth + 1)),
            _ => None,
        }
    }
    find(&value, 0)
}

/// The first `n` sentences of `text`, at most [`MAX_CHARS`], cut at a word.
fn first_sentences(text: &str, n: usize) -> String {
    let mut end = text.len();
    let mut seen = 0;
    for (i, c) in text.char_indices() {
        let next = text[i + c.len_utf8()..].chars().next();
        if matches!(c, '.' | '!' | '?' | '\n') && next.is_none_or(char::is_whitespace) {
            seen += 1;
            if seen == n {
                end = i + c.len_utf8();
                break;
            }
        }
    }
    let text = text[..end].trim();
    if text.chars().count() <= MAX_CHARS {
        return text.to_owned();
    }
    let cut: String = text.chars().take(MAX_CHARS).collect();
    let cut = cut.rsplit_once(' ').map_or(cut.as_str(), |(head, _)| head);
    format!("{}…", cut.trim_end_matches([',', ';', ':']))
}

fn capitalize(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

/// `text` with a capital first letter and a full stop, unless it ends as a sentence already.
fn as_sentence(text: &str) -> String {
    let text = capitalize(text.trim().trim_end_matches([',', ';', ':']));
    if text.ends_with(['.', '!', '?', '…']) {
        text
    } else {
        format!("{text}.")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reason_in_the_failures_own_words() {
        let cases = [
            (
                "Conflict detected: the room is already booked",
                Some("The room is already booked."),
            ),
            (
                "Order rejected: amount exceeds the approval threshold of 10000 EUR for your role",
                Some("Amount exceeds the approval threshold of 10000 EUR for your role."),
            ),
            (
                "Error code: 429 - You exceeded your current quota, please check your plan and billing details.",
                Some("You exceeded your current quota, please check your plan and billing details."),
            ),
            (
                "403 Forbidden: {\"error\": {\"message\": \"This repository was archived so it is read-only.\"}}",
                Some("This repository was archived so it is read-only."),
            ),
            ("Forbidden", None),
            ("HTTP 402", None),
        ];
        for (text, want) in cases {
            assert_eq!(user_message(text).as_deref(), want, "{text}");
        }
    }

    #[test]
    fn a_long_reason_is_cut_at_a_word() {
        let long = format!("Your plan does not allow {}", "this and that ".repeat(40));
        let m = user_message(&long).unwrap();
        assert!(m.chars().count() <= MAX_CHARS + 1, "{m}");
        assert!(m.ends_with('…'), "{m}");
    }

    #[test]
    fn alternatives_the_text_names_and_no_others() {
        assert_eq!(
            alternatives("Processor 'x' must be stopped before modifying. Use action 'stop-processor' first."),
            ["Use action 'stop-processor' first"]
        );
        assert_eq!(
            alternatives("You have reached the plan limit of 1000 searches. Please upgrade your plan to continue."),
            ["Upgrade your plan to continue"]
        );
        // The failure's own first words are the failure, not a way out.
        assert!(alternatives("Use of expired sessions is not permitted").is_empty());
        assert!(alternatives("Conflict detected: the room is already booked").is_empty());
    }
}
