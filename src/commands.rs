//! The rule tools: `check`, `classify`, `coverage`, `init` and `rules`; and `report`. They print their results on
//! purpose (stdout is theirs: no proxied session runs), and their diagnostics on stderr.
#![allow(clippy::print_stdout)]

use std::collections::BTreeMap;
use std::io::{BufRead, Read, Write};
use std::path::{Path, PathBuf};

use clap::Args;
use serde::Deserialize;
use serde_json::Value;

use crate::check::{find_shadowed, find_shadowed_meanings, run_examples};
use crate::classify::{self, classify as classify_failure, verdict_of};
use crate::config::{ConfigChoice, Flags, Settings};
use crate::coverage;
use crate::diagnostic::{Diagnostics, Severity};
use crate::exit;
use crate::model;
use crate::render::{AttemptedQuery, OriginalError, StructuredError};
use crate::rewrite::Rewriter;
use crate::rules::Failure;
use crate::taxonomy::{Category, Source};

/// Where the configuration and rules come from; shared by run mode and the rule tools.
#[derive(Debug, Clone, Args)]
pub struct RuleArgs {
    /// Config file (TOML). Default: the file MCP_ERRNORM_CONFIG names, else
    /// $XDG_CONFIG_HOME/mcp-errnorm/config.toml (~/.config/mcp-errnorm/config.toml) if it
    /// exists, else none. `mcp-errnorm init` writes a commented one.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// A rule file layered over the defaults; repeatable, earlier files are tried first.
    #[arg(long = "rules", value_name = "FILE")]
    pub rules: Vec<PathBuf>,
    /// Use no embedded default rules, only the given ones.
    #[arg(long)]
    pub no_default_rules: bool,
}

impl RuleArgs {
    /// The flags, with the config file located: `--config`'s, else `MCP_ERRNORM_CONFIG`'s,
    /// else the default location's if it is there (see [`crate::files::locate_config`]).
    pub fn flags(&self) -> Result<(Flags, ConfigChoice), Diagnostics> {
        let choice = crate::files::locate_config(self.config.as_deref())?;
        let flags = Flags {
            config: choice.path().map(Path::to_owned),
            rules: self.rules.clone(),
            no_default_rules: self.no_default_rules,
            ..Flags::default()
        };
        Ok((flags, choice))
    }
}

/// The options of `classify`.
#[derive(Debug, Args)]
pub struct ClassifyArgs {
    #[command(flatten)]
    pub source: RuleArgs,
    /// The tool that failed.
    #[arg(long, default_value = "tool")]
    pub tool: String,
    /// Where the failure came from: an isError result, or a JSON-RPC error.
    #[arg(long = "source", value_enum, default_value = "result")]
    pub failure_source: FailureSource,
    /// The JSON-RPC error code (with --source rpc).
    #[arg(long, allow_hyphen_values = true)]
    pub code: Option<i64>,
    /// List every rule that matches, in the order they are tried.
    #[arg(long)]
    pub explain: bool,
    /// Read JSON lines from stdin ({"text", "tool", "source", "code"}) and print one result per line.
    #[arg(long, conflicts_with = "text")]
    pub jsonl: bool,
    /// The failure text; `-` reads it from stdin.
    #[arg(required_unless_present = "jsonl")]
    pub text: Option<String>,
}

/// `rules`: the rules the proxy tries.
#[derive(Debug, clap::Subcommand)]
pub enum RulesCommand {
    /// Every rule, embedded and yours, in the order they are tried: id, tier, category, and
    /// the file and line where it is written.
    #[command(after_help = "Examples:\n  \
        mcp-errnorm rules list\n  \
        mcp-errnorm rules list --rules my-rules.toml --json")]
    List {
        #[command(flatten)]
        source: RuleArgs,
        /// One JSON object a line (id, tier, category, code, retryable, file, line, user).
        #[arg(long)]
        json: bool,
    },
    /// A rule as it is written in its file (TOML, its examples included). Exit 1 for an id no
    /// rule has.
    #[command(after_help = "Examples:\n  \
        mcp-errnorm rules show tls-certificate\n  \
        mcp-errnorm rules show --rules my-rules.toml my-rule")]
    Show {
        #[command(flatten)]
        source: RuleArgs,
        /// The rule's id, as `rules list` shows it.
        id: String,
    },
}

