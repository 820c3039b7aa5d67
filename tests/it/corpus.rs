//! Measures classification against corpora of real failure texts, labelled from what each
//! failure means before any classifier ran on them (docs/labelling.md):
//!
//! - development (`tests/corpus/*.jsonl`): the rules and the fallback model are tuned on it;
//!   its figures are a ceiling. Every disagreement is printed.
//! - holdout (`tests/corpus/holdout/*.jsonl`): families no rule was written against and the model
//!   never trained on. Only its aggregate figures are printed, so that nobody tunes on its
//!   cases; its labels are pinned by `holdout/SHA256SUMS`.
//!
//! `cargo test --test it corpus:: -- --nocapture --test-threads 1` prints both scorecards.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use mcp_errnorm::classify::classify;
use mcp_errnorm::config::{Flags, Settings};
use mcp_errnorm::model;
use mcp_errnorm::model::corpus::{self, Case};
use mcp_errnorm::rewrite::{Answer, Rewriter};
use mcp_errnorm::rules::{Failure, RuleSet};
use mcp_errnorm::session::{Answered, Session};
use mcp_errnorm::taxonomy::{Category, Source};
use mcp_errnorm::wire::{self, Line, Message};
use serde::Deserialize;

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

/// The `*.jsonl` files of a folder, sorted, but the successes.
fn case_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .filter(|p| !p.ends_with("successes.jsonl"))
        .collect();
    files.sort();
    files
}

/// Every case of these files, as (where it is written, case).
fn cases_of(files: &[PathBuf]) -> Vec<(String, Case)> {
    let mut cases = Vec::new();
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(path).unwrap();
        let parsed = corpus::parse(&name, &text).unwrap_or_else(|e| panic!("{e}"));
        cases.extend(
            parsed
                .into_iter()
                .enumerate()
                .map(|(n, case)| (format!("{name}#{}", n + 1), case)),
        );
    }
    cases
}

fn pct(n: usize, of: usize) -> f64 {
    100.0 * n as f64 / of.max(1) as f64
}

const CATEGORIES: [Category; 5] = [
    Category::Transient,
    Category::Validation,
    Category::Business,
    Category::Permission,
    Category::Unknown,
];

/// Agreement counts of one group of cases (a whole set, a family, a category).
#[derive(Debug, Default, Clone, Copy)]
struct Tally {
    cases: usize,
    category_ok: usize,
    retryable_ok: usize,
    wrongly_retryable: usize,
    unknown: usize,
}

impl Tally {
    fn add(&mut self, case: &Case, got: Category, retryable: bool) {
        // A retry is defensible where the label allows `transient` as the second reading.
        let may_retry = case.retryable
            || (got == Category::Transient && case.also == Some(Category::Transient));
        self.cases += 1;
        self.category_ok += usize::from(case.accepts(got));
        self.retryable_ok += usize::from(retryable == case.retryable || retryable && may_retry);
        self.wrongly_retryable += usize::from(retryable && !may_retry);
        self.unknown += usize::from(got == Category::Unknown);
    }

    fn row(&self, name: &str) -> String {
        format!(
            "{name:<36} {:>5} {:>9.1}% {:>9.1}% {:>6} {:>8.1}%",
            self.cases,
            pct(self.category_ok, self.cases),
            pct(self.retryable_ok, self.cases),
            self.wrongly_retryable,
            pct(self.unknown, self.cases)
        )
    }
}

/// What the default table makes of one set of cases.
struct Scorecard {
    all: Tally,
    by_family: BTreeMap<String, Tally>,
    by_category: BTreeMap<&'static str, Tally>,
    /// Cases decided by a rule, and by the fallback model.
    by_decider: BTreeMap<&'static str, Tally>,
    /// (label, got) -> count.
    confusion: BTreeMap<(&'static str, &'static str), usize>,
    /// One line per case the table got wrong (category or retryable).
    disagreements: Vec<String>,
    /// Where each case the table retries but must not be retried is (`file#line`).
    wrong_retries: Vec<String>,
}

