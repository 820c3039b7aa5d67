//! Loading rule files: TOML in, compiled [`Rule`]s out, every problem collected as a
//! [`Diagnostic`] with `file:line:col` and the rule id.

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;

use globset::{Glob, GlobSet, GlobSetBuilder};
use serde::Deserialize;
use toml::Spanned;

use super::lint::{contradiction, unscoped_success_rule};
use super::locate::{inline_rule_id_around, rule_id_around, Lines};
use super::{Example, LazyRegex, Rule, Tier, EMBEDDED_DEFAULTS};
use crate::diagnostic::{Diagnostic, SourceFile};
use crate::taxonomy::MAX_RETRY_AFTER_SECONDS;
use crate::taxonomy::{self, Category, Source};
use crate::template::{Template, BUILTINS};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleFileDoc {
    /// The tier of the file's rules that name none.
    tier: Option<Tier>,
    /// Regex pieces the file's rules share: `{name}` in a `match` stands for `name` here.
    #[serde(default)]
    patterns: BTreeMap<String, Spanned<String>>,
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
    tier: Option<Tier>,
    #[serde(default = "yes")]
    enabled: bool,
    #[serde(default)]
    tools: Vec<Spanned<String>>,
    source: Option<Spanned<Source>>,
    #[serde(default)]
    rpc_codes: Vec<i64>,
    category: Option<Spanned<Category>>,
    code: Option<Spanned<String>>,
    retryable: Option<Spanned<bool>>,
    retry_after: Option<Spanned<u64>>,
    message: Option<Spanned<String>>,
    user_message: Option<Spanned<String>>,
    #[serde(default)]
    alternatives: Vec<Spanned<String>>,
    #[serde(default)]
    example: Vec<Spanned<RawExample>>,
    reclassify: Option<Spanned<bool>>,
}

/// An inline example as written (`[[rule.example]]`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawExample {
    text: String,
    tool: Option<String>,
    source: Option<Source>,
    rpc_code: Option<i64>,
    rule: Option<String>,
    category: Option<Category>,
    code: Option<String>,
    retryable: Option<bool>,
    retry_after: Option<u64>,
}

fn yes() -> bool {
    true
}

/// A compiled rule with what loading still needs to know about it.
pub(super) struct Loaded {
    pub rule: Rule,
    pub enabled: bool,
    /// `enabled = false` and nothing a rule decides with (`match`, `category`, `code`,
    /// `reclassify`): written only to switch off another rule, so naming none is a mistake.
    pub switch_off: bool,
}

pub(super) fn compile_file(
    file: &SourceFile,
    user: bool,
    budget: &mut Option<usize>,
    problems: &mut Vec<Diagnostic>,
) -> Vec<Loaded> {
    // The embedded files are valid by construction (a test loads them with every check), so
    // their regexes are not compiled here: that was most of the start-up time.
    let trusted = !user && EMBEDDED_DEFAULTS.iter().any(|(_, text)| *text == file.text);
    let doc: RuleFileDoc = match toml::from_str(&file.text) {
        Ok(doc) => doc,
        Err(e) => {
            let rule = e.span().and_then(|s| {
                rule_id_around(&file.text, s.start)
                    .or_else(|| inline_rule_id_around(&file.text, s.start))
            });
            problems.push(file.toml_diagnostic(&e, rule.as_deref()));
            return Vec::new();
        }
    };
    check_patterns(file, &doc.patterns, problems);
    let scope = FileScope {
        file,
        lines: Lines::new(&file.text),
        user,
        trusted,
        patterns: &doc.patterns,
    };
    doc.rule
        .into_iter()
        .map(|raw| RawRule {
            // The file's tier, where the rule names none.
            tier: raw.tier.or(doc.tier),
            ..raw
        })
        .filter_map(|raw| compile_rule(&scope, raw, budget, problems))
        .collect()
}