/// The options of `report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// One JSON object instead of tables.
    #[arg(long)]
    pub json: bool,
    /// Log files written with --log-file (text or json, mixed); `-` reads stdin.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
}

/// `--source` of `classify`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FailureSource {
    Result,
    Rpc,
}

/// Why a rule tool could not do its work; what it found is its exit code instead.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The config or rule files do not load: every problem, one a line.
    #[error("{0}")]
    Load(Diagnostics),
    #[error("cannot read stdin: {0}")]
    Stdin(#[source] std::io::Error),
    #[error("stdin:{line}: cannot read: {source}")]
    StdinLine {
        line: usize,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: cannot read: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "cannot tell where the config folder is (neither XDG_CONFIG_HOME \
         nor HOME is set to an absolute path): name one with --dir"
    )]
    NoConfigDir,
    #[error("no rule has the id '{0}' (see `mcp-errnorm rules list`)")]
    NoRule(String),
    #[error("rule '{id}' is not written as a [[rule]] table in {file}")]
    NotATable { id: String, file: String },
    #[error("{} already exists; nothing written", path.display())]
    Exists { tool: &'static str, path: PathBuf },
    #[error("cannot write {}: {source}", path.display())]
    Write {
        tool: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// The exit code this error means.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Load(_)
            | Error::Stdin(_)
            | Error::StdinLine { .. }
            | Error::Read { .. }
            | Error::NoConfigDir => exit::USAGE,
            Error::NoRule(_) | Error::NotATable { .. } => exit::FOUND,
            Error::Exists { .. } | Error::Write { .. } => exit::CANNOT_CREATE,
        }
    }
}

fn load(args: &RuleArgs) -> Result<Settings, Error> {
    let (flags, _) = args.flags().map_err(Error::Load)?;
    Settings::load(&flags).map_err(Error::Load)
}

/// `check`: invalid files 64; a user rule that can never fire 64; a failing example 1. Says
/// first which config file it reads, on stderr.
pub fn check(args: &RuleArgs) -> Result<i32, Error> {
    let (flags, choice) = args.flags().map_err(Error::Load)?;
    eprintln!("{choice}");
    let settings = Settings::load(&flags).map_err(Error::Load)?;
    let rules = &settings.rules;
    let mut status = exit::OK;
    // Opened only when the proxy starts: judged here as the start would.
    for problem in crate::files::unusable_log_paths(&settings) {
        print_problem(problem);
        status = exit::USAGE;
    }
    for problem in rules.switching_off_nothing() {
        print_problem(problem);
        status = exit::USAGE;
    }
    for finding in find_shadowed(rules)
        .into_iter()
        .chain(find_shadowed_meanings(rules))
    {
        let severity = if finding.is_error {
            Severity::Error
        } else {
            Severity::Warning
        };
        print_problem(finding.diagnostic.with(severity));
        if finding.is_error {
            status = exit::USAGE;
        }
    }
    let failures = run_examples(rules);
    for failure in &failures {
        print_problem(failure);
    }
    if status == exit::OK && !failures.is_empty() {
        status = exit::FOUND;
    }
    let examples: usize = rules.rules().iter().map(|r| r.examples.len()).sum();
    let yours = rules.rules().iter().filter(|r| r.user).count();
    let summary = format!(
        "{} rules ({yours} from your files), {} of {examples} examples passed{}",
        rules.rules().len(),
        examples - failures.len(),
        if status == exit::OK {
            ""
        } else {
            ": see the problems above"
        }
    );
    // Green when all is well, else red (where colour is on: see `--color`).
    let color = if status == exit::OK {
        anstyle::AnsiColor::Green
    } else {
        anstyle::AnsiColor::Red
    };
    let style = anstyle::Style::new().bold().fg_color(Some(color.into()));
    let _ = writeln!(anstream::stdout(), "{style}{summary}{style:#}");
    Ok(status)
}

/// A problem on stderr, its severity word coloured where colour is on (see `--color`).
fn print_problem(problem: impl std::fmt::Display) {
    crate::tell::say(&problem.to_string());
}

