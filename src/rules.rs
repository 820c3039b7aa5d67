//! The rule table: TOML rule files in, one compiled, immutable [`RuleSet`] out.
//!
//! Loading is all or nothing: every problem in every file is collected as a
//! [`Diagnostic`] naming `file:line:col` and the rule id, and a
//! table with any problem is never used. Every regex of a user file is compiled here to check
//! it (syntax, size limit), and then dropped: the matching machinery is built by the first
//! failure (see [`RuleSet`]), so an idle proxy holds only the rules' text.
//!
//! Order: higher `priority` first, then [`Tier`] (what a failure's sentence says before the
//! status token in it), then load order (user files in the order given, then the embedded
//! defaults), then order within the file. The first rule that matches wins. A user rule with
//! the id of a default rule replaces it.

mod first_pass;
mod lint;
mod load;
mod locate;
pub use locate::written_rule;
mod switch_off;

use std::sync::OnceLock;

use globset::GlobSet;
use regex::{Captures, Regex};

use first_pass::FirstPass;

use crate::diagnostic::{Diagnostic, Diagnostics, SourceFile};
use crate::taxonomy::{Category, Source};
use crate::template::Template;

/// A rule's pattern, checked at load and compiled again on first use.
#[derive(Debug)]
pub(crate) struct LazyRegex {
    pub(crate) pattern: String,
    /// Whether the pattern may have named groups (read from its text, erring towards yes): a
    /// rule without them learns nothing from its own search once the first pass found it.
    named_groups: bool,
    compiled: OnceLock<Regex>,
}

impl LazyRegex {
    /// Compiles `pattern` to check it, and keeps only the text; with its capture names and
    /// the bytes its NFA takes, which count against [`TABLE_REGEX_LIMIT`].
    pub(crate) fn new(pattern: &str) -> Result<(LazyRegex, Vec<String>, usize), regex::Error> {
        let regex = build(pattern)?;
        let captures = regex.capture_names().flatten().map(str::to_owned).collect();
        drop(regex);
        let size = regex_automata::nfa::thompson::NFA::compiler()
            .configure(
                regex_automata::nfa::thompson::Config::new()
                    .which_captures(regex_automata::nfa::thompson::WhichCaptures::None)
                    .nfa_size_limit(Some(REGEX_SIZE_LIMIT)),
            )
            .build(pattern)
            .map_or(REGEX_SIZE_LIMIT, |nfa| nfa.memory_usage());
        Ok((LazyRegex::unchecked(pattern), captures, size))
    }

    /// A pattern known to compile: one of the embedded rules, which the test suite loads with
    /// every check (`embedded_defaults_pass_every_check`).
    pub(crate) fn unchecked(pattern: &str) -> LazyRegex {
        LazyRegex {
            pattern: pattern.to_owned(),
            named_groups: pattern.contains("(?P<") || pattern.contains("(?<"),
            compiled: OnceLock::new(),
        }
    }

    fn get(&self) -> &Regex {
        self.compiled
            .get_or_init(|| build(&self.pattern).expect("checked when the rule was loaded"))
    }
}

fn build(pattern: &str) -> Result<Regex, regex::Error> {
    regex::RegexBuilder::new(pattern)
        .size_limit(REGEX_SIZE_LIMIT)
        .build()
}

/// What gives the memory that compiling the first pass took back to the system, set by the
/// shell (`sys::release_memory`): the core never calls the system itself.
static MEMORY_RELEASE: OnceLock<fn()> = OnceLock::new();

/// Has `release` called after the first pass of a rule set is built: compiling takes several
/// times the memory the first pass keeps. The first call wins.
pub fn release_memory_with(release: fn()) {
    let _ = MEMORY_RELEASE.set(release);
}

/// The first pass over all `patterns` at once. Each pattern compiles alone within
/// `REGEX_SIZE_LIMIT` (checked at load), and their union, without capture groups, is no larger
/// than the sum of them, so its limit is not reached in practice.
fn build_first_pass(patterns: &[&str]) -> Result<FirstPass, first_pass::FirstPassError> {
    // The search runs all patterns at once with a lazy DFA; its cache must grow with the number
    // of patterns, or the search falls back to a far slower engine (milliseconds per failure at
    // a hundred rules). The cache grows only as it is used.
    let dfa_cache = (8usize << 20).max(patterns.len().saturating_mul(32 << 10));
    let size_limit = REGEX_SIZE_LIMIT.saturating_mul(patterns.len().max(1));
    FirstPass::new(patterns, size_limit, dfa_cache)
}

