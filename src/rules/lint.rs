//! Rules that load but would not do what their author meant: judged at load, each a
//! diagnostic like a syntax error.

use std::ops::Range;

use toml::Spanned;

use crate::taxonomy::{self, codes, Category};

/// Successful results that are nothing but successes, short and ordinary: a success rule
/// without `tools` that matches one of them would turn successes of every tool into errors.
const ORDINARY_SUCCESSES: &[&str] = &[
    "",
    " ",
    "a",
    "ok",
    "OK",
    "true",
    "0",
    "[]",
    "{}",
    "null",
    "done",
    "Success",
    "Hello, world!",
    "{\"temperature\": 21}",
    "The file was written.",
];

/// Why a `source = "success"` rule without `tools` is not scoped to the exact phrasing of a
/// failure, and where: it has no `match`, or its `match` (which must compile) takes an ordinary
/// success too. Whether a phrasing is exact cannot be judged in general; a pattern that matches
/// an empty or short everyday text certainly is not.
pub(super) fn unscoped_success_rule(
    pattern: Option<&Spanned<String>>,
) -> Option<(Option<Range<usize>>, String)> {
    let Some(pattern) = pattern else {
        return Some((
            None,
            "a rule with source = \"success\" needs 'tools' or a 'match' on the failure's exact \
             phrasing: without either it turns every successful result into an error"
                .into(),
        ));
    };
    let regex = super::build(pattern.get_ref()).ok()?;
    let success = ORDINARY_SUCCESSES.iter().find(|s| regex.is_match(s))?;
    Some((
        Some(pattern.span()),
        format!(
            "a rule with source = \"success\" and no 'tools' must match only the exact phrasing of \
             a failure, but this 'match' also takes the ordinary success {success:?}: scope it \
             with 'tools', or match the failure's own words (such as '^Database error: ')"
        ),
    ))
}

/// Where a rule's verdict says against itself: a failure the agent must never retry marked
/// retryable (the product's specification: never retry PERMISSION_DENIED or NOT_FOUND, and a
/// permission failure is escalated), or a `retry_after` for a failure that is not retried, which would
/// never be sent.
pub(super) fn contradiction(
    category: Category,
    code: &str,
    retryable: Option<&Spanned<bool>>,
    retry_after: Option<&Spanned<u64>>,
) -> Option<(Range<usize>, String)> {
    let said_retryable = retryable.filter(|r| *r.get_ref());
    if let Some(r) = said_retryable {
        let never = if category == Category::Permission {
            Some("category permission: access that was refused is escalated to a human".into())
        } else {
            [codes::PERMISSION_DENIED, codes::NOT_FOUND]
                .contains(&code)
                .then(|| format!("code {code}: a retry finds the same answer"))
        };
        if let Some(why) = never {
            return Some((
                r.span(),
                format!(
                    "retryable = true contradicts {why}, so it is never retried; if this \
                     failure passes by itself, give it category transient and a code that says so"
                ),
            ));
        }
    }
    let after = retry_after?;
    let retried = retryable.map_or_else(
        || taxonomy::default_retryable(category, code),
        |r| *r.get_ref(),
    );
    (!retried).then(|| {
        (
            after.span(),
            format!(
                "'retry_after' is for failures that are retried, and a {} failure with code \
                 {code} is not{}: the delay would never be sent",
                category.as_str(),
                if retryable.is_some() {
                    " (retryable = false)"
                } else {
                    " (set retryable = true if it is)"
                }
            ),
        )
    })
}