/// `rules list` and `rules show`.
pub fn rules(command: &RulesCommand) -> Result<i32, Error> {
    match command {
        RulesCommand::List { source, json } => rules_list(source, *json),
        RulesCommand::Show { source, id } => rules_show(source, id),
    }
}

fn rules_list(source: &RuleArgs, json: bool) -> Result<i32, Error> {
    let settings = load(source)?;
    let rules = settings.rules.rules();
    if json {
        for rule in rules {
            let line = serde_json::json!({
                "id": rule.id,
                "tier": rule.tier.as_str(),
                "category": rule.category.as_str(),
                "code": rule.code,
                "retryable": rule.retryable,
                "file": rule.file,
                "line": rule.line,
                "user": rule.user,
            });
            println!("{line}");
        }
        return Ok(exit::OK);
    }
    let width = |f: fn(&crate::rules::Rule) -> usize, title: &str| {
        rules.iter().map(f).max().unwrap_or(0).max(title.len())
    };
    let id_w = width(|r| r.id.chars().count(), "id");
    let tier_w = width(|r| r.tier.as_str().len(), "tier");
    let cat_w = width(|r| r.category.as_str().len(), "category");
    println!(
        "{:<id_w$}  {:<tier_w$}  {:<cat_w$}  file",
        "id", "tier", "category"
    );
    for rule in rules {
        println!(
            "{:<id_w$}  {:<tier_w$}  {:<cat_w$}  {}:{}",
            crate::diagnostic::printable(&rule.id),
            rule.tier.as_str(),
            rule.category.as_str(),
            rule.file,
            rule.line
        );
    }
    Ok(exit::OK)
}

fn rules_show(source: &RuleArgs, id: &str) -> Result<i32, Error> {
    let settings = load(source)?;
    let rule = settings
        .rules
        .rule(id)
        .ok_or_else(|| Error::NoRule(id.to_owned()))?;
    let text = if rule.user {
        let path = PathBuf::from(&rule.file);
        let file = crate::diagnostic::SourceFile::read(&path)
            .map_err(|d| Error::Load(Diagnostics(vec![d])))?;
        file.text
    } else {
        crate::rules::default_sources()
            .into_iter()
            .find(|f| f.name == rule.file)
            .map(|f| f.text)
            .unwrap_or_default()
    };
    let written = crate::rules::written_rule(&text, rule.line).ok_or_else(|| Error::NotATable {
        id: id.to_owned(),
        file: rule.file.clone(),
    })?;
    println!("# {}:{}", rule.file, rule.line);
    print!("{written}");
    Ok(exit::OK)
}

/// One failure as the tools read it: `classify --jsonl` input, `coverage` records and the lines
/// `--log-unmatched` writes.
#[derive(Debug, Deserialize)]
struct Record {
    text: String,
    #[serde(default = "default_tool")]
    tool: String,
    #[serde(default)]
    source: Option<Source>,
    #[serde(default, alias = "rpc_code")]
    code: Option<i64>,
}

fn default_tool() -> String {
    "tool".to_owned()
}

impl Record {
    fn failure(&self) -> Failure<'_> {
        Failure {
            text: &self.text,
            tool: &self.tool,
            source: self.source.unwrap_or(Source::Result),
            rpc_code: self.code,
        }
    }
}

/// The canonical error for a failure, as `_meta["mcp-errnorm/error"]` would carry it: secrets
/// masked and the attempted query trimmed as the proxy would.
fn structured(rewriter: &Rewriter, failure: Failure) -> StructuredError {
    let mut error = StructuredError::new(
        classify_failure(&rewriter.rules, failure),
        Some(AttemptedQuery {
            tool: failure.tool.to_owned(),
            arguments: Value::Null,
        }),
        None,
        OriginalError {
            source: failure.source,
            text: failure.text.to_owned(),
            rpc_code: failure.rpc_code,
            rpc_data: None,
        },
    );
    rewriter.redact(&mut error);
    error
}

