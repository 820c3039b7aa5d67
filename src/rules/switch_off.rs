//! Switching rules off: a rule of yours with `enabled = false` and the id of a default rule
//! removes that default. A switch-off whose id no default rule has removes nothing (most likely
//! a typo), which `check` reports like a rule of yours that can never fire.

use super::load::Loaded;
use crate::diagnostic::Diagnostic;

/// The user's switch-offs that name no default rule, each with the nearest default id when one
/// is close enough to be the rule meant. Nothing when no defaults are loaded
/// (`--no-default-rules`): then there is nothing to switch off, and nothing is lost either.
pub(super) fn switching_off_nothing(user: &[Loaded], defaults: &[Loaded]) -> Vec<Diagnostic> {
    if defaults.is_empty() {
        return Vec::new();
    }
    let default_ids: Vec<&str> = defaults.iter().map(|d| d.rule.id.as_str()).collect();
    user.iter()
        .filter(|u| u.switch_off && !default_ids.contains(&u.rule.id.as_str()))
        .map(|Loaded { rule, .. }| {
            let hint = closest(&rule.id, &default_ids)
                .map(|id| format!("; did you mean '{id}'?"))
                .unwrap_or_default();
            Diagnostic {
                file: rule.file.clone(),
                line: rule.line,
                col: rule.col,
                rule: Some(rule.id.clone()),
                message: format!(
                    "switches off no rule: there is no default rule '{}'{hint}",
                    rule.id
                ),
            }
        })
        .collect()
}

/// The candidate nearest to `id` by edit distance, if it is within a typo's reach: at most two
/// edits, and fewer than a third of the id's length.
fn closest<'a>(id: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let reach = 2.min(id.chars().count() / 3);
    candidates
        .iter()
        .map(|c| (edit_distance(id, c), *c))
        .filter(|(distance, _)| *distance <= reach)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, c)| c)
}

/// Levenshtein distance in characters, one row at a time.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (diagonal + usize::from(ca != *cb))
                .min(above + 1)
                .min(row[j] + 1);
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_find_the_id_meant_and_unrelated_ids_find_none() {
        let ids = ["enoent", "eacces", "node-enoent"];
        assert_eq!(edit_distance("enoentt", "enoent"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(closest("enoentt", &ids), Some("enoent"));
        assert_eq!(closest("eaccess", &ids), Some("eacces"));
        assert_eq!(closest("my-own-rule", &ids), None);
        // Short ids: two edits would reach almost anything.
        assert_eq!(closest("ab", &["ac"]), None);
    }
}