fn score(rules: &RuleSet, cases: &[(String, Case)]) -> Scorecard {
    let mut card = Scorecard {
        all: Tally::default(),
        by_family: BTreeMap::new(),
        by_category: BTreeMap::new(),
        by_decider: BTreeMap::new(),
        confusion: BTreeMap::new(),
        disagreements: Vec::new(),
        wrong_retries: Vec::new(),
    };
    for (at, case) in cases {
        let v = classify(
            rules,
            Failure {
                text: &case.text,
                tool: &case.tool,
                source: case.source,
                rpc_code: case.rpc_code,
            },
        );
        let label = case.category;
        card.all.add(case, v.category, v.retryable);
        for tally in [
            card.by_family.entry(case.family()).or_default(),
            card.by_category.entry(label.as_str()).or_default(),
            card.by_decider
                .entry(match v.rule_id.as_deref() {
                    None => "(none)",
                    Some("model") => "model",
                    Some(_) => "rules",
                })
                .or_default(),
        ] {
            tally.add(case, v.category, v.retryable);
        }
        *card
            .confusion
            .entry((label.as_str(), v.category.as_str()))
            .or_default() += 1;
        let retry_defensible = v.retryable
            && v.category == Category::Transient
            && case.also == Some(Category::Transient);
        if v.retryable && !case.retryable && !retry_defensible {
            card.wrong_retries.push(at.clone());
        }
        if !case.accepts(v.category) || (v.retryable != case.retryable && !retry_defensible) {
            card.disagreements.push(format!(
                "{at} [{}] expected {}/{}/{} got {}/{}/{} by {}: {:?}",
                case.family(),
                case.category,
                case.code,
                if case.retryable { "retry" } else { "no-retry" },
                v.category,
                v.code,
                if v.retryable { "retry" } else { "no-retry" },
                v.rule_id.as_deref().unwrap_or("(none)"),
                truncate(&case.text, 160),
            ));
        }
    }
    card
}

impl Scorecard {
    fn print(&self, title: &str) {
        let header = format!(
            "{:<36} {:>5} {:>10} {:>10} {:>6} {:>9}",
            "", "cases", "category", "retryable", "wrong", "unknown"
        );
        println!(
            "\n== {title}: {} cases, {} families ==",
            self.all.cases,
            self.by_family.len()
        );
        println!("{header}");
        println!("{}", self.all.row("all"));
        println!("-- by decider");
        for (name, t) in &self.by_decider {
            println!("{}", t.row(name));
        }
        println!("-- by labelled category");
        for (name, t) in &self.by_category {
            println!("{}", t.row(name));
        }
        println!("-- by family");
        for (name, t) in &self.by_family {
            println!("{}", t.row(name));
        }
        println!("-- confusion (rows: label, columns: verdict)");
        print!("{:<12}", "");
        for got in CATEGORIES {
            print!("{:>11}", got.as_str());
        }
        println!();
        for label in &CATEGORIES[..4] {
            print!("{:<12}", label.as_str());
            for got in CATEGORIES {
                let n = self.confusion.get(&(label.as_str(), got.as_str()));
                print!("{:>11}", n.copied().unwrap_or(0));
            }
            println!();
        }
    }
}

