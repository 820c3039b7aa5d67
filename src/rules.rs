//! The rule table: TOML rule files in, one compiled, immutable [`RuleSet`] out.
//!
//! Loading is all or nothing: every problem in every file is collected as a [`Diagnostic`]
//! naming `file:line:col` and the rule id, and a table with any problem is never used. All
//! regexes and globs are compiled here, once; matching then only runs them.
//!
//! Order: higher `priority` first, then load order (user files in the order given, then the
//! embedded defaults), then order within the file. The first rule that matches wins. A user rule
//! with the id of a default rule replaces it.

use std::collections::HashMap;

use globset::{Glob, GlobSet, GlobSetBuilder};
use regex::{Captures, Regex, RegexBuilder, RegexSet, RegexSetBuilder};
use serde::Deserialize;
use toml::Spanned;

use crate::diagnostic::{Diagnostic, Diagnostics, SourceFile};
use crate::taxonomy::{self, Category, Source};
use crate::template::{Template, BUILTINS};

/// Compiled size limit of one rule's regex: rule files are input, not code, and a pathological
/// pattern must not eat the proxy's memory.
const REGEX_SIZE_LIMIT: usize = 1 << 20;
/// Named captures with a meaning of their own: a retry delay found in the text, and its unit.
pub const RETRY_AFTER_CAPTURE: &str = "retry_after";
pub const RETRY_AFTER_UNIT_CAPTURE: &str = "retry_after_unit";