/// What the rules of one file share while they are compiled.
struct FileScope<'a> {
    file: &'a SourceFile,
    lines: Lines<'a>,
    /// A user's file, not an embedded default.
    user: bool,
    /// An embedded default file, valid by construction: its regexes are compiled lazily.
    trusted: bool,
    patterns: &'a BTreeMap<String, Spanned<String>>,
}

/// The `{name}` references in a regex, as (byte range, name). A brace after a backslash is a
/// literal one; a quantifier (`{2}`, `{0,3}`) starts with a digit, so it is never a name.
fn pattern_references(regex: &str) -> Vec<(Range<usize>, &str)> {
    let bytes = regex.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'{' => {
                let name_len = regex[i + 1..]
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(regex.len() - i - 1);
                let name = &regex[i + 1..i + 1 + name_len];
                if is_pattern_name(name) && bytes.get(i + 1 + name_len) == Some(&b'}') {
                    found.push((i..i + name_len + 2, name));
                    i += name_len + 2;
                } else {
                    i += 1;
                }
            }
            _ => i += 1,
        }
    }
    found
}

/// A name a `match` can refer to: a quantifier's `{2}` is not one.
fn is_pattern_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `[patterns]`: names a `match` can write as `{name}`, each a regex piece of its own. A piece
/// does not refer to another: one level keeps every `match` readable from its file alone.
fn check_patterns(
    file: &SourceFile,
    patterns: &BTreeMap<String, Spanned<String>>,
    problems: &mut Vec<Diagnostic>,
) {
    for (name, piece) in patterns {
        let at = |message: String| file.diagnostic(Some(piece.span()), None, message);
        if !is_pattern_name(name) {
            problems.push(at(format!(
                "pattern name '{name}' must be letters, digits and '_', not starting with a digit"
            )));
        }
        if let Some((_, inner)) = pattern_references(piece.get_ref()).first() {
            problems.push(at(format!(
                "pattern '{name}' refers to '{{{inner}}}': a pattern cannot use another one"
            )));
        }
    }
}

/// `match` with the file's `[patterns]` put in place of their `{name}`s.
fn expand_match(
    pattern: &Spanned<String>,
    patterns: &BTreeMap<String, Spanned<String>>,
    p: &mut Problems,
) -> Option<Spanned<String>> {
    let regex = pattern.get_ref();
    let mut expanded = String::with_capacity(regex.len());
    let mut copied = 0;
    let mut unknown = false;
    for (range, name) in pattern_references(regex) {
        let Some(piece) = patterns.get(name) else {
            p.at(
                pattern.span(),
                format!(
                    "'match' uses '{{{name}}}', which this file's [patterns] does not define \
                     (a literal brace is written '\\{{')"
                ),
            );
            unknown = true;
            continue;
        };
        expanded.push_str(&regex[copied..range.start]);
        expanded.push_str(piece.get_ref());
        copied = range.end;
    }
    expanded.push_str(&regex[copied..]);
    (!unknown).then(|| Spanned::new(pattern.span(), expanded))
}

/// Where the problems of one rule go: each at its span, under the rule's id.
struct Problems<'a> {
    file: &'a SourceFile,
    id: &'a str,
    list: &'a mut Vec<Diagnostic>,
}

impl Problems<'_> {
    fn at(&mut self, span: Range<usize>, message: impl Into<String>) {
        let d = self.file.diagnostic(Some(span), Some(self.id), message);
        self.list.push(d);
    }
}

