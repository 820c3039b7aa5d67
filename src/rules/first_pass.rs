//! The first pass: which rules' patterns match a text at all, in one forward scan.
//!
//! This is what `regex::RegexSet::matches` does, built from the same parts with the same
//! settings, minus the reverse NFA a `RegexSet` also builds and a "which patterns match" search
//! never runs (2.8 MB of the 4.3 MB the set takes for the embedded rules, and half of its build
//! time, paid by the first failure). The search is a lazy DFA over the forward NFA, and the PikeVM
//! where the lazy DFA gives up (a Unicode word boundary next to non-ASCII text, or a cache that
//! keeps filling up): the engines `RegexSet` uses for it, in the same order.

use std::sync::Mutex;

use crate::sync::lock;

use regex_automata::hybrid::dfa::{self as lazy, DFA};
use regex_automata::nfa::thompson::{self, pikevm, pikevm::PikeVM, WhichCaptures};
use regex_automata::util::{prefilter::Prefilter, syntax};
use regex_automata::{Input, MatchKind, PatternID, PatternSet};

/// Why the first pass does not build (the rules then decide one regex at a time).
#[derive(Debug, thiserror::Error)]
pub(super) enum FirstPassError {
    /// A pattern does not parse with the first pass's settings.
    #[error("{0}")]
    Parse(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The NFA or the PikeVM does not build (over its size limit); boxed, as it is large.
    #[error("{0}")]
    Build(#[source] Box<thompson::BuildError>),
}

pub(super) struct FirstPass {
    /// `None` when the lazy DFA would not build (a cache too small for the patterns).
    dfa: Option<DFA>,
    pikevm: PikeVM,
    /// Search caches to reuse; a search takes one, or makes one when all are in use.
    caches: Mutex<Vec<Caches>>,
}

struct Caches {
    dfa: Option<lazy::Cache>,
    pikevm: pikevm::Cache,
}

/// The patterns that matched, by index.
pub(super) struct Hits(PatternSet);

impl Hits {
    pub(super) fn matched(&self, index: usize) -> bool {
        self.0.contains(PatternID::new_unchecked(index))
    }
}

impl std::fmt::Debug for FirstPass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FirstPass")
            .field("patterns", &self.pikevm.get_nfa().pattern_len())
            .finish_non_exhaustive()
    }
}

impl FirstPass {
    /// `size_limit` bounds the NFA; `dfa_cache` is the lazy DFA's cache capacity (it grows only
    /// as it is used).
    pub(super) fn new(
        patterns: &[&str],
        size_limit: usize,
        dfa_cache: usize,
    ) -> Result<FirstPass, FirstPassError> {
        // The settings `RegexSetBuilder` gives its NFA: UTF-8, no capture groups.
        let syntax = syntax::Config::new().utf8(true);
        let hirs = patterns
            .iter()
            .map(|p| syntax::parse_with(p, &syntax).map_err(|e| FirstPassError::Parse(e.into())))
            .collect::<Result<Vec<_>, _>>()?;
        // Where every pattern starts with one of a few literals, the search skips to them.
        let prefilter = Prefilter::from_hirs_prefix(MatchKind::All, &hirs);
        let nfa = thompson::Compiler::new()
            .configure(
                thompson::Config::new()
                    .utf8(true)
                    .shrink(false)
                    .which_captures(WhichCaptures::None)
                    .nfa_size_limit(Some(size_limit)),
            )
            .build_many_from_hir(&hirs)
            .map_err(|e| FirstPassError::Build(Box::new(e)))?;
        drop(hirs);
        // And its lazy DFA and PikeVM, with the prefilter `RegexSet` gives them.
        let dfa = DFA::builder()
            .configure(
                DFA::config()
                    .match_kind(MatchKind::All)
                    .prefilter(prefilter.clone())
                    .specialize_start_states(prefilter.is_some())
                    .unicode_word_boundary(true)
                    .cache_capacity(dfa_cache)
                    .minimum_cache_clear_count(Some(3))
                    .minimum_bytes_per_state(Some(10)),
            )
            .build_from_nfa(nfa.clone())
            .ok();
        let pikevm = PikeVM::builder()
            .configure(
                PikeVM::config()
                    .match_kind(MatchKind::All)
                    .prefilter(prefilter),
            )
            .build_from_nfa(nfa)
            .map_err(|e| FirstPassError::Build(Box::new(e)))?;
        Ok(FirstPass {
            dfa,
            pikevm,
            caches: Mutex::new(Vec::new()),
        })
    }