/// The rule files shipped inside the binary, in the order they are tried.
pub const EMBEDDED_DEFAULTS: &[(&str, &str)] = &[
    ("rules/mcp-sdk.toml", include_str!("../rules/mcp-sdk.toml")),
    ("rules/servers.toml", include_str!("../rules/servers.toml")),
    ("rules/os.toml", include_str!("../rules/os.toml")),
    ("rules/network.toml", include_str!("../rules/network.toml")),
    ("rules/http.toml", include_str!("../rules/http.toml")),
    ("rules/generic.toml", include_str!("../rules/generic.toml")),
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

/// One compiled rule.
#[derive(Debug)]
pub struct Rule {
    pub id: String,
    /// The file the rule came from, for logs and `--explain`.
    pub file: String,
    priority: i64,
    regex: Option<Regex>,
    /// Index of `regex` in the set's first pass.
    set_index: Option<usize>,
    tools: Option<GlobSet>,
    source: Option<Source>,
    rpc_codes: Vec<i64>,
    pub category: Category,
    pub code: String,
    pub retryable: bool,
    pub retry_after: Option<u64>,
    message: Option<Template>,
    user_message: Option<Template>,
    alternatives: Vec<Template>,
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
    /// First pass: which rule regexes match at all, in one scan of the text.
    set: RegexSet,
}

impl RuleSet {
    /// Compiles user rule files (tried first, in order) layered over the default files.
    pub fn load(user: &[SourceFile], defaults: &[SourceFile]) -> Result<RuleSet, Diagnostics> {
        let mut problems = Vec::new();
        let mut user_rules = Vec::new();
        for file in user {
            user_rules.extend(compile_file(file, &mut problems));
        }
        let mut default_rules = Vec::new();
        for file in defaults {
            default_rules.extend(compile_file(file, &mut problems));
        }
        check_unique_ids(&user_rules, &mut problems);
        check_unique_ids(&default_rules, &mut problems);
        if !problems.is_empty() {
            return Err(Diagnostics(problems));
        }
        let overridden: std::collections::HashSet<&str> =
            user_rules.iter().map(|r| r.rule.id.as_str()).collect();
        default_rules.retain(|r| !overridden.contains(r.rule.id.as_str()));

        let mut rules: Vec<Rule> = user_rules
            .into_iter()
            .chain(default_rules)
            .filter(|r| r.enabled)
            .map(|r| r.rule)
            .collect();
        // A stable sort keeps load order among equal priorities.
        rules.sort_by_key(|r| std::cmp::Reverse(r.priority));

        let mut patterns = Vec::new();
        for rule in &mut rules {
            if let Some(regex) = &rule.regex {
                rule.set_index = Some(patterns.len());
                patterns.push(regex.as_str().to_owned());
            }
        }
        let set = RegexSetBuilder::new(&patterns)
            .size_limit(REGEX_SIZE_LIMIT.saturating_mul(patterns.len().max(1)))
            .build()
            .map_err(|e| {
                Diagnostics(vec![Diagnostic {
                    file: "(all rules)".into(),
                    line: 0,
                    col: 0,
                    rule: None,
                    message: format!("the rule table is too large to compile: {e}"),
                }])
            })?;
        Ok(RuleSet { rules, set })
    }

    /// The embedded defaults alone.
    pub fn defaults() -> RuleSet {
        RuleSet::load(&[], &default_sources()).expect("the embedded rules are valid")
    }

    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// Every rule that matches, in the order they are tried.
    pub fn matches<'s, 't>(
        &'s self,
        failure: Failure<'t>,
    ) -> impl Iterator<Item = RuleMatch<'s, 't>> + 's
    where
        't: 's,
    {
        let hits = self.set.matches(failure.text);
        self.rules.iter().filter_map(move |rule| {
            if rule.set_index.is_some_and(|i| !hits.matched(i)) || !rule.applies_to(&failure) {
                return None;
            }
            let captures = match &rule.regex {
                Some(regex) => Some(regex.captures(failure.text)?),
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
    fn applies_to(&self, failure: &Failure) -> bool {
        self.source.is_none_or(|s| s == failure.source)
            && (self.rpc_codes.is_empty()
                || failure
                    .rpc_code
                    .is_some_and(|c| self.rpc_codes.contains(&c)))
            && self.tools.as_ref().is_none_or(|g| g.is_match(failure.tool))
    }
}

// ---------------------------------------------------------------------------------------------
// Loading

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleFileDoc {
    #[serde(default)]
    rule: Vec<RawRule>,
}

/// A rule as written. Every key is documented in `docs/rules.md`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    id: Spanned<String>,
    #[serde(rename = "match")]
    pattern: Option<Spanned<String>>,
    #[serde(default)]
    priority: i64,
    #[serde(default = "yes")]
    enabled: bool,
    #[serde(default)]
    tools: Vec<Spanned<String>>,
    source: Option<Spanned<Source>>,
    #[serde(default)]
    rpc_codes: Vec<i64>,
    category: Option<Spanned<Category>>,
    code: Option<Spanned<String>>,
    retryable: Option<bool>,
    retry_after: Option<u64>,
    message: Option<Spanned<String>>,
    user_message: Option<Spanned<String>>,
    #[serde(default)]
    alternatives: Vec<Spanned<String>>,
}

fn yes() -> bool {
    true
}

struct Loaded {
    rule: Rule,
    enabled: bool,
    file: SourceFile,
    id_span: std::ops::Range<usize>,
}

fn compile_file(file: &SourceFile, problems: &mut Vec<Diagnostic>) -> Vec<Loaded> {
    let doc: RuleFileDoc = match toml::from_str(&file.text) {
        Ok(doc) => doc,
        Err(e) => {
            let rule = e.span().and_then(|s| rule_id_around(&file.text, s.start));
            problems.push(file.diagnostic(e.span(), rule.as_deref(), e.message().trim_end()));
            return Vec::new();
        }
    };
    doc.rule
        .into_iter()
        .filter_map(|raw| compile_rule(file, raw, problems))
        .collect()
}

fn compile_rule(file: &SourceFile, raw: RawRule, problems: &mut Vec<Diagnostic>) -> Option<Loaded> {
    let id = raw.id.get_ref().clone();
    let before = problems.len();
    let mut problem = |span: std::ops::Range<usize>, message: String| {
        problems.push(file.diagnostic(Some(span), Some(&id), message));
    };

    if id.trim().is_empty() {
        problem(raw.id.span(), "'id' must not be empty".into());
    }
    let regex = raw.pattern.as_ref().and_then(|p| {
        RegexBuilder::new(p.get_ref())
            .size_limit(REGEX_SIZE_LIMIT)
            .build()
            .map_err(|e| problem(p.span(), format!("invalid regex in 'match': {e}")))
            .ok()
    });
    let tools = if raw.tools.is_empty() {
        None
    } else {
        let mut builder = GlobSetBuilder::new();
        for glob in &raw.tools {
            match Glob::new(glob.get_ref()) {
                Ok(g) => {
                    builder.add(g);
                }
                Err(e) => problem(glob.span(), format!("invalid glob in 'tools': {e}")),
            }
        }
        builder.build().ok()
    };
    let source = raw.source.as_ref().map(|s| *s.get_ref());
    if let Some(s) = &raw.source {
        if *s.get_ref() == Source::Proxy {
            problem(s.span(), "'source' must be \"result\" or \"rpc\"".into());
        }
    }
    if let Some(c) = &raw.category {
        if *c.get_ref() == Category::Unknown {
            problem(
                c.span(),
                "'category' must be transient, validation, business or permission \
                 (unknown is for failures no rule matches)"
                    .into(),
            );
        }
    }
    if let Some(code) = &raw.code {
        if !taxonomy::is_valid_code(code.get_ref()) {
            problem(
                code.span(),
                format!("'code' must be UPPER_SNAKE_CASE, not '{}'", code.get_ref()),
            );
        }
    }
    let category = match (&raw.category, &raw.code) {
        (Some(c), _) => *c.get_ref(),
        (None, Some(code)) => match taxonomy::category_of_code(code.get_ref()) {
            Some(c) => c,
            None => {
                problem(
                    code.span(),
                    format!(
                        "'code' {} is not a well-known code: give a 'category' too",
                        code.get_ref()
                    ),
                );
                Category::Unknown
            }
        },
        (None, None) => {
            problem(
                raw.id.span(),
                "a rule needs a 'category' or a 'code'".into(),
            );
            Category::Unknown
        }
    };
    let code = raw.code.as_ref().map_or_else(
        || category.default_code().to_owned(),
        |c| c.get_ref().clone(),
    );

    let capture_names: Vec<String> = regex
        .as_ref()
        .map(|r| r.capture_names().flatten().map(str::to_owned).collect())
        .unwrap_or_default();
    let known = |name: &str| BUILTINS.contains(&name) || capture_names.iter().any(|c| c == name);
    let mut template = |t: &Spanned<String>| {
        Template::parse(t.get_ref(), known)
            .map_err(|e| problem(t.span(), e))
            .ok()
    };
    let message = raw.message.as_ref().and_then(&mut template);
    let user_message = raw.user_message.as_ref().and_then(&mut template);
    let alternatives = raw.alternatives.iter().filter_map(&mut template).collect();

    if problems.len() > before {
        return None;
    }
    Some(Loaded {
        enabled: raw.enabled,
        file: file.clone(),
        id_span: raw.id.span(),
        rule: Rule {
            file: file.name.clone(),
            priority: raw.priority,
            regex,
            set_index: None,
            tools,
            source,
            rpc_codes: raw.rpc_codes,
            retryable: raw
                .retryable
                .unwrap_or_else(|| taxonomy::default_retryable(category, &code)),
            category,
            code,
            retry_after: raw.retry_after,
            message,
            user_message,
            alternatives,
            id,
        },
    })
}

fn check_unique_ids(rules: &[Loaded], problems: &mut Vec<Diagnostic>) {
    let mut seen: HashMap<&str, &Loaded> = HashMap::new();
    for loaded in rules {
        if let Some(first) = seen.insert(&loaded.rule.id, loaded) {
            let (line, col) = crate::diagnostic::line_col(&first.file.text, first.id_span.start);
            problems.push(loaded.file.diagnostic(
                Some(loaded.id_span.clone()),
                Some(&loaded.rule.id),
                format!(
                    "duplicate rule id (first defined at {}:{line}:{col})",
                    first.file.name
                ),
            ));
        }
    }
}

/// The id of the `[[rule]]` table around a byte offset, found in the text itself: a file that
/// does not deserialize has no parsed rules to ask.
fn rule_id_around(text: &str, offset: usize) -> Option<String> {
    let offset = offset.min(text.len());
    let header = text[..offset].rfind("[[rule]]")?;
    let body_end = text[header + 8..]
        .find("\n[")
        .map_or(text.len(), |i| header + 8 + i);
    let id_pattern = Regex::new(r#"(?m)^\s*id\s*=\s*["']([^"'\n]*)["']"#).expect("valid");
    id_pattern
        .captures(&text[header..body_end])
        .map(|c| c[1].to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> Result<RuleSet, Diagnostics> {
        RuleSet::load(&[SourceFile::new("r.toml", text)], &[])
    }

    fn failure(text: &str) -> Failure<'_> {
        Failure {
            text,
            tool: "read_file",
            source: Source::Result,
            rpc_code: None,
        }
    }

    #[test]
    fn first_match_wins_by_priority_then_order() {
        let set = load(
            r#"
            [[rule]]
            id = "a"
            match = "boom"
            category = "business"
            [[rule]]
            id = "b"
            match = "boom"
            category = "permission"
            [[rule]]
            id = "c"
            match = "boom"
            priority = 5
            category = "transient"
            "#,
        )
        .unwrap();
        let ids: Vec<_> = set
            .matches(failure("boom"))
            .map(|m| m.rule.id.as_str())
            .collect();
        assert_eq!(ids, ["c", "a", "b"]);
        assert!(set.first_match(failure("nothing")).is_none());
    }

    #[test]
    fn filters_on_tool_source_and_code() {
        let set = load(
            r#"
            [[rule]]
            id = "only-rpc"
            match = "x"
            source = "rpc"
            rpc_codes = [-32602]
            code = "NOT_FOUND"
            [[rule]]
            id = "only-git"
            tools = ["git_*"]
            category = "transient"
            "#,
        )
        .unwrap();
        let mut f = failure("x");
        assert!(set.first_match(f).is_none());
        f.source = Source::Rpc;
        f.rpc_code = Some(-32602);
        assert_eq!(set.first_match(f).unwrap().rule.id, "only-rpc");
        f.rpc_code = Some(-32601);
        assert!(set.first_match(f).is_none());
        f.tool = "git_status";
        assert_eq!(set.first_match(f).unwrap().rule.id, "only-git");
    }

    #[test]
    fn defaults_fill_in_category_code_and_retryable() {
        let set = load(
            r#"
            [[rule]]
            id = "nf"
            match = "nf"
            code = "NOT_FOUND"
            [[rule]]
            id = "t"
            match = "t"
            category = "transient"
            [[rule]]
            id = "rl"
            match = "rl"
            category = "business"
            code = "RATE_LIMITED"
            "#,
        )
        .unwrap();
        let rule = |t| set.first_match(failure(t)).unwrap().rule;
        assert_eq!(
            (rule("nf").category, rule("nf").retryable),
            (Category::Validation, false)
        );
        assert_eq!(
            (rule("t").code.as_str(), rule("t").retryable),
            ("SYSTEM_UNAVAILABLE", true)
        );
        assert!(rule("rl").retryable);
    }

    #[test]
    fn captures_feed_templates() {
        let set = load(
            r#"
            [[rule]]
            id = "enoent"
            match = "ENOENT: no such file or directory, (?P<op>\\w+) '(?P<path>[^']*)'"
            code = "NOT_FOUND"
            message = "{tool}: '{path}' does not exist"
            alternatives = ["list the folder of {path}"]
            "#,
        )
        .unwrap();
        let m = set
            .first_match(failure("ENOENT: no such file or directory, open '/a/b'"))
            .unwrap();
        assert_eq!(m.message().unwrap(), "read_file: '/a/b' does not exist");
        assert_eq!(m.alternatives(), ["list the folder of /a/b"]);
        assert_eq!(m.user_message(), None);
    }

    #[test]
    fn user_rules_override_defaults_by_id_and_come_first() {
        let defaults = [SourceFile::new(
            "d.toml",
            "[[rule]]\nid = \"x\"\nmatch = \"e\"\ncategory = \"transient\"\n\
             [[rule]]\nid = \"y\"\nmatch = \"e\"\ncategory = \"business\"\n",
        )];
        let user = [SourceFile::new(
            "u.toml",
            "[[rule]]\nid = \"y\"\nenabled = false\ncategory = \"business\"\n\
             [[rule]]\nid = \"z\"\nmatch = \"e\"\ncategory = \"permission\"\n",
        )];
        let set = RuleSet::load(&user, &defaults).unwrap();
        let ids: Vec<_> = set.rules().iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["z", "x"]);
    }

    fn errors(text: &str) -> Vec<String> {
        load(text)
            .unwrap_err()
            .0
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn bad_regex_names_file_line_col_and_rule() {
        let e = errors("[[rule]]\nid = \"bad\"\nmatch = \"(unclosed\"\ncategory = \"transient\"\n");
        assert_eq!(e.len(), 1);
        assert!(
            e[0].starts_with("r.toml:3:9: rule 'bad': invalid regex in 'match'"),
            "{}",
            e[0]
        );
    }

    #[test]
    fn unknown_key_and_category_are_located() {
        let e = errors("[[rule]]\nid = \"k\"\nmatch = \"x\"\ncategroy = \"transient\"\n");
        assert!(
            e[0].starts_with("r.toml:4:1: rule 'k': unknown field `categroy`"),
            "{}",
            e[0]
        );
        let e = errors("[[rule]]\nid = \"k\"\ncategory = \"flaky\"\n");
        assert!(
            e[0].starts_with("r.toml:3:12: rule 'k': unknown variant `flaky`"),
            "{}",
            e[0]
        );
        let e = errors("[[rule]]\nid = \"k\"\ncategory = \"unknown\"\n");
        assert!(e[0].contains("rule 'k': 'category' must be"), "{}", e[0]);
    }

    #[test]
    fn every_problem_is_reported_and_nothing_half_applies() {
        let e = errors(
            "[[rule]]\nid = \"a\"\nmatch = \"(?P<x>a)\"\ncategory = \"transient\"\nmessage = \"{y}\"\n\
             [[rule]]\nid = \"a\"\ncode = \"MY_CODE\"\n\
             [[rule]]\nid = \"c\"\ntools = [\"[\"]\ncategory = \"business\"\n",
        );
        assert_eq!(e.len(), 3, "{e:#?}");
        assert!(e[0].contains("rule 'a': placeholder '{y}'"));
        assert!(e[1].contains("rule 'a': 'code' MY_CODE is not a well-known code"));
        assert!(e[2].contains("rule 'c': invalid glob"));
    }

    #[test]
    fn duplicate_ids_point_at_both() {
        let e = errors(
            "[[rule]]\nid = \"d\"\ncategory = \"business\"\n[[rule]]\nid = \"d\"\ncategory = \"business\"\n",
        );
        assert_eq!(
            e,
            ["r.toml:5:6: rule 'd': duplicate rule id (first defined at r.toml:2:6)"]
        );
    }

    #[test]
    fn syntax_errors_are_located() {
        let e = errors("[[rule]]\nid = \"s\"\nmatch = \"x\ncategory = \"business\"\n");
        assert!(e[0].starts_with("r.toml:3:"), "{}", e[0]);
        assert!(e[0].contains("rule 's'"), "{}", e[0]);
    }

    #[test]
    fn embedded_defaults_load() {
        assert!(!RuleSet::defaults().rules().is_empty());
    }
}