/// One rule as written -> one compiled rule, or `None` with its problems listed: each key has
/// its validator below, run in the order of the problems they report.
// Long: one call per key's validator, then the rule built from what they return.
fn compile_rule(
    scope: &FileScope,
    raw: RawRule,
    budget: &mut Option<usize>,
    problems: &mut Vec<Diagnostic>,
) -> Option<Loaded> {
    let FileScope {
        file,
        lines,
        user,
        trusted,
        patterns,
    } = scope;
    let (user, trusted) = (*user, *trusted);
    let id = raw.id.get_ref().clone();
    let before = problems.len();
    let p = &mut Problems {
        file,
        id: &id,
        list: problems,
    };
    check_id(&raw.id, p);
    let pattern = (raw.pattern.as_ref()).and_then(|m| expand_match(m, patterns, p));
    let (regex, capture_names) = compile_match(pattern.as_ref(), trusted, budget, p);
    if !trusted && raw.enabled && raw.tools.is_empty() {
        check_success_scope(raw.source.as_ref(), pattern.as_ref(), p);
    }
    let tools = compile_tools(&raw.tools, p);
    check_source(raw.source.as_ref(), p);
    check_category(raw.category.as_ref(), p);
    check_code(raw.code.as_ref(), p);
    check_retry_after(raw.retry_after.as_ref(), p);
    let reclassify = check_reclassify(raw.reclassify.as_ref(), raw.source.as_ref(), p);
    let category = resolve_category(&raw, reclassify, p);
    let code = raw.code.as_ref().map_or_else(
        || category.default_code().to_owned(),
        |c| c.get_ref().clone(),
    );
    if category != Category::Unknown {
        let retryable = raw.retryable.as_ref();
        if let Some((span, why)) =
            contradiction(category, &code, retryable, raw.retry_after.as_ref())
        {
            p.at(span, why);
        }
    }
    // Unchecked patterns (`None`) are those of trusted files, whose placeholders are checked too.
    let known = |name: &str| {
        BUILTINS.contains(&name)
            || capture_names
                .as_ref()
                .is_none_or(|names| names.iter().any(|c| c == name))
    };
    let message = raw.message.as_ref().and_then(|t| template(t, &known, p));
    let user_message = raw
        .user_message
        .as_ref()
        .and_then(|t| template(t, &known, p));
    let alternatives = (raw.alternatives.iter())
        .filter_map(|t| template(t, &known, p))
        .collect();
    let has_tools = !raw.tools.is_empty();
    let examples: Vec<Example> = (raw.example.into_iter())
        .map(|e| compile_example(e, lines, has_tools, p))
        .collect();

    if problems.len() > before {
        return None;
    }
    let (line, col) = lines.line_col(raw.id.span().start);
    let switch_off = !raw.enabled
        && raw.pattern.is_none()
        && raw.category.is_none()
        && raw.code.is_none()
        && !reclassify;
    Some(Loaded {
        enabled: raw.enabled,
        switch_off,
        rule: Rule {
            file: file.name.clone(),
            line,
            col,
            user,
            priority: raw.priority,
            tier: raw.tier.unwrap_or_default(),
            regex,
            set_index: None,
            tool_globs: raw.tools.iter().map(|t| t.get_ref().clone()).collect(),
            tools,
            source: raw.source.as_ref().map(|s| *s.get_ref()),
            rpc_codes: raw.rpc_codes,
            retryable: raw
                .retryable
                .map(Spanned::into_inner)
                .unwrap_or_else(|| taxonomy::default_retryable(category, &code)),
            category,
            code,
            retry_after: raw.retry_after.map(Spanned::into_inner),
            message,
            user_message,
            alternatives,
            examples,
            reclassify,
            id,
        },
    })
}

/// `id`: not empty, and printable: an id is printed in diagnostics, logs and answers, where a
/// newline or an escape sequence would forge lines or drive the terminal.
fn check_id(id: &Spanned<String>, p: &mut Problems) {
    if id.get_ref().trim().is_empty() {
        p.at(id.span(), "'id' must not be empty");
    }
    if id.get_ref().contains(char::is_control) {
        p.at(
            id.span(),
            "'id' must be printable: no control characters (newlines, tabs, escapes)",
        );
    }
}