/// Compiled size limit of one rule's regex: rule files are input, not code, and a pathological
/// pattern must not eat the proxy's memory.
const REGEX_SIZE_LIMIT: usize = 1 << 20;
/// Compiled size limit of all the user rules' regexes together: a thousand regexes just under
/// `REGEX_SIZE_LIMIT` took a gigabyte and seconds to start and to classify the first failure.
/// Real tables are far below it: the 160 embedded rules take about 1.5 MB in the first pass,
/// and about 9,000 of the bench's generated rules (`(?i)` and `\w` in each) fit.
pub const TABLE_REGEX_LIMIT: usize = 64 << 20;
/// Named captures with a meaning of their own: a retry delay found in the text, and its unit.
pub const RETRY_AFTER_CAPTURE: &str = "retry_after";
pub const RETRY_AFTER_UNIT_CAPTURE: &str = "retry_after_unit";

/// One embedded rule file: its name as messages show it, and its text.
macro_rules! rule_file {
    ($name:literal) => {
        (
            concat!("rules/", $name, ".toml"),
            include_str!(concat!("../rules/", $name, ".toml")),
        )
    };
}

/// The rule files shipped inside the binary, in the order they are tried.
pub const EMBEDDED_DEFAULTS: &[(&str, &str)] = &[
    rule_file!("hidden-failures"),
    rule_file!("mcp-sdk"),
    rule_file!("servers"),
    rule_file!("saas"),
    rule_file!("cloud"),
    rule_file!("meaning"),
    rule_file!("auth"),
    rule_file!("databases"),
    rule_file!("git"),
    rule_file!("validation"),
    rule_file!("os"),
    rule_file!("network"),
    rule_file!("mail"),
    rule_file!("http"),
    rule_file!("generic"),
];

/// The embedded default rule files.
pub fn default_sources() -> Vec<SourceFile> {
    EMBEDDED_DEFAULTS
        .iter()
        .map(|(name, text)| SourceFile::new(format!("(embedded) {name}"), *text))
        .collect()
}

/// A failed tool call, as the rules see it.
#[derive(Debug, Clone, Copy)]
pub struct Failure<'a> {
    /// The failure's text: the text blocks of an `isError` result, or a JSON-RPC error message.
    pub text: &'a str,
    /// The tool that was called.
    pub tool: &'a str,
    pub source: Source,
    /// The JSON-RPC error code, for `Source::Rpc`.
    pub rpc_code: Option<i64>,
}

/// How general a rule is, which decides its place in the table: a rule that knows a server's
/// exact text is tried before one that knows what a failure means in any server's words, which
/// is tried before one that reads a status token (`403`, `429`, "server error"), which is tried
/// before the last-resort phrasings. This is what makes "Error 429: monthly quota exceeded, see
/// your plan" a business failure and not a rate limit, for every server at once.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    /// A server's, library's or API's own phrasing. The default: user rules are tried first.
    #[default]
    Specific,
    /// The vocabulary of a failure's meaning: quotas, billing, plans, policies, an object's
    /// state, credentials, configuration, transport failures named as such.
    Meaning,
    /// A status token in the text: HTTP statuses and their reason phrases.
    Status,
    /// Last-resort phrasings that say little more than "invalid" or "not allowed".
    Generic,
}

impl Tier {
    /// The tier as rule files write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Specific => "specific",
            Tier::Meaning => "meaning",
            Tier::Status => "status",
            Tier::Generic => "generic",
        }
    }
}

/// One compiled rule.
#[derive(Debug)]
pub struct Rule {
    pub id: String,
    /// Where the rule is written (its `id`), for messages, logs and `--explain`.
    pub file: String,
    pub line: usize,
    pub col: usize,
    /// From a user file rather than the embedded defaults.
    pub user: bool,
    pub priority: i64,
    pub tier: Tier,
    /// The `match` pattern, compiled (with captures) only when the first pass says it matched:
    /// most rules never match anything, and a compiled regex costs memory.
    regex: Option<LazyRegex>,
    /// Index of `regex` in the set's first pass.
    set_index: Option<usize>,
    /// The globs as written, and compiled.
    pub tool_globs: Vec<String>,
    tools: Option<GlobSet>,
    pub source: Option<Source>,
    pub rpc_codes: Vec<i64>,
    pub category: Category,
    pub code: String,
    pub retryable: bool,
    pub retry_after: Option<u64>,
    message: Option<Template>,
    user_message: Option<Template>,
    alternatives: Vec<Template>,
    /// Failures this rule must decide as written, run by `mcp-errnorm check` and the tests.
    pub examples: Vec<Example>,
    /// For `source = "success"`: the success is a failure, classified by the rest of the table
    /// on its text (the `detail` capture where there is one).
    pub reclassify: bool,
}

/// An inline example of a rule: a failure, and what the whole table must make of it.
#[derive(Debug, Clone)]
pub struct Example {
    pub text: String,
    pub tool: String,
    pub source: Source,
    pub rpc_code: Option<i64>,
    /// Where the example is written.
    pub line: usize,
    pub col: usize,
    /// The rule expected to decide: this rule unless the example names another.
    pub rule: String,
    pub category: Option<Category>,
    pub code: Option<String>,
    pub retryable: Option<bool>,
    pub retry_after: Option<u64>,
}

