//! What of a match is masked: its secret group, unless a shipped pattern found a value that
//! only looks like one (a page cursor, a plain word, a key passed on as itself).

use super::key_words::is_cursor_key;
use super::value_shapes::{is_plain_value, is_secret_shaped};
use super::MASK;

/// Replaces a match with [`MASK`]: only its secret group where it has one, so the reader still
/// sees which key or scheme it was; a shipped pattern leaves a page cursor's value, and a plain
/// value ([`is_plain_value`]), as they are.
pub(super) struct Mask {
    pub(super) spare_plain: bool,
}

/// The part of a match that is the secret: the group named `secret`, or, in a shipped pattern
/// with alternatives, one of the others (a name is given once per pattern). `secret_mixed` and
/// `secret_tight` are secrets only where they are shaped like one ([`is_secret_shaped`]).
fn secret_group<'t>(c: &regex::Captures<'t>) -> Option<regex::Match<'t>> {
    [
        "secret",
        "secret_sq",
        "secret_bt",
        "secret_br",
        "secret_bare",
        "secret_tight",
        "secret_esc",
        "secret_mixed",
    ]
    .iter()
    .find_map(|name| c.name(name))
}

impl Mask {
    /// The secret of a match and what precedes it in the match, unless a shipped pattern found
    /// a cursor's value or a plain word.
    pub(super) fn secret_of<'t>(
        &self,
        c: &regex::Captures<'t>,
    ) -> Option<(&'t str, regex::Match<'t>)> {
        let whole = c.get(0).expect("group 0");
        let secret = secret_group(c).unwrap_or(whole);
        let before = &whole.as_str()[..secret.start() - whole.start()];
        // `arn:aws:secretsmanager:...:secret:name` names a secret, a link of a `:` chain.
        let arn_part = c.name("secret_tight").is_some() && before.starts_with(':');
        // A word or a name, where only a value shaped like a secret could be one.
        let unshaped = (c.name("secret_mixed").is_some() || c.name("secret_tight").is_some())
            && !is_secret_shaped(secret.as_str());
        // `api_key=api_key`: code passing a variable on, not a value.
        let its_own_key = before
            .trim_end_matches(|c: char| !c.is_ascii_alphanumeric())
            .strip_suffix(secret.as_str())
            .is_some_and(|rest| !rest.ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_'));
        // A placeholder or a word is one line; a secret over several (a private key, cut off
        // with `...` after it) is never spared.
        let spared = self.spare_plain
            && !secret.as_str().contains('\n')
            && (arn_part
                || unshaped
                || its_own_key
                || is_cursor_key(before)
                || is_plain_value(secret.as_str()));
        (!spared).then_some((before, secret))
    }
}

impl regex::Replacer for Mask {
    fn replace_append(&mut self, c: &regex::Captures<'_>, dst: &mut String) {
        let whole = c.get(0).expect("group 0");
        match self.secret_of(c) {
            Some((before, secret)) => {
                dst.push_str(before);
                dst.push_str(MASK);
                dst.push_str(&whole.as_str()[secret.end() - whole.start()..]);
            }
            None => dst.push_str(whole.as_str()),
        }
    }
}
