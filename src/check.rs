//! What `mcp-errnorm check` verifies beyond loading: every rule's examples come out as written
//! when run through the whole table, and no rule hides behind an earlier one. Pure.

use crate::classify::classify;
use crate::diagnostic::Diagnostic;
use crate::rules::{Failure, Rule, RuleSet, Tier};

/// A problem `check` reports; errors fail the check, warnings only inform.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub diagnostic: Diagnostic,
    pub is_error: bool,
}

/// Runs every example of every rule through the whole table; returns the ones that fail. An
/// example of a meaning rule that one of the user's rules decides is not a failure here:
/// [`find_shadowed_meanings`] reports it.
pub fn run_examples(set: &RuleSet) -> Vec<Diagnostic> {
    let mut failures = Vec::new();
    for rule in set.rules() {
        for example in &rule.examples {
            let failure = example.failure();
            if shadowing_user_rule(set, rule, failure).is_some() {
                continue;
            }
            let verdict = classify(set, failure);
            let decided_by = verdict.rule_id.as_deref().unwrap_or("(none)");
            let mut wrong = Vec::new();
            if decided_by != example.rule {
                wrong.push(format!(
                    "decided by rule '{decided_by}', not '{}'",
                    example.rule
                ));
            }
            if let Some(category) = example.category.filter(|c| *c != verdict.category) {
                wrong.push(format!(
                    "category {} expected, got {}",
                    category, verdict.category
                ));
            }
            if let Some(code) = example.code.as_ref().filter(|c| **c != verdict.code) {
                wrong.push(format!("code {code} expected, got {}", verdict.code));
            }
            if let Some(retryable) = example.retryable.filter(|r| *r != verdict.retryable) {
                wrong.push(format!(
                    "retryable {retryable} expected, got {}",
                    verdict.retryable
                ));
            }
            if example.retry_after.is_some() && example.retry_after != verdict.retry_after_seconds {
                wrong.push(format!(
                    "retry_after {:?} expected, got {:?}",
                    example.retry_after.unwrap_or_default(),
                    verdict.retry_after_seconds
                ));
            }
            if !wrong.is_empty() {
                failures.push(Diagnostic {
                    file: rule.file.clone(),
                    line: example.line,
                    col: example.col,
                    rule: Some(rule.id.clone()),
                    message: format!("example {:?}: {}", shorten(&example.text), wrong.join("; ")),
                });
            }
        }
    }
    failures
}

/// Rules that can never decide anything because an earlier rule always matches first: its
/// conditions are a subset of theirs (no `match`, or the same pattern; no or wider filters).
/// An error for a user rule (it cannot fire); a warning for a default rule (a user rule may
/// hide it on purpose).
pub fn find_shadowed(set: &RuleSet) -> Vec<Finding> {
    let rules = set.rules();
    let mut findings = Vec::new();
    for (i, later) in rules.iter().enumerate() {
        if let Some(earlier) = rules[..i].iter().find(|earlier| shadows(earlier, later)) {
            findings.push(Finding {
                is_error: later.user,
                diagnostic: Diagnostic {
                    file: later.file.clone(),
                    line: later.line,
                    col: later.col,
                    rule: Some(later.id.clone()),
                    message: format!(
                        "never decides anything: rule '{}' ({}:{}:{}) matches every failure it matches, first",
                        earlier.id, earlier.file, earlier.line, earlier.col
                    ),
                },
            });
        }
    }
    findings
}

/// A user rule that decides a failure a default meaning rule was written for: a broad
/// pattern or a status token of the user's outranks what the failure's sentence says. A
/// warning: the user may mean it.
pub fn find_shadowed_meanings(set: &RuleSet) -> Vec<Finding> {
    let mut findings = Vec::new();
    for rule in set.rules() {
        for example in &rule.examples {
            let failure = example.failure();
            let Some(earlier) = shadowing_user_rule(set, rule, failure) else {
                continue;
            };
            findings.push(Finding {
                is_error: false,
                diagnostic: Diagnostic {
                    file: earlier.file.clone(),
                    line: earlier.line,
                    col: earlier.col,
                    rule: Some(earlier.id.clone()),
                    message: format!(
                        "decides {:?}, which the meaning rule '{}' ({}:{}:{}) was written for: \
                         narrow its match, or give it `tier = \"status\"` so that what the \
                         sentence says is read first",
                        shorten(&example.text),
                        rule.id,
                        rule.file,
                        rule.line,
                        rule.col
                    ),
                },
            });
        }
    }
    findings
}

/// The user's rule that decides `failure`, an example of the meaning rule `rule` that names
/// `rule` as its decider.
fn shadowing_user_rule<'s>(
    set: &'s RuleSet,
    rule: &Rule,
    failure: Failure<'s>,
) -> Option<&'s Rule> {
    if rule.user || rule.tier != Tier::Meaning {
        return None;
    }
    let decider = set.first_match(failure)?.rule;
    (decider.user && decider.id != rule.id).then_some(decider)
}

fn shadows(earlier: &Rule, later: &Rule) -> bool {
    let pattern = earlier.pattern().is_none() || earlier.pattern() == later.pattern();
    let source = earlier.source.is_none() || earlier.source == later.source;
    let codes = earlier.rpc_codes.is_empty()
        || (!later.rpc_codes.is_empty()
            && later
                .rpc_codes
                .iter()
                .all(|c| earlier.rpc_codes.contains(c)));
    let tools = earlier.tool_globs.is_empty()
        || (!later.tool_globs.is_empty()
            && later
                .tool_globs
                .iter()
                .all(|t| earlier.tool_globs.contains(t)));
    pattern && source && codes && tools
}