/// Development texts the table retries though they must not be, each with why no rule in the
/// table's general words can tell. The test fails on any other, and on these once one is fixed.
const KNOWN_WRONG_RETRIES: &[(&str, &str)] = &[
    (
        "dev-ableton-mcp.jsonl#1",
        "\"Communication error with Ableton: No clip in slot\": the server wraps every answer \
         of Ableton, refusals included, in the words of a failed connection",
    ),
    (
        "dev-ableton-mcp.jsonl#3",
        "the same wrapper around \"Clip slot already has a clip\"",
    ),
    (
        "dev-ableton-mcp.jsonl#4",
        "the same wrapper around \"Clip is not a MIDI clip\"",
    ),
    (
        "dev-apscheduler.jsonl#4",
        "APScheduler's \"Scheduler is not running\" (a state the caller must change) in the words \
         of CUPS's \"Scheduler is not running.\" (a daemon that is down)",
    ),
    (
        "dev-blastplus.jsonl#1",
        "BLAST+'s \"Database error: No alias or index file found\": a database name that does \
         not exist, in the words of a failing database",
    ),
    (
        "dev-conan.jsonl#8",
        "\"Too many failed login attempts, bye!\": labelled a refused login, where most texts \
         of its kind in the corpus are rate limits that a wait clears",
    ),
    (
        "dev-correios.jsonl#8",
        "Portuguese \"Serviço indisponível para o trecho informado\": a service not offered on \
         that route, in the word for a service that is down",
    ),
    (
        "dev-cratedb.jsonl#5",
        "\"SchemaUnknownException[Schema 'pg_catalog' unknown]\": an unknown name read by the \
         words of an unknown error",
    ),
    (
        "dev-culqi.jsonl#9",
        "a card payment refused (\"operacion_denegada\", \"Comercio mal configurado\") whose \
         message to the buyer says \"Intente más tarde\": the words of an overload are read \
         before the Spanish of the refusal",
    ),
    (
        "dev-dask-distributed.jsonl#10",
        "\"Client is closed. Can't send update_graph message.\": the caller's own client, closed \
         by the caller, in the words of a dropped connection",
    ),
    (
        "dev-devcycle.jsonl#2",
        "an envelope that names every failure \"UNKNOWN_ERROR\" around a message that asks the \
         caller to select a project first",
    ),
    (
        "dev-devcycle.jsonl#4",
        "an envelope that names every failure \"UNKNOWN_ERROR\" around \"Feature key and name \
         are required\"",
    ),
    (
        "dev-devcycle.jsonl#8",
        "an envelope that names every failure \"UNKNOWN_ERROR\" around \"No organization ID \
         found in JWT claims\"",
    ),
    (
        "dev-fireblocks.jsonl#10",
        "\"doesn't support the usage of the same idempotency key after an internal error\": a \
         key the caller must change, in the words of a server error",
    ),
    (
        "dev-freshbooks.jsonl#10",
        "\"Unexpected error: No time to log, timer has no duration\" with \"recoverable\": \
         true and \"Please try again\": the server itself calls a state it cannot change \
         recoverable",
    ),
    (
        "dev-go-cqhttp.jsonl#8",
        "\"your account is restricted from login, configure a SignServer and retry\" (in \
         Chinese): a retry invited after an instruction",
    ),
    (
        "dev-hikaricp.jsonl#6",
        "\"Connection is closed\" said of a connection the caller closed: a state, in words every \
         driver also uses for a dropped connection",
    ),
    (
        "dev-hostaway.jsonl#3",
        "an endpoint \"not available\" because it \"may not be enabled for your account\": the \
         words of an outage for a feature the account lacks",
    ),
    (
        "dev-hotelbeds.jsonl#6",
        "an \"Internal Server Error\" frame around \"Request restricted for Ttoo\", a refusal of \
         the account",
    ),
    (
        "dev-hotelbeds.jsonl#7",
        "a \"Server Error\" frame around \"This apikey is not associated with a valid client\"",
    ),
    (
        "dev-htcondor.jsonl#2",
        "\"Failed to connect to local queue manager\" then \"Received \\\"DENIED\\\" from \
         server\": a refusal in a code, after the words of a failed connection",
    ),
    (
        "dev-liteapi.jsonl#5",
        "a 408 Request Timeout whose body says the offer is outdated and must be fetched again",
    ),
    (
        "dev-logseq.jsonl#7",
        "\"Page already exists\" followed by advice for a case that did not happen (\"if a \
         previous call timed out\"): the time limit's words are read before the existing name",
    ),
    (
        "dev-m3db.jsonl#4",
        "\"unable to connect to clusters: only one ... namespace can be specified\": the words \
         of a failed connection before an input error",
    ),
    (
        "dev-magento.jsonl#6",
        "a `\"code\":500` frame around a Spanish sentence (\"no está disponible\": out of \
         stock), in words that also say a service is down",
    ),
    (
        "dev-mitmproxy.jsonl#7",
        "a \"502 Bad Gateway\" page around \"Request destination unknown\": a host that does \
         not exist, in a gateway frame",
    ),
    (
        "dev-moviepy.jsonl#1",
        "\"[Errno 32] Broken pipe\" before FFmpeg's own \"Permission denied\": the pipe broke \
         because FFmpeg stopped on the cause it names after",
    ),
    (
        "dev-moviepy.jsonl#2",
        "\"[Errno 32] Broken pipe\" before FFmpeg's own \"Invalid argument\": the pipe broke \
         because FFmpeg stopped on the cause it names after",
    ),
    (
        "dev-navitia.jsonl#5",
        "\"public transport is not reachable from origin nor destination\": a route that does not \
         exist, in a network outage's words",
    ),
    (
        "dev-nftables.jsonl#1",
        "nftables' \"Device or resource busy\" on deleting a chain that rules still use: a \
         state, in the C library's words for a device another process holds",
    ),
    (
        "dev-nftables.jsonl#2",
        "the same \"Device or resource busy\", for a set still in use",
    ),
    (
        "dev-nftables.jsonl#6",
        "\"Could not resolve hostname\" for 300.1.1.1, an address that is not one: the input is \
         wrong, in the words of a name server that did not answer",
    ),
    (
        "dev-openfisca.jsonl#4",
        "\"Internal server error: Unable to compute variable ... must be computed for a whole \
         month\": an input the model cannot compute, inside the words of a failing server",
    ),
    (
        "dev-payway.jsonl#8",
        "\"Exceeds withdrawal frequency limit\": a business limit on withdrawals, in the words \
         of a request rate",
    ),
    (
        "dev-pgx.jsonl#3",
        "\"failed to connect to postgres\": labelled a refused login from the thread it came \
         from; the text holds only the failed connection",
    ),
    (
        "dev-pufferpanel.jsonl#6",
        "PufferPanel's \"server offline\": the game server the panel manages is stopped (a state \
         the caller changes by starting it), in the words of a host that is down",
    ),
    (
        "dev-pydantic-ai.jsonl#4",
        "Pydantic AI's \"exceeded max retries count of 1. Consider raising the retry limit\": \
         a configured limit, in the words of a connection that gave up",
    ),
    (
        "dev-pytado.jsonl#6",
        "PyTado's \"User took too long to enter key\": a person who did not finish a sign-in in \
         time, in the words of a slow reply",
    ),
    (
        "dev-ray.jsonl#12",
        "\"No available node types can fulfill resource request\": the cluster has no such node \
         type, in the words of nodes that are down",
    ),
    (
        "dev-skypilot.jsonl#6",
        "\"ResourcesUnavailableError: Catalog does not contain any instances satisfying the \
         request\": an input no catalog offers, in the words of resources that are busy",
    ),
    (
        "dev-skyvern.jsonl#5",
        "\"Cloud browsers cannot reach localhost URLs\" under the code INVALID_INPUT: the \
         words of an unreachable host are read before the code that says the input is wrong",
    ),
    (
        "dev-steel-browser.jsonl#10",
        "\"WebSocket endpoint not available. Ensure the browser is launched first.\": a session \
         that was not started, in the words of an endpoint that is down",
    ),
    (
        "dev-text-embeddings-inference.jsonl#7",
        "\"Backend error: `normalize` is not available for SPLADE models\": an option the model \
         does not have, after the words of a failing backend",
    ),
    (
        "dev-thesieure.jsonl#7",
        "\"Lỗi hệ thống\" (system error) whose cause, a duplicate request id, is in an \
         identifier",
    ),
    (
        "dev-verizon-thingspace.jsonl#11",
        "\"HTTP 500 INACTIVE_ACCOUNT: The account is inactive.\": an account's state behind a \
         bare 500",
    ),
    (
        "dev-wrangler.jsonl#4",
        "\"Script startup exceeded CPU time limit\": a limit the script's own code hits every \
         time, in the words of a time limit",
    ),
    (
        "dev-zep.jsonl#5",
        "\"session ended: session has ended\": a closed conversation, in the words of a closed \
         connection",
    ),
];