/// `classify`: the canonical error on stdout; the deciding rule (or every candidate) on stderr.
// Long: the explanation as printed: the deciding rule or the model, then every candidate.
pub fn classify(args: &ClassifyArgs) -> Result<i32, Error> {
    let settings = load(&args.source)?;
    if args.jsonl {
        return classify_lines(&settings.rewriter());
    }
    let text = match args.text.as_deref() {
        Some("-") => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(Error::Stdin)?;
            text.trim_end_matches(['\r', '\n']).to_owned()
        }
        Some(text) => text.to_owned(),
        None => unreachable!("clap requires TEXT without --jsonl"),
    };
    let source = match args.failure_source {
        FailureSource::Result => Source::Result,
        FailureSource::Rpc => Source::Rpc,
    };
    let failure = Failure {
        text: &text,
        tool: &args.tool,
        source,
        rpc_code: args.code,
    };
    let rules = &settings.rules;
    let mut candidates: Vec<_> = rules.matches(failure).collect();
    // What `classify` does when no rule matches the text as written: its identifiers as words.
    let spelled = classify::spelled_out(failure.text);
    if let (true, Some(words)) = (candidates.is_empty(), spelled.as_deref()) {
        candidates = rules
            .matches(Failure {
                text: words,
                ..failure
            })
            .collect();
        if !candidates.is_empty() {
            eprintln!("no rule matched the text as written; read with its identifiers as words: {words:?}");
        }
    }
    match candidates.first() {
        Some(m) => {
            let r = m.rule;
            eprintln!(
                "decided by rule '{}' ({}:{}:{})",
                r.id, r.file, r.line, r.col
            );
            if let Some(pattern) = r.pattern() {
                eprintln!("  match: {pattern}");
            }
        }
        None if rules.fallback_model() => {
            let guess = model::EMBEDDED.guess(failure.text);
            if guess.known_features == 0 {
                eprintln!(
                    "no rule matched, and the fallback model knows none of its words: unknown, \
                     not retryable"
                );
            } else {
                let retried = if classify::MODEL_RETRY_CONFIDENCE.is_finite() {
                    format!("retried from {:.2}", classify::MODEL_RETRY_CONFIDENCE)
                } else {
                    "never retried".to_owned()
                };
                eprintln!(
                    "no rule matched: the fallback model guesses {} with confidence {:.2} \
                     (used from {:.2}, {retried})",
                    guess.category,
                    guess.confidence,
                    classify::MODEL_MIN_CONFIDENCE,
                );
                if args.explain {
                    eprintln!(
                        "  the words that decided it (feature: weight for {}):",
                        guess.category
                    );
                    for (feature, weight) in &model::EMBEDDED.evidence(failure.text, guess.category)
                    {
                        eprintln!("    {feature}: {weight:+.2}");
                    }
                }
            }
        }
        None => eprintln!("no rule matched, and the fallback model is off: unknown, not retryable"),
    }
    if args.explain {
        eprintln!("every rule that matches, in the order they are tried:");
        for (i, m) in candidates.iter().enumerate() {
            let v = verdict_of(m, failure);
            let r = m.rule;
            eprintln!(
                "  {}. {} ({}:{}:{}): {} {} retryable={}",
                i + 1,
                r.id,
                r.file,
                r.line,
                r.col,
                v.category,
                v.code,
                v.retryable
            );
        }
    }
    println!("{}", structured(&settings.rewriter(), failure).canonical());
    Ok(exit::OK)
}

fn classify_lines(rewriter: &Rewriter) -> Result<i32, Error> {
    let mut status = exit::OK;
    for (n, line) in std::io::stdin().lock().split(b'\n').enumerate() {
        let line = line.map_err(|source| Error::StdinLine {
            line: n + 1,
            source,
        })?;
        if line.trim_ascii().is_empty() {
            continue;
        }
        // A line that is no record (not JSON, not UTF-8) is said in its place.
        match serde_json::from_slice::<Record>(&line) {
            Ok(record) => println!("{}", structured(rewriter, record.failure()).canonical()),
            Err(e) => {
                // One output line per input line, so results stay aligned with their inputs.
                let message = format!("stdin:{}: not a failure record: {e}", n + 1);
                print_problem(format_args!("error: {message}"));
                println!("{}", serde_json::json!({ "error": message }));
                status = exit::FOUND;
            }
        }
    }
    Ok(status)
}

