//! Secrets in JSON values: every string and key masked, and what a structure says beside a
//! value (a secret's key, a name/value pair, a header as a pair, a command line as a list);
//! the secrets a call's arguments show, to be masked wherever the proxy quotes them.

use std::borrow::Cow;

use serde_json::Value;

use super::key_words::{flag_secrecy, key_secrecy, Secrecy};
use super::value_shapes::is_secret_shaped;
use super::{without_known, Redactor, MASK, MIN_QUOTED_SECRET};
use crate::diagnostic::head;

/// How much of an argument's string is searched for secrets to mask elsewhere: a secret sits
/// near the key that names it, and what the proxy repeats of a long argument is its head.
const ARGUMENT_SCAN_BYTES: usize = 4096;
/// How much of a call's arguments is searched for secrets in all: what is quoted of them is
/// at most 8 KiB, and each string masked again by itself where it is quoted.
const ARGUMENTS_SCAN_BYTES: usize = 64 << 10;
/// What stands between two strings of the arguments searched together: a line each, so that
/// a command and its arguments in members of their own (`{"command": "curl", "args": ["-u",
/// "bob:x"]}`) are read as the one command line; a key word ends with its line
/// (`{"q": "reset token", "user": "alice12345"}` shows no token).
const STRINGS_APART: &str = "\n";

impl Redactor {
    /// The secrets a JSON value shows: what the patterns find in its strings, and the strings a
    /// secret's key holds (`{"password": "x"}`). Found in a call's arguments, they are masked
    /// wherever the proxy quotes them (the same password as another argument's value).
    pub fn secrets_in_value(&self, value: &Value) -> Vec<String> {
        let mut found = Vec::new();
        // With no pattern at all (`defaults = false` and none of yours), nothing is masked.
        if !self.active() {
            return found;
        }
        // The strings are searched together, one scan for most calls, which show no secret.
        let mut text = String::new();
        collect_strings(value, &mut text, &mut found);
        if self.finds_any(&text) {
            found.extend(self.secrets_in(&text));
        }
        found
    }

    /// [`Redactor::value`], `known` secrets masked in every string too.
    pub fn value_knowing(&self, value: &mut Value, known: &[String]) {
        if !known.is_empty() && self.active() {
            mask_known(value, known);
        }
        self.value(value);
    }

    /// Masks secrets in every string of a JSON value, keys included.
    pub fn value(&self, value: &mut Value) {
        // With no pattern at all (`defaults = false` and none of yours), nothing is masked.
        if !self.active() {
            return;
        }
        match value {
            Value::String(s) => {
                if let Cow::Owned(masked) = self.text(s) {
                    *s = masked;
                }
            }
            Value::Array(items) => {
                // A header as a pair (`["X-Api-Key", "x"]`, as fetch and undici list them);
                // named as headers are, so that a list of two field names stays.
                if let [Value::String(name), value @ Value::String(_)] = items.as_mut_slice() {
                    let header = name.contains('-') || name.starts_with(char::is_uppercase);
                    if header && key_secrecy(name) == Secrecy::Strong {
                        *value = Value::String(MASK.to_owned());
                    }
                }
                // A command line as a list (`["--password", "x"]`): a secret's flag, its value
                // (the flags found first: `["--token", "--password", "x"]` masks "x").
                let flags: Vec<Secrecy> = items
                    .iter()
                    .map(|v| v.as_str().map_or(Secrecy::None, flag_secrecy))
                    .collect();
                for at in 1..items.len() {
                    let hidden = flags[at] == Secrecy::None
                        && items[at].as_str().is_some_and(|s| flags[at - 1].hides(s));
                    if hidden {
                        items[at] = Value::String(MASK.to_owned());
                    }
                }
                items.iter_mut().for_each(|v| self.value(v));
            }
            Value::Object(map) => {
                // Keys are text too (`{"ghp_...": "revoked"}`).
                if map.keys().any(|k| matches!(self.text(k), Cow::Owned(_))) {
                    *map = std::mem::take(map)
                        .into_iter()
                        .map(|(k, v)| (self.text(&k).into_owned(), v))
                        .collect();
                }
                // A variable as a name and its value (`{"name": "DB_PASSWORD", "value": "x"}`,
                // as Kubernetes and ECS list them), a field's value a validator echoes beside
                // its name (express-validator's `path` and `value`, Spring's `field` and
                // `rejectedValue`, pydantic's `loc` and `input`).
                let secret_name = |name: &Value| {
                    name.as_str()
                        .is_some_and(|name| key_secrecy(name) == Secrecy::Strong)
                };
                let named_secret = NAME_KEYS
                    .iter()
                    .filter_map(|k| map.get(*k))
                    .any(secret_name)
                    || map
                        .get("loc")
                        .and_then(Value::as_array)
                        .and_then(|loc| loc.last())
                        .is_some_and(secret_name);
                if named_secret {
                    for key in VALUE_KEYS {
                        if let Some(value) = map.get_mut(*key).filter(|v| v.is_string()) {
                            *value = Value::String(MASK.to_owned());
                        }
                    }
                }
                for (key, v) in map.iter_mut() {
                    let masked = match key_secrecy(key) {
                        // Whatever it holds.
                        Secrecy::Strong => !v.is_null(),
                        // Its text as far as it hides something; a count, a flag or what it
                        // holds inside stay.
                        secrecy => v.as_str().is_some_and(|s| secrecy.hides(s)),
                    };
                    if masked {
                        *v = Value::String(MASK.to_owned());
                    } else {
                        self.value(v);
                    }
                }
            }
            _ => {}
        }
    }
}

