//! Measures the embedded default rules against a corpus of real failure texts
//! (tests/corpus/*.jsonl, provenance in tests/corpus/README.md): each case was labelled from
//! what the failure means, before looking at the rules. Prints a summary and fails below the
//! bars: category agreement >= 95%, no permission, validation or business failure marked
//! retryable, at most 3% unclassified, at least 300 cases from at least 15 distinct origins.
//!
//! `cargo test --test corpus -- --nocapture` shows the figures and every disagreement.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use mcp_errnorm::classify::classify;
use mcp_errnorm::rules::{Failure, RuleSet};
use mcp_errnorm::taxonomy::{Category, Source};
use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    text: String,
    tool: String,
    source: String,
    rpc_code: Option<i64>,
    category: String,
    code: String,
    retryable: bool,
    origin: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Success {
    text: String,
    tool: String,
    origin: String,
}

fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

/// Every `*.jsonl` file of the corpus but the successes, as (file name, case).
fn failure_cases() -> Vec<(String, Case)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .filter(|p| !p.ends_with("successes.jsonl"))
        .collect();
    files.sort();
    let mut cases = Vec::new();
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).unwrap();
        for (n, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            let case: Case =
                serde_json::from_str(line).unwrap_or_else(|e| panic!("{name}:{}: {e}", n + 1));
            cases.push((format!("{name}:{}", n + 1), case));
        }
    }
    cases
}

/// The package or API an origin names, without version or detail:
/// `httpx@0.28.1` -> `httpx`, `psql (PostgreSQL) 15.18` -> `psql`.
fn origin_name(origin: &str) -> String {
    let end = origin
        .char_indices()
        .skip(1)
        .find(|&(_, c)| c == '@' || c == '(')
        .map_or(origin.len(), |(i, _)| i);
    origin[..end].trim().to_owned()
}

fn category(label: &str) -> Category {
    match label {
        "transient" => Category::Transient,
        "validation" => Category::Validation,
        "business" => Category::Business,
        "permission" => Category::Permission,
        other => panic!("unknown category label '{other}'"),
    }
}

fn source(label: &str) -> Source {
    match label {
        "result" => Source::Result,
        "rpc" => Source::Rpc,
        other => panic!("unknown source label '{other}'"),
    }
}

fn pct(n: usize, of: usize) -> f64 {
    100.0 * n as f64 / of.max(1) as f64
}

#[test]
fn the_default_rules_classify_the_real_failure_corpus() {
    let rules = RuleSet::defaults();
    let cases = failure_cases();
    let total = cases.len();
    let mut category_ok = 0;
    let mut retryable_ok = 0;
    let mut code_ok = 0;
    let mut unclassified = 0;
    let mut wrongly_retryable = Vec::new();
    let mut disagreements = Vec::new();
    let mut origins: BTreeMap<String, usize> = BTreeMap::new();
    let mut rules_used: BTreeSet<String> = BTreeSet::new();

    for (at, case) in &cases {
        *origins.entry(origin_name(&case.origin)).or_default() += 1;
        let expected = category(&case.category);
        let v = classify(
            &rules,
            Failure {
                text: &case.text,
                tool: &case.tool,
                source: source(&case.source),
                rpc_code: case.rpc_code,
            },
        );
        let rule = v.rule_id.clone().unwrap_or_else(|| "(none)".to_owned());
        rules_used.insert(rule.clone());
        if v.category == Category::Unknown {
            unclassified += 1;
        }
        if v.category == expected {
            category_ok += 1;
        }
        if v.retryable == case.retryable {
            retryable_ok += 1;
        }
        if v.code == case.code {
            code_ok += 1;
        }
        let line = format!(
            "{at} [{}] expected {}/{}/{} got {}/{}/{} by {rule}: {:?}",
            origin_name(&case.origin),
            case.category,
            case.code,
            if case.retryable { "retry" } else { "no-retry" },
            v.category,
            v.code,
            if v.retryable { "retry" } else { "no-retry" },
            truncate(&case.text, 160),
        );
        if v.retryable && expected != Category::Transient {
            wrongly_retryable.push(line.clone());
        }
        if v.category != expected || v.retryable != case.retryable {
            disagreements.push(line);
        }
    }

    let successes = success_cases();
    println!(
        "corpus: {total} failure cases from {} origins, {} successes kept for success-scoped rules",
        origins.len(),
        successes.len()
    );
    for (origin, n) in &origins {
        println!("  {n:4}  {origin}");
    }
    println!(
        "category agreement:  {category_ok}/{total} = {:.1}%",
        pct(category_ok, total)
    );
    println!(
        "retryable agreement: {retryable_ok}/{total} = {:.1}%",
        pct(retryable_ok, total)
    );
    println!(
        "code agreement:      {code_ok}/{total} = {:.1}%",
        pct(code_ok, total)
    );
    println!(
        "unclassified:        {unclassified}/{total} = {:.1}%",
        pct(unclassified, total)
    );
    println!(
        "permission/validation/business marked retryable: {}",
        wrongly_retryable.len()
    );
    println!("rules that decided at least one case: {}", rules_used.len());
    println!("disagreements ({}):", disagreements.len());
    for d in &disagreements {
        println!("  {d}");
    }

    assert!(total >= 300, "{total} cases: at least 300 wanted");
    assert!(
        origins.len() >= 15,
        "{} origins: at least 15 wanted",
        origins.len()
    );
    assert!(
        wrongly_retryable.is_empty(),
        "non-transient failures marked retryable:\n{}",
        wrongly_retryable.join("\n")
    );
    assert!(
        pct(category_ok, total) >= 95.0,
        "category agreement {:.1}% < 95%",
        pct(category_ok, total)
    );
    assert!(
        pct(unclassified, total) <= 3.0,
        "unclassified {:.1}% > 3%",
        pct(unclassified, total)
    );
}