/// `report`: what the proxy did, from its log files (`-`: stdin). Exit 0, or 64 for a file
/// that cannot be read.
pub fn report(args: &ReportArgs) -> Result<i32, Error> {
    let mut reader = crate::report::Reader::default();
    for path in &args.files {
        let read = if path.as_os_str() == "-" {
            read_lines(std::io::stdin().lock(), &mut reader)
        } else {
            std::fs::File::open(path)
                .and_then(|file| read_lines(std::io::BufReader::new(file), &mut reader))
        };
        read.map_err(|source| Error::Read {
            path: path.clone(),
            source,
        })?;
    }
    let report = reader.finish();
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).expect("a report is JSON")
        );
    } else {
        print!("{}", report.render());
    }
    Ok(exit::OK)
}

/// Every line of `from` to `reader`; bytes that are not UTF-8 are replaced, not an error. Of a
/// line longer than [`crate::report::MAX_LINE`], only that much is held (and read as no line
/// of the proxy's).
fn read_lines(mut from: impl BufRead, reader: &mut crate::report::Reader) -> std::io::Result<()> {
    let limit = crate::report::MAX_LINE as u64 + 1;
    let mut line = Vec::new();
    loop {
        line.clear();
        if (&mut from).take(limit).read_until(b'\n', &mut line)? == 0 {
            return Ok(());
        }
        if !line.ends_with(b"\n") && line.len() as u64 == limit {
            // The rest of a line too long to be the proxy's, skipped.
            let mut rest = Vec::new();
            while (&mut from).take(limit).read_until(b'\n', &mut rest)? > 0
                && !rest.ends_with(b"\n")
            {
                rest.clear();
            }
        }
        let text = String::from_utf8_lossy(&line);
        reader.line(text.trim_end_matches(['\n', '\r']));
    }
}

/// How many groups `coverage` lists, and drafts rules for.
const TOP_GROUPS: usize = 20;

/// `coverage`: per rule, per category and unclassified counts for a file of failures; the
/// failures no rule decided, grouped by shape; with `suggest`, draft rules for those groups.
// Long: counting, then the report's sections in the order they are printed.
pub fn coverage(args: &RuleArgs, file: &Path, suggest: Option<&Path>) -> Result<i32, Error> {
    let settings = load(args)?;
    let bytes = std::fs::read(file).map_err(|source| Error::Read {
        path: file.to_owned(),
        source,
    })?;
    let mut by_rule: BTreeMap<String, usize> = BTreeMap::new();
    let mut by_category: BTreeMap<&'static str, usize> = BTreeMap::new();
    let (mut total, mut unclassified, mut unreadable) = (0, 0, 0);
    let mut undecided: Vec<Record> = Vec::new();
    for (n, line) in bytes.split(|&b| b == b'\n').enumerate() {
        if line.trim_ascii().is_empty() {
            continue;
        }
        // A line that is not JSON (or not UTF-8) is counted as unreadable, not the whole file.
        let record: Record = match serde_json::from_slice(line) {
            Ok(record) => record,
            Err(e) => {
                print_problem(format_args!(
                    "warning: {}:{}: not a failure record: {e}",
                    file.display(),
                    n + 1
                ));
                unreadable += 1;
                continue;
            }
        };
        total += 1;
        let verdict = classify_failure(&settings.rules, record.failure());
        if verdict.category == Category::Unknown {
            unclassified += 1;
        }
        *by_category.entry(verdict.category.as_str()).or_default() += 1;
        if !classify::decided_by_a_rule(verdict.rule_id.as_deref()) {
            undecided.push(record);
        }
        *by_rule
            .entry(verdict.rule_id.unwrap_or_else(|| "(unclassified)".into()))
            .or_default() += 1;
    }
    let width = by_rule.keys().map(String::len).max().unwrap_or(4).max(8);
    println!("{:<width$}  failures", "rule");
    let mut rows: Vec<_> = by_rule.into_iter().collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    for (rule, count) in rows {
        println!("{rule:<width$}  {count}");
    }
    println!();
    println!("{:<width$}  failures", "category");
    for (category, count) in by_category {
        println!("{category:<width$}  {count}");
    }
    let percent = if total == 0 {
        0.0
    } else {
        100.0 * unclassified as f64 / total as f64
    };
    println!();
    println!("{total} failures, {unclassified} unclassified ({percent:.1}%), {unreadable} unreadable lines");
    let groups = coverage::group(undecided.iter().map(|r| (r.tool.as_str(), r.text.as_str())));
    if !groups.is_empty() {
        println!();
        println!(
            "failures no rule decided, by shape ({} groups; the model's guess beside each):",
            groups.len()
        );
        println!("{:>5}  {:<22}  {:<24}  shape", "count", "guess", "tools");
        for group in groups.iter().take(TOP_GROUPS) {
            let guess = model::EMBEDDED.guess(&group.example);
            let tools: Vec<&str> = group.tools.iter().map(String::as_str).collect();
            println!(
                "{:>5}  {:<22}  {:<24}  {}",
                group.count,
                format!("{} {:.2}", guess.category, guess.confidence),
                head(&tools.join(","), 24),
                group.shape
            );
            println!(
                "{:>5}  {:<22}  {:<24}  e.g. {}",
                "",
                "",
                "",
                head(&group.example, 200)
            );
        }
    }
    if let Some(path) = suggest {
        let top = &groups[..groups.len().min(TOP_GROUPS)];
        let drafts = coverage::draft_rules(top, &model::EMBEDDED);
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .and_then(|mut f| std::io::Write::write_all(&mut f, drafts.as_bytes()));
        match written {
            Ok(()) => eprintln!(
                "draft rules for {} groups written to {}: confirm each guess, then \
                 `mcp-errnorm check --rules {}`",
                top.len(),
                path.display(),
                path.display()
            ),
            Err(source) => {
                return Err(Error::Write {
                    tool: "coverage",
                    path: path.to_owned(),
                    source,
                })
            }
        }
    }
    Ok(if unclassified > 0 || unreadable > 0 {
        exit::FOUND
    } else {
        exit::OK
    })
}