#[test]
fn the_default_table_on_the_development_corpus() {
    let cases = cases_of(&case_files(&corpus_dir()));
    let card = score(&RuleSet::defaults(), &cases);
    card.print("development (tuned on: a ceiling, not a measure)");
    println!("disagreements ({}):", card.disagreements.len());
    for d in &card.disagreements {
        println!("  {d}");
    }
    let all = card.all;
    assert!(all.cases >= 300, "{} cases: at least 300 wanted", all.cases);
    assert!(
        card.by_family.len() >= 15,
        "{} families",
        card.by_family.len()
    );
    let known: Vec<&str> = KNOWN_WRONG_RETRIES.iter().map(|(at, _)| *at).collect();
    assert_eq!(
        card.wrong_retries, known,
        "non-retryable failures marked retryable (besides the known ones)"
    );
    assert!(
        pct(all.category_ok, all.cases) >= 95.0,
        "category agreement {:.1}% < 95%",
        pct(all.category_ok, all.cases)
    );
    assert!(
        pct(all.unknown, all.cases) <= 3.0,
        "unknown {:.1}% > 3%",
        pct(all.unknown, all.cases)
    );
}

/// The holdout's files with their sha256, as `holdout/SHA256SUMS` pins them.
fn holdout_files() -> Vec<PathBuf> {
    let dir = corpus_dir().join("holdout");
    let sums = std::fs::read_to_string(dir.join("SHA256SUMS")).unwrap();
    let files = case_files(&dir);
    let pinned: BTreeMap<String, String> = sums
        .lines()
        .filter_map(|l| l.split_once("  "))
        .map(|(sum, name)| (name.to_owned(), sum.to_owned()))
        .collect();
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let sum = sha256_hex(&std::fs::read(path).unwrap());
        assert_eq!(
            pinned.get(&name),
            Some(&sum),
            "holdout/{name} differs from its pinned sha256: a holdout label changes only for a \
             misreading, in a commit that says which and why (then update SHA256SUMS)"
        );
    }
    assert_eq!(
        pinned.len(),
        files.len(),
        "SHA256SUMS and the holdout files differ"
    );
    files
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn the_default_table_on_the_holdout() {
    let cases = cases_of(&holdout_files());
    let card = score(&RuleSet::defaults(), &cases);
    card.print("holdout (never tuned on; cases not shown)");
    let all = card.all;
    assert!(
        all.cases >= 400,
        "{} holdout cases: at least 400 wanted",
        all.cases
    );
    assert!(
        card.by_family.len() >= 40,
        "{} families",
        card.by_family.len()
    );
    let development: std::collections::BTreeSet<String> = cases_of(&case_files(&corpus_dir()))
        .iter()
        .map(|(_, c)| c.family())
        .collect();
    for family in card.by_family.keys() {
        assert!(
            !development.contains(family),
            "family '{family}' is both in development and in the holdout"
        );
    }
    HOLDOUT_BARS.check(&all);
}