impl Example {
    /// The failure the example describes.
    pub fn failure(&self) -> Failure<'_> {
        Failure {
            text: &self.text,
            tool: &self.tool,
            source: self.source,
            rpc_code: self.rpc_code,
        }
    }
}

/// A rule that matched a failure, with its captures.
#[derive(Debug)]
pub struct RuleMatch<'r, 't> {
    pub rule: &'r Rule,
    failure: Failure<'t>,
    captures: Option<Captures<'t>>,
}

impl<'t> RuleMatch<'_, 't> {
    /// A named capture, or a built-in (`tool`, `text`).
    pub fn value(&self, name: &str) -> Option<&'t str> {
        match name {
            "tool" => Some(self.failure.tool),
            "text" => Some(self.failure.text),
            _ => self
                .captures
                .as_ref()
                .and_then(|c| c.name(name))
                .map(|m| m.as_str()),
        }
    }

    pub fn message(&self) -> Option<String> {
        self.rule
            .message
            .as_ref()
            .map(|t| t.render(|n| self.value(n)))
    }

    pub fn user_message(&self) -> Option<String> {
        let template = self.rule.user_message.as_ref()?;
        Some(template.render(|n| self.value(n)))
    }

    pub fn alternatives(&self) -> Vec<String> {
        let render = |t: &Template| t.render(|n| self.value(n));
        self.rule.alternatives.iter().map(render).collect()
    }
}

/// The compiled, ordered rule table.
#[derive(Debug)]
pub struct RuleSet {
    rules: Vec<Rule>,
    /// First pass: which rule regexes match at all, in one scan of the text. Built by the first
    /// failure, not at load: it is most of the table's memory (1.5 MB for the embedded rules,
    /// and the lazy DFA's cache) and of its load time, and a proxy that never sees a failure
    /// never needs it. `None` when it would not compile; every rule's own regex then decides
    /// alone (same verdicts, slower).
    first_pass: OnceLock<Option<FirstPass>>,
    /// The tools some rule reads the successes of: asked of every success.
    reads_successes: ToolFilter,
    /// Rules of the user's with `enabled = false` that switch off no rule: `check` refuses them
    /// (a typo in the id), a start or reload does not, as for a rule that can never fire.
    switching_off_nothing: Vec<Diagnostic>,
    /// Whether the fallback model decides what no rule matches (`fallback_model` in the config).
    fallback_model: bool,
}

/// Which tools a group of rules may apply to, in one match whatever the group's size. It only
/// spares work: each rule still checks its own globs.
#[derive(Debug)]
enum ToolFilter {
    Every,
    /// The globs of every rule in the group; an empty set for an empty group.
    Matching(GlobSet),
}

impl ToolFilter {
    /// For a group of rules.
    fn of<'a>(group: impl Iterator<Item = &'a Rule>) -> ToolFilter {
        let mut globs = globset::GlobSetBuilder::new();
        for rule in group {
            if rule.tools.is_none() {
                return ToolFilter::Every;
            }
            for glob in &rule.tool_globs {
                // Each compiled at load, alone.
                let Ok(glob) = globset::Glob::new(glob) else {
                    return ToolFilter::Every;
                };
                globs.add(glob);
            }
        }
        // Together they could exceed a size limit none reached alone: then every tool is
        // looked at, and the rules' own globs decide.
        globs
            .build()
            .map_or(ToolFilter::Every, ToolFilter::Matching)
    }

    fn admits(&self, tool: &str) -> bool {
        match self {
            ToolFilter::Every => true,
            ToolFilter::Matching(globs) => globs.is_match(tool),
        }
    }
}

impl RuleSet {
    /// Compiles user rule files (tried first, in order) layered over the default files.
    pub fn load(user: &[SourceFile], defaults: &[SourceFile]) -> Result<RuleSet, Diagnostics> {
        let mut problems = Vec::new();
        // What the user rules' regexes may still take; `None` once they took too much.
        let mut budget = Some(TABLE_REGEX_LIMIT);
        let mut user_rules = Vec::new();
        for file in user {
            user_rules.extend(load::compile_file(file, true, &mut budget, &mut problems));
        }
        let mut default_rules = Vec::new();
        for file in defaults {
            default_rules.extend(load::compile_file(file, false, &mut budget, &mut problems));
        }
        load::check_unique_ids(&user_rules, &mut problems);
        load::check_unique_ids(&default_rules, &mut problems);
        if !problems.is_empty() {
            return Err(Diagnostics(problems));
        }
        let switching_off_nothing = switch_off::switching_off_nothing(&user_rules, &default_rules);
        let overridden: std::collections::HashSet<&str> =
            user_rules.iter().map(|r| r.rule.id.as_str()).collect();
        default_rules.retain(|r| !overridden.contains(r.rule.id.as_str()));

        let mut rules: Vec<Rule> = user_rules
            .into_iter()
            .chain(default_rules)
            .filter(|r| r.enabled)
            .map(|r| r.rule)
            .collect();
        // A stable sort keeps load order among equal priorities and tiers.
        rules.sort_by_key(|r| (std::cmp::Reverse(r.priority), r.tier));

        let mut patterns = 0;
        for rule in &mut rules {
            if rule.regex.is_some() {
                rule.set_index = Some(patterns);
                patterns += 1;
            }
        }
        let reads_successes =
            ToolFilter::of(rules.iter().filter(|r| r.source == Some(Source::Success)));
        Ok(RuleSet {
            rules,
            reads_successes,
            first_pass: OnceLock::new(),
            switching_off_nothing,
            fallback_model: true,
        })
    }