/// `match`: the regex, and the names of its capture groups (`None` when not known: the
/// pattern of a trusted file, or one past the table's budget).
fn compile_match(
    pattern: Option<&Spanned<String>>,
    trusted: bool,
    budget: &mut Option<usize>,
    p: &mut Problems,
) -> (Option<LazyRegex>, Option<Vec<String>>) {
    let Some(pattern) = pattern else {
        return (None, Some(Vec::new()));
    };
    // Once the table is over its regex budget, it is refused: compiling the rest (a second
    // each for a few hundred large ones) would only delay saying so.
    if trusted || budget.is_none() {
        return (Some(LazyRegex::unchecked(pattern.get_ref())), None);
    }
    match LazyRegex::new(pattern.get_ref()) {
        Ok((_, _, size)) if Some(size) > *budget => {
            p.at(
                pattern.span(),
                format!(
                    "the rules' regexes together take more than {} MiB compiled (this one \
                     {} KiB): use fewer or smaller patterns (`(?-u:\\w)` is far smaller \
                     than `\\w`, a bounded repeat is copied as often as its bound)",
                    super::TABLE_REGEX_LIMIT >> 20,
                    size >> 10
                ),
            );
            *budget = None;
            // Its captures unknown, its placeholders are not judged: one error is enough.
            (None, None)
        }
        Ok((regex, captures, size)) => {
            *budget = budget.map(|left| left - size);
            (Some(regex), Some(captures))
        }
        Err(e) => {
            p.at(pattern.span(), format!("invalid regex in 'match': {e}"));
            (None, Some(Vec::new()))
        }
    }
}

/// A user's enabled rule on successes without `tools`: its `match` must not turn ordinary
/// successes of every tool into errors.
fn check_success_scope(
    source: Option<&Spanned<Source>>,
    pattern: Option<&Spanned<String>>,
    p: &mut Problems,
) {
    let Some(s) = source.filter(|s| *s.get_ref() == Source::Success) else {
        return;
    };
    if let Some((span, why)) = unscoped_success_rule(pattern) {
        p.at(span.unwrap_or(s.span()), why);
    }
}

/// `tools`: the globs, or `None` for every tool. A filter that does not build is an error,
/// never dropped: the rule would apply to every tool.
fn compile_tools(tools: &[Spanned<String>], p: &mut Problems) -> Option<GlobSet> {
    let first = tools.first()?;
    let mut builder = GlobSetBuilder::new();
    for glob in tools {
        match Glob::new(glob.get_ref()) {
            Ok(g) => {
                builder.add(g);
            }
            Err(e) => p.at(glob.span(), format!("invalid glob in 'tools': {e}")),
        }
    }
    builder
        .build()
        .map_err(|e| {
            p.at(
                first.span(),
                format!("the globs in 'tools' do not build: {e}"),
            )
        })
        .ok()
}

/// `source`: a failure's source, never the proxy's own.
fn check_source(source: Option<&Spanned<Source>>, p: &mut Problems) {
    if let Some(s) = source.filter(|s| *s.get_ref() == Source::Proxy) {
        p.at(
            s.span(),
            "'source' must be \"result\", \"rpc\" or \"success\"",
        );
    }
}

/// `category`: any but `unknown`, which is for failures no rule matches.
fn check_category(category: Option<&Spanned<Category>>, p: &mut Problems) {
    if let Some(c) = category.filter(|c| *c.get_ref() == Category::Unknown) {
        p.at(
            c.span(),
            "'category' must be transient, validation, business or permission \
             (unknown is for failures no rule matches)",
        );
    }
}

/// `code`: UPPER_SNAKE_CASE.
fn check_code(code: Option<&Spanned<String>>, p: &mut Problems) {
    if let Some(code) = code.filter(|c| !taxonomy::is_valid_code(c.get_ref())) {
        p.at(
            code.span(),
            format!("'code' must be UPPER_SNAKE_CASE, not '{}'", code.get_ref()),
        );
    }
}

/// `retry_after`: at most a day.
fn check_retry_after(retry_after: Option<&Spanned<u64>>, p: &mut Problems) {
    if let Some(after) = retry_after.filter(|a| *a.get_ref() > MAX_RETRY_AFTER_SECONDS) {
        p.at(
            after.span(),
            format!(
                "'retry_after' is in seconds, from 0 to {MAX_RETRY_AFTER_SECONDS} (a day), not {}",
                after.get_ref()
            ),
        );
    }
}