/// What the holdout must keep: the figures of the shipped defaults on it (holdout 49,
/// 2026-12-05: 89.5%, 92.1%, 5, 2.5%; 90.0% and 1.1% `unknown` when first measured, with the
/// model used from 0.45), less a margin for label noise. They guard against
/// regressions; they are not the targets (docs/classification.md), and nobody tunes on the
/// holdout to pass them.
struct Bars {
    category: f64,
    retryable: f64,
    wrongly_retryable: usize,
    unknown: f64,
}

const HOLDOUT_BARS: Bars = Bars {
    category: 88.5,
    retryable: 91.0,
    wrongly_retryable: 5,
    unknown: 3.5,
};

impl Bars {
    fn check(&self, t: &Tally) {
        assert!(
            t.wrongly_retryable <= self.wrongly_retryable,
            "failures wrongly marked retryable: {}",
            t.wrongly_retryable
        );
        assert!(
            pct(t.category_ok, t.cases) >= self.category,
            "category agreement fell"
        );
        assert!(
            pct(t.retryable_ok, t.cases) >= self.retryable,
            "retryable agreement fell"
        );
        assert!(
            pct(t.unknown, t.cases) <= self.unknown,
            "unknown share rose"
        );
    }
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

fn truncate(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_owned(),
    }
}

#[test]
fn the_embedded_model_is_trained_on_the_development_corpus_as_it_is() {
    let cases: Vec<Case> = cases_of(&case_files(&corpus_dir()))
        .into_iter()
        .map(|(_, c)| c)
        .collect();
    let samples = model::samples(&cases);
    let stale = "src/model/weights.txt is stale: retrain it with \
                 `cargo run --release --example train-model`";
    assert_eq!(
        model::EMBEDDED.trained_on,
        model::fingerprint(&samples, model::TRAINING),
        "{stale}"
    );
    // The same corpus gives the same file, byte for byte.
    let retrained = model::train(&samples, model::TRAINING).to_text();
    assert!(
        retrained == include_str!("../../src/model/weights.txt"),
        "{stale}"
    );
}