    /// The table with the fallback model on or off; on by default.
    pub fn with_fallback_model(mut self, on: bool) -> RuleSet {
        self.fallback_model = on;
        self
    }

    /// Whether the fallback model decides what no rule matches.
    pub fn fallback_model(&self) -> bool {
        self.fallback_model
    }

    /// The first pass, built on first use.
    fn first_pass(&self) -> Option<&FirstPass> {
        self.first_pass
            .get_or_init(|| {
                let patterns: Vec<&str> = self.rules.iter().filter_map(Rule::pattern).collect();
                let pass = build_first_pass(&patterns)
                    .map_err(|e| {
                        tracing::warn!(
                            "the rules' first pass does not compile ({e}); \
                             each rule's regex is tried on its own"
                        );
                    })
                    .ok();
                // Compiling takes several times the memory the first pass keeps.
                if let Some(release) = MEMORY_RELEASE.get() {
                    release();
                }
                pass
            })
            .as_ref()
    }

    /// Whether any rule looks at successful results of this tool; only then is a success parsed.
    pub fn inspects_successes_of(&self, tool: &str) -> bool {
        self.reads_successes.admits(tool)
    }

    /// The rule with this id.
    pub fn rule(&self, id: &str) -> Option<&Rule> {
        self.rules.iter().find(|r| r.id == id)
    }

    /// The embedded defaults alone.
    pub fn defaults() -> RuleSet {
        RuleSet::load(&[], &default_sources()).expect("the embedded rules are valid")
    }

    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// The user's `enabled = false` rules whose id names no default rule, as `check` reports them.
    pub fn switching_off_nothing(&self) -> &[Diagnostic] {
        &self.switching_off_nothing
    }

    /// Every rule that matches, in the order they are tried.
    pub fn matches<'s, 't>(
        &'s self,
        failure: Failure<'t>,
    ) -> impl Iterator<Item = RuleMatch<'s, 't>> + 's
    where
        't: 's,
    {
        // A success is looked at only by the few rules written for successes: their own regexes
        // decide, and successes never build the first pass.
        let hits = match failure.source {
            Source::Success => None,
            _ => self.first_pass().map(|pass| pass.matches(failure.text)),
        };
        self.rules.iter().filter_map(move |rule| {
            let found = match (&hits, rule.set_index) {
                (Some(hits), Some(i)) => Some(hits.matched(i)),
                _ => None,
            };
            if found == Some(false) || !rule.applies_to(&failure) {
                return None;
            }
            let captures = match &rule.regex {
                // Found by the first pass, and no named group to read: searching again would
                // only say yes.
                Some(regex) if found == Some(true) && !regex.named_groups => None,
                Some(regex) => Some(regex.get().captures(failure.text)?),
                None => None,
            };
            Some(RuleMatch {
                rule,
                failure,
                captures,
            })
        })
    }

    /// The rule that decides this failure, if any.
    pub fn first_match<'s, 't>(&'s self, failure: Failure<'t>) -> Option<RuleMatch<'s, 't>>
    where
        't: 's,
    {
        self.matches(failure).next()
    }
}

impl Rule {
    /// The `match` pattern as written.
    pub fn pattern(&self) -> Option<&str> {
        self.regex.as_ref().map(|r| r.pattern.as_str())
    }

    fn applies_to(&self, failure: &Failure) -> bool {
        // A successful result is only looked at by rules written for successes.
        let source = match failure.source {
            Source::Success => self.source == Some(Source::Success),
            other => self.source.is_none_or(|s| s == other),
        };
        source
            && (self.rpc_codes.is_empty()
                || failure
                    .rpc_code
                    .is_some_and(|c| self.rpc_codes.contains(&c)))
            && self.tools.as_ref().is_none_or(|g| g.is_match(failure.tool))
    }
}

#[cfg(test)]
mod tests;