/// Whether two paths name the same folder (both exist: `init` has just created them).
fn same_dir(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// The first `max` characters of `text` on one line.
fn head(text: &str, max: usize) -> String {
    let one_line = text.replace('\n', " ");
    match one_line.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &one_line[..cut]),
        None => one_line,
    }
}

const STARTER_CONFIG: &str = include_str!("../docs/examples/starter-config.toml");
const STARTER_RULES: &str = include_str!("../docs/examples/starter-rules.toml");

/// `init`: writes the starter files into `dir`, or into the default config folder (created
/// if need be) when none is given; refuses if either file exists, writing neither.
pub fn init(dir: Option<&Path>) -> Result<i32, Error> {
    let env = crate::files::config_env();
    let default_dir = env.default_dir();
    let dir = match dir.or(default_dir.as_deref()) {
        Some(dir) => dir,
        None => return Err(Error::NoConfigDir),
    };
    // The folder, its parents too, as `mkdir -p`; the files in it are never overwritten.
    if let Err(source) = std::fs::create_dir_all(dir) {
        return Err(Error::Write {
            tool: "init",
            path: dir.to_owned(),
            source,
        });
    }
    let files = [
        ("config.toml", STARTER_CONFIG),
        ("rules.toml", STARTER_RULES),
    ];
    // Anything there counts, a link to nowhere too (`exists` follows it and says no).
    let taken = |name: &&str| std::fs::symlink_metadata(dir.join(name)).is_ok();
    if let Some((name, _)) = files.iter().find(|(name, _)| taken(name)) {
        return Err(Error::Exists {
            tool: "init",
            path: dir.join(name),
        });
    }
    for (name, text) in files {
        let path = dir.join(name);
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .and_then(|mut f| std::io::Write::write_all(&mut f, text.as_bytes()));
        if let Err(source) = written {
            return Err(Error::Write {
                tool: "init",
                path,
                source,
            });
        }
        println!("wrote {}", path.display());
    }
    let config = dir.join("config.toml");
    let found_by_itself = default_dir.as_deref().is_some_and(|d| same_dir(d, dir));
    if found_by_itself {
        println!("next: mcp-errnorm check (the proxy and every subcommand read this config)");
    } else {
        println!("next: mcp-errnorm check --config {}", config.display());
    }
    if let Some(named) = env.config.filter(|v| !v.is_empty()) {
        print_problem(format_args!(
            "note: {} is set ({}): that file is read, not {}",
            crate::config::CONFIG_ENV,
            Path::new(&named).display(),
            config.display()
        ));
    }
    Ok(exit::OK)
}