/// One result recorded from a real server (tests/corpus/recorded/), with the label of a
/// failure that answered as a success.
#[derive(Debug, Deserialize)]
struct Recorded {
    server: String,
    tool: String,
    arguments: serde_json::Value,
    result: serde_json::Value,
    situation: String,
    category: Option<Category>,
    #[serde(default)]
    also: Option<Category>,
}

fn recorded(file: &str) -> Vec<Recorded> {
    let path = corpus_dir().join("recorded").join(file);
    std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{file}: {e}: {l}")))
        .collect()
}

/// What the proxy (default settings) sends the client for a recorded result: `None` when the
/// result passes untouched.
fn rewritten(r: &Recorded) -> Option<serde_json::Value> {
    static REWRITER: std::sync::LazyLock<Rewriter> =
        std::sync::LazyLock::new(|| Settings::load(&Flags::default()).unwrap().rewriter());
    let rewriter = &*REWRITER;
    let mut session = Session::default();
    let request = serde_json::json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": r.tool, "arguments": r.arguments},
    })
    .to_string();
    let Line::Message(Message::Request { id, method, params }) = wire::parse(&request) else {
        panic!("not a request")
    };
    session.client_request(id, &method, params);
    let response = serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": r.result}).to_string();
    let Line::Message(Message::Response { id, result }) = wire::parse(&response) else {
        panic!("not a response")
    };
    let Answered::Call(answered) = session.upstream_answer(id, Some(result)) else {
        panic!("not a call's answer")
    };
    rewriter
        .rewrite(&answered, Answer::Result(result))
        .map(|r| r.result)
}

#[test]
fn results_of_real_servers_successes_pass_and_hidden_failures_are_caught() {
    let successes = recorded("successes.jsonl");
    let servers: BTreeSet<&str> = successes.iter().map(|r| r.server.as_str()).collect();
    assert!(
        successes.len() >= 300 && servers.len() >= 10,
        "{} from {}",
        successes.len(),
        servers.len()
    );
    let false_alarms: Vec<String> = successes
        .iter()
        .filter(|r| rewritten(r).is_some())
        .map(|r| format!("{} {} ({}): {}", r.server, r.tool, r.situation, r.result))
        .collect();

    let failures = recorded("success-shaped-failures.jsonl");
    let servers: BTreeSet<&str> = failures.iter().map(|r| r.server.as_str()).collect();
    let mut caught = 0;
    let mut right = 0;
    let mut missed = Vec::new();
    for r in &failures {
        let label = r.category.expect("a failure is labelled");
        let got = rewritten(r).map(|result| {
            let category = &result["_meta"]["mcp-errnorm/error"]["errorCategory"];
            serde_json::from_value::<Category>(category.clone()).unwrap()
        });
        caught += usize::from(got.is_some());
        if got.is_some_and(|g| g == label || r.also == Some(g)) {
            right += 1;
        } else {
            missed.push(format!(
                "{} {} ({}): expected {label}, got {got:?}",
                r.server, r.tool, r.situation
            ));
        }
    }
    println!(
        "real successes: {} from {} servers, turned into errors: {}",
        successes.len(),
        successes
            .iter()
            .map(|r| &r.server)
            .collect::<BTreeSet<_>>()
            .len(),
        false_alarms.len()
    );
    println!(
        "failures answered as successes: {} from {} servers, caught {caught} ({:.1}%), with the \
         right category {right} ({:.1}%)",
        failures.len(),
        servers.len(),
        pct(caught, failures.len()),
        pct(right, failures.len())
    );
    for m in &missed {
        println!("  missed: {m}");
    }
    assert!(
        false_alarms.is_empty(),
        "real successes turned into errors:\n{}",
        false_alarms.join("\n")
    );
    assert!(failures.len() >= 60 && servers.len() >= 8);
    assert!(
        pct(right, failures.len()) >= 90.0,
        "{:.1}% < 90%",
        pct(right, failures.len())
    );
}