fn shorten(text: &str) -> String {
    const MAX: usize = 60;
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::SourceFile;
    use crate::rules::default_sources;

    fn set(text: &str) -> RuleSet {
        RuleSet::load(&[SourceFile::new("u.toml", text)], &[]).unwrap()
    }

    #[test]
    fn the_shipped_rules_pass_their_examples_and_shadow_nothing() {
        let defaults = RuleSet::load(&[], &default_sources()).unwrap();
        let failures: Vec<String> = run_examples(&defaults)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert!(failures.is_empty(), "{}", failures.join("\n"));
        let shadowed: Vec<String> = find_shadowed(&defaults)
            .iter()
            .map(|f| f.diagnostic.to_string())
            .collect();
        assert!(shadowed.is_empty(), "{}", shadowed.join("\n"));
    }

    #[test]
    fn every_shipped_rule_has_an_example() {
        let defaults = RuleSet::load(&[], &default_sources()).unwrap();
        let bare: Vec<&str> = defaults
            .rules()
            .iter()
            .filter(|r| r.examples.is_empty())
            .map(|r| r.id.as_str())
            .collect();
        assert!(bare.is_empty(), "rules without an example: {bare:?}");
    }

    #[test]
    fn failing_examples_say_what_came_out() {
        let s = set(
            "[[rule]]\nid = \"a\"\nmatch = \"boom\"\ncategory = \"transient\"\n\
             [[rule.example]]\ntext = \"boom\"\ncategory = \"permission\"\nretryable = false\n\
             [[rule.example]]\ntext = \"big boom\"\ncode = \"SYSTEM_UNAVAILABLE\"\n\
             [[rule.example]]\ntext = \"nothing\"\n",
        )
        // What the model would guess for "nothing" is not this test's business.
        .with_fallback_model(false);
        let failures: Vec<String> = run_examples(&s).iter().map(ToString::to_string).collect();
        assert_eq!(
            failures,
            [
                "error: u.toml:5:1: rule 'a': example \"boom\": category permission expected, got transient; retryable false expected, got true",
                "error: u.toml:12:1: rule 'a': example \"nothing\": decided by rule '(none)', not 'a'",
            ]
        );
    }

    #[test]
    fn examples_can_name_the_rule_that_should_win() {
        let s = set(
            "[[rule]]\nid = \"specific\"\nmatch = \"disk full\"\ncategory = \"business\"\n\
             [[rule]]\nid = \"general\"\nmatch = \"disk\"\ncategory = \"transient\"\n\
             [[rule.example]]\ntext = \"disk full\"\nrule = \"specific\"\n",
        );
        assert!(run_examples(&s).is_empty());
    }

    #[test]
    fn a_broad_user_rule_over_a_meaning_rule_is_a_warning() {
        let s = RuleSet::load(
            &[SourceFile::new(
                "u.toml",
                "[[rule]]\nid = \"all-429\"\nmatch = '429'\ncode = \"RATE_LIMITED\"\n",
            )],
            &default_sources(),
        )
        .unwrap();
        let findings = find_shadowed_meanings(&s);
        assert!(!findings.is_empty());
        assert!(findings.iter().all(|f| !f.is_error));
        let first = findings[0]
            .diagnostic
            .with(crate::diagnostic::Severity::Warning)
            .to_string();
        assert!(
            first.starts_with(
                "warning: u.toml:2:6: rule 'all-429': decides \"HTTP 429: You have reached the plan limit"
            ),
            "{first}"
        );
        assert!(
            first.contains("meaning rule 'meaning-plan-and-billing'"),
            "{first}"
        );
        // Reported there, not as a failing example.
        assert!(run_examples(&s)
            .iter()
            .all(|d| d.rule.as_deref() != Some("meaning-plan-and-billing")));
    }

    #[test]
    fn shadowing_is_found_where_it_is_certain() {
        let s = set(
            "[[rule]]\nid = \"catch-all-git\"\ntools = [\"git_*\"]\ncategory = \"transient\"\n\
             [[rule]]\nid = \"git-lock\"\ntools = [\"git_*\"]\nmatch = \"index.lock\"\ncategory = \"transient\"\n\
             [[rule]]\nid = \"other-tool\"\ntools = [\"fs_*\"]\nmatch = \"x\"\ncategory = \"transient\"\n\
             [[rule]]\nid = \"same\"\nmatch = \"x\"\ncategory = \"business\"\n\
             [[rule]]\nid = \"same-again\"\nmatch = \"x\"\nsource = \"rpc\"\ncategory = \"business\"\n",
        );
        let findings = find_shadowed(&s);
        let ids: Vec<_> = findings
            .iter()
            .map(|f| f.diagnostic.rule.clone().unwrap())
            .collect();
        assert_eq!(ids, ["git-lock", "same-again"]);
        assert!(findings.iter().all(|f| f.is_error));
        assert!(findings[0].diagnostic.to_string().starts_with(
            "error: u.toml:6:6: rule 'git-lock': never decides anything: rule 'catch-all-git' (u.toml:2:6)"
        ));
    }
}