    pub(super) fn matches(&self, text: &str) -> Hits {
        let taken = lock(&self.caches).pop();
        let mut caches = taken.unwrap_or_else(|| Caches {
            dfa: self.dfa.as_ref().map(DFA::create_cache),
            pikevm: self.pikevm.create_cache(),
        });
        let input = Input::new(text);
        let mut hits = PatternSet::new(self.pikevm.get_nfa().pattern_len());
        let done = match (&self.dfa, &mut caches.dfa) {
            (Some(dfa), Some(cache)) => dfa
                .try_which_overlapping_matches(cache, &input, &mut hits)
                .is_ok(),
            _ => false,
        };
        if !done {
            self.pikevm
                .which_overlapping_matches(&mut caches.pikevm, &input, &mut hits);
        }
        lock(&self.caches).push(caches);
        Hits(hits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{default_sources, RuleSet};

    /// Every example text and some of their pieces, against `RegexSet` on the embedded patterns.
    #[test]
    fn agrees_with_regex_set_on_the_embedded_rules() {
        let rules = RuleSet::load(&[], &default_sources()).unwrap();
        let patterns: Vec<&str> = rules.rules().iter().filter_map(|r| r.pattern()).collect();
        let ours = FirstPass::new(&patterns, usize::MAX, 8 << 20).unwrap();
        // Words in a dozen scripts under `(?i)` outgrow `RegexSet`'s default 10 MB limit; the
        // first pass itself is limited per pattern (`build_first_pass`).
        let theirs = regex::RegexSetBuilder::new(&patterns)
            .size_limit(64 << 20)
            .build()
            .unwrap();
        let mut texts: Vec<String> = vec![
            String::new(),
            "é ENOENT: no such file or directory, open 'é'".into(),
            "Ünïcödé wörds: permission denied für dich".into(),
        ];
        for rule in rules.rules() {
            for example in &rule.examples {
                let text = &example.text;
                texts.push(text.clone());
                texts.push(format!("é {text} é"));
                texts.push(text.to_uppercase());
                texts.extend(text.split_whitespace().map(str::to_owned));
            }
        }
        for text in &texts {
            let hits = ours.matches(text);
            let want = theirs.matches(text);
            for (i, pattern) in patterns.iter().enumerate() {
                assert_eq!(hits.matched(i), want.matched(i), "{pattern:?} on {text:?}");
            }
        }
    }

    #[test]
    fn agrees_with_regex_set_on_anchors_cases_and_empty_patterns() {
        let patterns = [
            r"^ORDERS001E(?P<num>\d{4}): (?P<detail>.+)$",
            r"(?i)\bbilling2 (?:service )?(?:is )?(?:unavailable|down)\b",
            r"(?m)^\s*at \w+",
            r#"relation "crm\d+_(?P<table>[a-z_]+)" does not exist"#,
            "",
            r"\bé\w*",
            r"timed out after (?P<ms>\d+) ?ms$",
        ];
        let ours = FirstPass::new(&patterns, usize::MAX, 8 << 20).unwrap();
        let theirs = regex::RegexSet::new(patterns).unwrap();
        let texts = [
            "",
            "ORDERS001E1234: bad input",
            "x ORDERS001E1234: bad input",
            "Billing2 service is DOWN now",
            "billing2 is downtown",
            "Error\n    at handler (x.js:1:2)",
            "ERROR: relation \"crm61_line_items\" does not exist",
            "écoute éléphant",
            "query timed out after 3000 ms",
            "query timed out after 3000 ms.",
        ];
        for text in texts {
            let hits = ours.matches(text);
            let want = theirs.matches(text);
            for (i, pattern) in patterns.iter().enumerate() {
                assert_eq!(hits.matched(i), want.matched(i), "{pattern:?} on {text:?}");
            }
        }
    }

    #[test]
    fn no_patterns_match_nothing() {
        let ours = FirstPass::new(&[], 1 << 20, 8 << 20).unwrap();
        assert!(!ours.matches("anything").matched(0));
    }
}