/// `reclassify`: only for rules on successes. Whether the rule reclassifies.
fn check_reclassify(
    reclassify: Option<&Spanned<bool>>,
    source: Option<&Spanned<Source>>,
    p: &mut Problems,
) -> bool {
    let on_success = source.map(|s| *s.get_ref()) == Some(Source::Success);
    let Some(r) = reclassify.filter(|r| *r.get_ref()) else {
        return false;
    };
    if !on_success {
        p.at(
            r.span(),
            "'reclassify' is for rules with source = \"success\"",
        );
    }
    true
}

/// The rule's category: its `category`, or the one its well-known `code` implies.
fn resolve_category(raw: &RawRule, reclassify: bool, p: &mut Problems) -> Category {
    match (&raw.category, &raw.code) {
        (Some(c), _) => *c.get_ref(),
        (None, Some(code)) => taxonomy::category_of_code(code.get_ref()).unwrap_or_else(|| {
            p.at(
                code.span(),
                format!(
                    "'code' {} is not a well-known code: give a 'category' too",
                    code.get_ref()
                ),
            );
            Category::Unknown
        }),
        // Reclassified successes take the category of the rule that classifies their text; a
        // switched-off rule decides nothing, so it needs no category.
        (None, None) if reclassify || !raw.enabled => Category::Unknown,
        (None, None) => {
            p.at(raw.id.span(), "a rule needs a 'category' or a 'code'");
            Category::Unknown
        }
    }
}

/// `message`, `user_message`, `alternatives`: templates whose placeholders are `known`.
fn template(
    t: &Spanned<String>,
    known: &dyn Fn(&str) -> bool,
    p: &mut Problems,
) -> Option<Template> {
    Template::parse(t.get_ref(), known)
        .map_err(|e| p.at(t.span(), e.to_string()))
        .ok()
}

/// `[[rule.example]]`: a tool to run as where the rule has `tools`, a valid `code`.
fn compile_example(
    spanned: Spanned<RawExample>,
    lines: &Lines,
    has_tools: bool,
    p: &mut Problems,
) -> Example {
    let span = spanned.span();
    let (line, col) = lines.line_col(span.start);
    let e = spanned.into_inner();
    if has_tools && e.tool.is_none() {
        p.at(
            span.clone(),
            "an example of a rule with 'tools' needs a 'tool' to run as",
        );
    }
    if let Some(code) = e.code.as_deref().filter(|c| !taxonomy::is_valid_code(c)) {
        p.at(
            span,
            format!("example 'code' must be UPPER_SNAKE_CASE, not '{code}'"),
        );
    }
    Example {
        text: e.text,
        tool: e.tool.unwrap_or_else(|| "tool".to_owned()),
        source: e.source.unwrap_or(Source::Result),
        rpc_code: e.rpc_code,
        line,
        col,
        rule: e.rule.unwrap_or_else(|| p.id.to_owned()),
        category: e.category,
        code: e.code,
        retryable: e.retryable,
        retry_after: e.retry_after,
    }
}