/// The keys that name the member beside them whose value is a secret: [`VALUE_KEYS`].
const NAME_KEYS: &[&str] = &[
    "name",
    "key",
    "field",
    "path",
    "param",
    "parameter",
    "property",
];
const VALUE_KEYS: &[&str] = &["value", "input", "rejectedValue"];

/// The strings of `value` (each one's head, [`ARGUMENTS_SCAN_BYTES`] of them in all) into
/// `text`, apart; the strings a secret's key holds into `found`.
fn collect_strings(value: &Value, text: &mut String, found: &mut Vec<String>) {
    if text.len() >= ARGUMENTS_SCAN_BYTES {
        return;
    }
    match value {
        Value::String(s) => {
            text.push_str(head(s, ARGUMENT_SCAN_BYTES));
            text.push_str(STRINGS_APART);
        }
        // A command line as a list, read as a shell prints it: `-p x` after `docker login`.
        Value::Array(items) if items.len() > 1 && items.iter().all(Value::is_string) => {
            let words = items.iter().filter_map(Value::as_str);
            for (i, word) in words.enumerate() {
                if i > 0 {
                    text.push(' ');
                }
                text.push_str(head(word, ARGUMENT_SCAN_BYTES));
            }
            text.push_str(STRINGS_APART);
        }
        Value::Array(items) => items.iter().for_each(|v| collect_strings(v, text, found)),
        Value::Object(map) => {
            for (key, v) in map {
                // A secret's key: its value is masked wherever it is quoted again, if it
                // could be one (a weak key's value shaped like a secret: `"pass": "ps7Xk2"`).
                let secrecy = key_secrecy(key);
                let carried = v.as_str().filter(|s| {
                    s.len() >= MIN_QUOTED_SECRET
                        && secrecy.hides(s)
                        && (secrecy == Secrecy::Strong || is_secret_shaped(s))
                });
                match carried {
                    Some(s) => found.push(s.to_owned()),
                    None if secrecy == Secrecy::Strong && v.is_string() => {}
                    None => collect_strings(v, text, found),
                }
            }
        }
        _ => {}
    }
}

/// Every string of `value` with the `known` secrets in it masked.
fn mask_known(value: &mut Value, known: &[String]) {
    match value {
        Value::String(s) => {
            if let Cow::Owned(masked) = without_known(s, known) {
                *s = masked;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| mask_known(v, known)),
        Value::Object(map) => map.values_mut().for_each(|v| mask_known(v, known)),
        _ => {}
    }
}
