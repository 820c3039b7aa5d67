//! The tuning loop: failures no rule decided, grouped by their shape, and draft rules for the
//! groups that come back most. Pure: failures in, groups and TOML text out.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

use regex::Regex;

use crate::model::Model;

/// How much of a failure its shape keeps: the first line, where the failure says what it is.
const SHAPE_CHARS: usize = 160;

/// Failures of one shape.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    /// The failure's first line with its variable parts masked: `'…'`, `"…"`, `<n>`, `<path>`,
    /// `<url>`, `<id>`, `<email>`.
    pub shape: String,
    pub count: usize,
    pub tools: BTreeSet<String>,
    /// One failure of the group, as it came.
    pub example: String,
    /// The tool of the example.
    pub example_tool: String,
}

/// The variable parts of a failure, in the order they are masked, with the pattern a draft
/// rule matches them by.
const VARIABLE: [(&str, &str, &str); 8] = [
    (r"https?://\S+", "<url>", r"\S+"),
    (r"[\w.+-]+@[\w-]+\.[\w.-]+", "<email>", r"\S+"),
    (r"'[^'\n]*'", "'…'", r"'[^']*'"),
    (r#""[^"\n]*""#, "\"…\"", r#""[^"]*""#),
    (r"`[^`\n]*`", "`…`", r"`[^`]*`"),
    (r"(?:[A-Za-z]:\\|\.{0,2}/)[\w.\-/\\]+", "<path>", r"\S+"),
    (
        r"\b[0-9a-fA-F]{8}-[0-9a-fA-F-]{27}\b|\b[0-9a-fA-F]*\d[0-9a-fA-F]*[a-fA-F][0-9a-fA-F]*\b|\b[A-Za-z]+_[A-Za-z0-9_]*\d[A-Za-z0-9_]*\b",
        "<id>",
        r"\S+",
    ),
    (r"\b\d+(?:\.\d+)?\b", "<n>", r"\d+(?:\.\d+)?"),
];

static VARIABLES: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    VARIABLE
        .iter()
        .map(|(pattern, _, _)| Regex::new(pattern).expect("valid"))
        .collect()
});

/// A failure's shape: its first line, SDK prefixes dropped, variable parts masked.
pub fn shape(text: &str) -> String {
    static PREFIX: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^(?:MCP error -?\d+: |Error executing tool [^:\s]+: |Error: )+")
            .expect("valid")
    });
    let line = text.trim().lines().next().unwrap_or("");
    let line = PREFIX.replace(line, "");
    let head: String = line.chars().take(SHAPE_CHARS).collect();
    let mut shape = head;
    for (regex, (_, mask, _)) in VARIABLES.iter().zip(VARIABLE) {
        shape = regex.replace_all(&shape, mask).into_owned();
    }
    shape
}

/// Groups failures (tool, text) by shape, most frequent first (then by shape, for a stable
/// order).
pub fn group<'a>(failures: impl IntoIterator<Item = (&'a str, &'a str)>) -> Vec<Group> {
    let mut groups: BTreeMap<String, Group> = BTreeMap::new();
    for (tool, text) in failures {
        let shape = shape(text);
        let group = groups.entry(shape.clone()).or_insert_with(|| Group {
            shape,
            count: 0,
            tools: BTreeSet::new(),
            example: text.to_owned(),
            example_tool: tool.to_owned(),
        });
        group.count += 1;
        group.tools.insert(tool.to_owned());
    }
    let mut groups: Vec<Group> = groups.into_values().collect();
    groups.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.shape.cmp(&b.shape)));
    groups
}

/// The regex a draft rule matches a group by: its shape's words as written, its variable parts
/// generalized. Matches the group's example (checked; `None` if it would not).
pub fn pattern(group: &Group) -> Option<String> {
    let mut pattern = String::new();
    let mut rest = group.shape.as_str();
    'outer: while !rest.is_empty() {
        for (_, mask, general) in VARIABLE {
            if let Some(after) = rest.strip_prefix(mask) {
                pattern.push_str(general);
                rest = after;
                continue 'outer;
            }
        }
        let c = rest.chars().next().expect("not empty");
        pattern.push_str(&regex::escape(&c.to_string()));
        rest = &rest[c.len_utf8()..];
    }
    let pattern = pattern.replace(' ', r"\s+");
    let matches = Regex::new(&pattern).is_ok_and(|r| r.is_match(&group.example));
    matches.then_some(pattern)
}