fn success_cases() -> Vec<Success> {
    std::fs::read_to_string(corpus_dir().join("successes.jsonl"))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn no_shipped_rule_turns_a_real_success_into_a_failure() {
    let successes = success_cases();
    assert!(successes.len() >= 30, "{}", successes.len());
    let rules = RuleSet::defaults();
    for s in &successes {
        assert!(!s.tool.is_empty() && !s.origin.is_empty(), "{s:?}");
        let failure = Failure {
            text: &s.text,
            tool: &s.tool,
            source: Source::Success,
            rpc_code: None,
        };
        let hit = rules.first_match(failure).map(|m| m.rule.id.clone());
        assert_eq!(
            hit, None,
            "a genuine result of {} ({}) became a failure: {:?}",
            s.tool, s.origin, s.text
        );
    }
}

#[test]
fn the_shipped_success_rules_catch_failures_hidden_as_successes() {
    let rules = RuleSet::defaults();
    // Texts mcp-server-sqlite returns as successful results (src/mcp_server_sqlite/server.py).
    for (tool, text, category) in [
        (
            "read_query",
            "Database error: no such table: orders",
            Category::Validation,
        ),
        (
            "write_query",
            "Database error: database is locked",
            Category::Transient,
        ),
        (
            "create_table",
            "Error: Only CREATE TABLE statements are allowed",
            Category::Validation,
        ),
    ] {
        let failure = Failure {
            text,
            tool,
            source: Source::Success,
            rpc_code: None,
        };
        assert!(rules.first_match(failure).is_some(), "{text}");
        assert_eq!(classify(&rules, failure).category, category, "{text}");
    }
    // The same words from another tool, or inside a genuine result, stay successes.
    for (tool, text) in [
        ("get-annotated-message", "Error: Operation failed"),
        ("read_query", "[{'log': 'Database error: none today'}]"),
    ] {
        let failure = Failure {
            text,
            tool,
            source: Source::Success,
            rpc_code: None,
        };
        assert!(rules.first_match(failure).is_none(), "{tool}: {text}");
    }
}

#[test]
fn origin_names_drop_versions_and_details() {
    assert_eq!(origin_name("httpx@0.28.1"), "httpx");
    assert_eq!(origin_name("psql (PostgreSQL) 15.18"), "psql");
    assert_eq!(
        origin_name("@modelcontextprotocol/server-github@2025.4.8 (upstream: x)"),
        "@modelcontextprotocol/server-github"
    );
    assert_eq!(origin_name("rust std@1.95.0 (std::io)"), "rust std");
}

fn truncate(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_owned(),
    }
}