pub(super) fn check_unique_ids(rules: &[Loaded], problems: &mut Vec<Diagnostic>) {
    let mut seen: HashMap<&str, &Rule> = HashMap::new();
    for Loaded { rule, .. } in rules {
        if let Some(first) = seen.insert(&rule.id, rule) {
            problems.push(Diagnostic {
                file: rule.file.clone(),
                line: rule.line,
                col: rule.col,
                rule: Some(rule.id.clone()),
                message: format!(
                    "duplicate rule id (first defined at {}:{}:{})",
                    first.file, first.line, first.col
                ),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::RuleSet;
    use crate::diagnostic::{Diagnostics, SourceFile};

    fn load(text: &str) -> Result<RuleSet, Diagnostics> {
        RuleSet::load(&[SourceFile::new("r.toml", text)], &[])
    }

    fn errors(text: &str) -> Vec<String> {
        load(text)
            .unwrap_err()
            .0
            .iter()
            .map(|d| {
                // Every problem of a load is an error; what follows the word is tested here.
                let line = d.to_string();
                line.strip_prefix("error: ")
                    .unwrap_or_else(|| panic!("{line}"))
                    .to_owned()
            })
            .collect()
    }

    #[test]
    fn a_toml_error_names_the_rule_it_is_in_or_none() {
        let first = "[[rule]]\nid = \"first\"\nmatch = \"a\"\ncategory = \"business\"\n\n";
        let cases = [
            // The second rule has no id: not the first one's.
            (
                "[[rule]]\nmatch = \"b\"\ncategory = \"business\"\n",
                "r.toml:6:1: missing field",
            ),
            // Spaces inside the brackets are still a rule.
            (
                "[[ rule ]]\nid = \"second\"\nmatch = \"b\"\ncategory = \"busines\"\n",
                "rule 'second': unknown variant",
            ),
            // A table that is no rule.
            ("[rules]\nx = 1\n", "r.toml:6:2: unknown field"),
        ];
        for (second, want) in cases {
            let got = errors(&format!("{first}{second}")).join("\n");
            assert!(got.contains(want), "{got}");
            assert!(!got.contains("rule 'first'"), "{got}");
        }
    }

    #[test]
    fn a_toml_error_in_an_inline_rule_names_that_rule() {
        let text = "rule = [\n  { id = \"first\", match = \"a{2}\", category = \"business\" },\n  \
                    { id = \"second\", match = \"b\", category = \"busines\" },\n]\n";
        assert_eq!(
            errors(text),
            [
                "r.toml:3:44: rule 'second': unknown variant `busines`, expected one of \
              `transient`, `validation`, `business`, `permission`, `unknown`"
            ]
        );
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
    fn a_pattern_name_nobody_defined_is_located_and_nothing_loads() {
        let e = errors(
            "[patterns]\nframe = 'HTTP '\n[[rule]]\nid = \"p\"\nmatch = '{fram}404'\n\
             category = \"validation\"\n",
        );
        assert_eq!(
            e,
            [
                "r.toml:5:9: rule 'p': 'match' uses '{fram}', which this file's [patterns] \
              does not define (a literal brace is written '\\{')"
            ]
        );
        let e = errors("[patterns]\nouter = '{inner}x'\ninner = 'y'\n");
        assert_eq!(
            e,
            ["r.toml:2:9: pattern 'outer' refers to '{inner}': a pattern cannot use another one"]
        );
        let e = errors("[patterns]\n'2xx' = 'y'\n");
        assert!(e[0].contains("pattern name '2xx' must be letters"), "{e:?}");
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
    fn retry_after_is_at_most_a_day() {
        let rule = |after: &str| {
            format!("[[rule]]\nid = \"r\"\ncategory = \"transient\"\nretry_after = {after}\n")
        };
        assert!(load(&rule("86400")).is_ok());
        assert_eq!(
            errors(&rule("9223372036854775807")),
            [
                "r.toml:4:15: rule 'r': 'retry_after' is in seconds, from 0 to 86400 (a day), not \
              9223372036854775807"
            ]
        );
    }

    #[test]
    fn a_verdict_that_contradicts_itself_is_refused_at_its_key() {
        let rule = |keys: &str| format!("[[rule]]\nid = \"r\"\nmatch = \"x\"\n{keys}\n");
        assert_eq!(
            errors(&rule("category = \"permission\"\nretryable = true")),
            [
                "r.toml:5:13: rule 'r': retryable = true contradicts category permission: access \
                 that was refused is escalated to a human, so it is never retried; if this failure \
                 passes by itself, give it category transient and a code that says so"
            ]
        );
        let e = errors(&rule("code = \"NOT_FOUND\"\nretryable = true"));
        assert!(
            e[0].starts_with("r.toml:5:13: rule 'r': retryable = true contradicts code NOT_FOUND"),
            "{e:?}"
        );
        assert_eq!(
            errors(&rule("category = \"validation\"\nretry_after = 5")),
            [
                "r.toml:5:15: rule 'r': 'retry_after' is for failures that are retried, and a \
                 validation failure with code VALIDATION_ERROR is not (set retryable = true if it \
                 is): the delay would never be sent"
            ]
        );
        let e = errors(&rule(
            "category = \"transient\"\nretryable = false\nretry_after = 5",
        ));
        assert!(e[0].contains("is not (retryable = false)"), "{e:?}");
        // What the seeds allow: a retried business failure with its delay, a permission
        // failure said not retryable, a transient delay, a quota's code on a retried failure.
        for fine in [
            "category = \"business\"\nretryable = true\nretry_after = 60",
            "category = \"permission\"\nretryable = false",
            "category = \"transient\"\nretry_after = 5",
            "code = \"RATE_LIMITED\"\nretry_after = 5",
        ] {
            assert!(load(&rule(fine)).is_ok(), "{fine}");
        }
    }

    #[test]
    fn a_backslash_in_double_quotes_is_answered_with_single_quotes() {
        let e = errors("[[rule]]\nid = \"r\"\nmatch = \"\\d+ files\"\ncategory = \"business\"\n");
        assert!(e[0].starts_with("r.toml:3:"), "{e:?}");
        assert!(e[0].contains("rule 'r': invalid escape sequence"), "{e:?}");
        assert!(
            e[0].contains("in single quotes a backslash stays as written: '\\d+ files'"),
            "{e:?}"
        );
        assert!(!e[0].contains('\n'), "one line: {e:?}");
    }

    #[test]
    fn a_success_rule_without_tools_must_match_only_a_failure() {
        let rule = |rest: &str| {
            format!("[[rule]]\nid = \"s\"\nsource = \"success\"\ncategory = \"business\"\n{rest}")
        };
        assert_eq!(
            errors(&rule("match = '.*'\n")),
            [
                "r.toml:5:9: rule 's': a rule with source = \"success\" and no 'tools' must match \
              only the exact phrasing of a failure, but this 'match' also takes the ordinary \
              success \"\": scope it with 'tools', or match the failure's own words (such as \
              '^Database error: ')"
            ]
        );
        let e = errors(&rule("match = '(?i)ok'\n"));
        assert!(e[0].contains("the ordinary success \"ok\""), "{e:?}");
        let e = errors(&rule(""));
        assert!(
            e[0].starts_with("r.toml:3:10: rule 's': a rule with source = \"success\" needs"),
            "{e:?}"
        );
        assert!(load(&rule("match = '^Database error: '\n")).is_ok());
        assert!(load(&rule("match = '.*'\ntools = [\"query\"]\n")).is_ok());
        // Parked, it turns nothing into an error.
        assert!(load(&rule("match = '.*'\nenabled = false\n")).is_ok());
    }

    #[test]
    fn an_id_with_control_characters_is_refused_and_shown_escaped() {
        let e = errors(
            "[[rule]]\nid = \"a\\nr.toml:1:1: rule 'fake'\\u001b[2K\"\ncategory = \"business\"\n",
        );
        assert_eq!(
            e,
            ["r.toml:2:6: rule 'a\\nr.toml:1:1: rule 'fake'\\u{1b}[2K': 'id' must be printable: \
              no control characters (newlines, tabs, escapes)"]
        );
        assert!(load("[[rule]]\nid = \"règle-é🦀 x\"\ncategory = \"business\"\n").is_ok());
    }

    #[test]
    fn syntax_errors_are_located() {
        let e = errors("[[rule]]\nid = \"s\"\nmatch = \"x\ncategory = \"business\"\n");
        assert!(e[0].starts_with("r.toml:3:"), "{}", e[0]);
        assert!(e[0].contains("rule 's'"), "{}", e[0]);
    }
}