/// Draft rules for `groups`, as a TOML file `check` accepts as written: each with the category
/// the fallback model proposes (marked as a guess to confirm) and the group's example.
pub fn draft_rules(groups: &[Group], model: &Model) -> String {
    let mut out = String::from(
        "# Draft rules written by `mcp-errnorm coverage --suggest` from failures no rule decided.\n\
         # Each category is the fallback model's guess: confirm or change it, then narrow the\n\
         # match, give the rule a better id and a message, and run `mcp-errnorm check`.\n",
    );
    let mut used: BTreeSet<String> = BTreeSet::new();
    for group in groups {
        let Some(pattern) = pattern(group) else {
            continue;
        };
        let guess = model.guess(&group.example);
        let id = unique_id(&group.shape, &mut used);
        let tools: Vec<&String> = group.tools.iter().collect();
        out.push_str(&format!(
            "\n# {} failure{} from {}; shape: {}\n",
            group.count,
            if group.count == 1 { "" } else { "s" },
            tools
                .iter()
                .map(|t| t.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            group.shape
        ));
        out.push_str(&format!(
            "# GUESS: the fallback model says {} with confidence {:.2}; confirm it.\n",
            guess.category, guess.confidence
        ));
        out.push_str("[[rule]]\n");
        out.push_str(&format!("id = {}\n", toml_string(&id)));
        out.push_str(&format!("match = {}\n", toml_string(&pattern)));
        out.push_str(&format!("category = \"{}\"\n", guess.category));
        out.push_str("  [[rule.example]]\n");
        out.push_str(&format!("  text = {}\n", toml_string(&group.example)));
        out.push_str(&format!("  tool = {}\n", toml_string(&group.example_tool)));
        out.push_str(&format!("  category = \"{}\"\n", guess.category));
    }
    out
}

/// A rule id from a shape's first words: `draft-quota-exceeded-for-project`.
fn unique_id(shape: &str, used: &mut BTreeSet<String>) -> String {
    let words: Vec<String> = shape
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| w.len() > 1 && w.chars().any(|c| c.is_ascii_alphabetic()))
        .take(5)
        .map(str::to_ascii_lowercase)
        .collect();
    let base = if words.is_empty() {
        "draft".to_owned()
    } else {
        format!("draft-{}", words.join("-"))
    };
    let mut id = base.clone();
    let mut n = 2;
    while !used.insert(id.clone()) {
        id = format!("{base}-{n}");
        n += 1;
    }
    id
}

/// A TOML string: serde's quoting, which escapes what TOML needs.
fn toml_string(s: &str) -> String {
    toml::Value::String(s.to_owned()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::SourceFile;
    use crate::rules::RuleSet;

    #[test]
    fn shapes_mask_what_varies() {
        assert_eq!(
            shape("Error: Project 'acme-web' not found (id 4211) at https://api.x.io/p/4211"),
            "Project '…' not found (id <n>) at <url>"
        );
        assert_eq!(
            shape("MCP error -32603: ENOENT: no such file, open /srv/app/a.yaml\nmore"),
            "ENOENT: no such file, open <path>"
        );
        assert_eq!(
            shape("quota exceeded for key sk_live_abcdef123456 by bob@example.com"),
            "quota exceeded for key <id> by <email>"
        );
    }

    #[test]
    fn groups_come_most_frequent_first_with_their_tools() {
        let failures = [
            ("a", "Project 'x' not found"),
            ("b", "Project 'y' not found"),
            ("a", "Quota 5 exceeded"),
            ("c", "Project 'z' not found"),
        ];
        let groups = group(failures);
        assert_eq!(groups.len(), 2);
        assert_eq!(groups[0].shape, "Project '…' not found");
        assert_eq!(groups[0].count, 3);
        assert_eq!(groups[0].tools.iter().collect::<Vec<_>>(), ["a", "b", "c"]);
        assert_eq!(groups[0].example, "Project 'x' not found");
    }

    #[test]
    fn draft_rules_pass_check_as_written() {
        let failures = [
            (
                "deploy",
                "Deployment 'web-42' is frozen until 2026-12-24 by change policy CP-7",
            ),
            (
                "deploy",
                "Deployment 'api' is frozen until 2027-01-02 by change policy CP-9",
            ),
            (
                "query",
                "Warehouse WH_42 suspended: \"credits\" [code 7781]",
            ),
            ("sync", "Widget (sync) went sideways? see C:\\logs\\x.txt"),
        ];
        let drafts = draft_rules(&group(failures), &crate::model::EMBEDDED);
        assert!(
            drafts.contains("# GUESS: the fallback model says"),
            "{drafts}"
        );
        let set = RuleSet::load(&[SourceFile::new("drafts.toml", drafts.as_str())], &[])
            .unwrap_or_else(|e| panic!("{e}\n{drafts}"));
        assert_eq!(set.rules().len(), 3, "{drafts}");
        let failing = crate::check::run_examples(&set);
        assert!(failing.is_empty(), "{failing:?}\n{drafts}");
        // Both frozen deployments are matched by the one rule drafted from their shape.
        let frozen = &set.rules()[0];
        assert!(frozen.id.starts_with("draft-deployment"), "{}", frozen.id);
        let matched = |text, tool| {
            set.first_match(crate::rules::Failure {
                text,
                tool,
                source: crate::taxonomy::Source::Result,
                rpc_code: None,
            })
            .map(|m| m.rule.id.clone())
        };
        assert_eq!(
            matched(
                "Deployment 'x' is frozen until 2030-01-01 by change policy CP-1",
                "deploy"
            ),
            Some(frozen.id.clone())
        );
    }
}
