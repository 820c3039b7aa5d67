//! `report`: what the proxy did, read back from its log. Pure: log lines in (text or JSON, as
//! `--log-format` writes them, mixed, from any number of servers), a [`Report`] out, and the
//! report as aligned tables. The shell reads the files.
//!
//! A line is read by its fields, never by its message: the lines that count name themselves
//! with an `event` field ([`EVENT_REWRITTEN`] ...). A line that is not the proxy's (a client's
//! own log around it, a blank line, garbage) is skipped and counted; a line the proxy copied
//! from a server's stderr is counted apart and read no further, whatever it says.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::coverage;

/// The `event` field of the log lines `report` reads: a failed call rewritten, a retry
/// scheduled, a retry that succeeded, a call given up for lack of an answer, the statistics.
pub const EVENT_REWRITTEN: &str = "rewritten";
pub const EVENT_RETRYING: &str = "retrying";
pub const EVENT_RECOVERED: &str = "recovered";
pub const EVENT_TIMED_OUT: &str = "timed_out";
pub const EVENT_STATISTICS: &str = "statistics";

/// What the log says when no rule decided a failure.
pub const NO_RULE: &str = "(none)";

/// The `stream` field of a line copied from the server's stderr.
const SERVER_STDERR_STREAM: &str = "server stderr";

/// How many groups of unclassified texts the report lists.
pub const TOP_UNCLASSIFIED: usize = 10;

/// The longest line read: longer ones are counted and skipped (no line the report needs is
/// near this long). The shell reads no more of a line than this.
pub const MAX_LINE: usize = 1 << 20;

/// One log line, read.
#[derive(Debug, Clone, PartialEq)]
pub enum Line {
    /// A line of the proxy's log: its fields (none when they could not be read back).
    Proxy(Map<String, Value>),
    /// A line the proxy copied from the server's stderr.
    ServerOutput,
    /// Not the proxy's (or blank).
    Foreign,
}

/// Reads one line of a log, in either format; `line` without its line end.
pub fn parse_line(line: &str) -> Line {
    if line.len() > MAX_LINE || line.trim().is_empty() {
        return Line::Foreign;
    }
    let line = strip_ansi(line);
    let fields = match json_fields(&line) {
        Some(fields) => fields,
        None => match text_fields(&line) {
            Some(fields) => fields,
            None => return Line::Foreign,
        },
    };
    if fields.get("stream").and_then(Value::as_str) == Some(SERVER_STDERR_STREAM) {
        return Line::ServerOutput;
    }
    Line::Proxy(fields)
}

/// A line without its terminal colours (a log of a stderr that was a terminal).
fn strip_ansi(line: &str) -> std::borrow::Cow<'_, str> {
    static ANSI: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\x1b\[[0-9;]*[A-Za-z]").expect("valid"));
    ANSI.replace_all(line, "")
}

/// The fields of a `--log-format json` line: an object with `timestamp`, `level` and
/// `fields`, the whole line or after a prefix (a client's log that copied it).
fn json_fields(line: &str) -> Option<Map<String, Value>> {
    let at = if line.trim_start().starts_with('{') {
        line.find('{')?
    } else {
        line.find("{\"timestamp\"")?
    };
    let mut values = serde_json::Deserializer::from_str(&line[at..]).into_iter::<Value>();
    let Ok(Value::Object(mut object)) = values.next()? else {
        return None;
    };
    if !object.get("level").is_some_and(Value::is_string) {
        return None;
    }
    match object.remove("fields") {
        Some(Value::Object(fields)) => Some(fields),
        _ => None,
    }
}

/// The fields of a text line: `TIMESTAMP LEVEL message key=value ...`, the whole line or after
/// a prefix. A line with the proxy's timestamp and level whose fields cannot be read back
/// counts as the proxy's, with no fields.
fn text_fields(line: &str) -> Option<Map<String, Value>> {
    static HEAD: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)\s+(?:TRACE|DEBUG|INFO|WARN|ERROR)\s",
        )
        .expect("valid")
    });
    // What Claude Desktop writes after each line it copies into its log.
    static CLIENT_SUFFIX: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\s*\{ metadata: [^{}]*\}\s*$").expect("valid"));
    let head = HEAD.find(line)?;
    let rest = CLIENT_SUFFIX.replace(&line[head.end()..], "");
    let rest = rest.as_ref();
    // The fields follow the message: the first place from which the rest reads as fields.
    let starts = std::iter::once(0).chain(
        rest.char_indices()
            .filter(|&(_, c)| c == ' ')
            .map(|(i, _)| i + 1),
    );
    for start in starts.take(64) {
        if !starts_with_key(&rest[start..]) {
            continue;
        }
        if let Some(fields) = read_fields(&rest[start..]) {
            return Some(fields);
        }
    }
    Some(Map::new())
}

fn is_key_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '.'
}

fn starts_with_key(s: &str) -> bool {
    let key_len = s.find(|c: char| !is_key_char(c)).unwrap_or(s.len());
    key_len > 0 && s[key_len..].starts_with('=')
}

/// `key=value key=value ...` to its end, or None. A value is a quoted string (escaped as Rust
/// writes it: `\"`, `\\`, `\n`, `\u{1b}`), a JSON object or array (the counts by rule and by
/// tool), or a word.
fn read_fields(mut s: &str) -> Option<Map<String, Value>> {
    let mut fields = Map::new();
    loop {
        s = s.trim_start_matches(' ');
        if s.is_empty() {
            return (!fields.is_empty()).then_some(fields);
        }
        let key_len = s.find(|c: char| !is_key_char(c)).unwrap_or(s.len());
        if key_len == 0 || !s[key_len..].starts_with('=') {
            return None;
        }
        let key = &s[..key_len];
        s = &s[key_len + 1..];
        let (value, used) = if s.starts_with('"') {
            quoted(s)?
        } else if s.starts_with('{') || s.starts_with('[') {
            let mut values = serde_json::Deserializer::from_str(s).into_iter::<Value>();
            let value = values.next()?.ok()?;
            (value, values.byte_offset())
        } else {
            let end = s.find(' ').unwrap_or(s.len());
            (Value::String(s[..end].to_owned()), end)
        };
        if !(s[used..].is_empty() || s[used..].starts_with(' ')) {
            return None;
        }
        fields.insert(key.to_owned(), value);
        s = &s[used..];
    }
}

/// The quoted string at the start of `s`, unescaped, and the bytes it took.
fn quoted(s: &str) -> Option<(Value, usize)> {
    let mut out = String::new();
    let mut chars = s.char_indices().skip(1);
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Some((Value::String(out), i + 1)),
            '\\' => {
                let (_, e) = chars.next()?;
                match e {
                    'n' => out.push('\n'),
                    'r' => out.push('\r'),
                    't' => out.push('\t'),
                    '0' => out.push('\0'),
                    'u' => {
                        // `\u{1b}` (Rust) or `\u001b` (JSON, in a request id).
                        let rest = &s[i + 2..];
                        let (hex, skip) = match rest.strip_prefix('{') {
                            Some(r) => {
                                let end = r.find('}')?;
                                (&r[..end], end + 2)
                            }
                            None => (rest.get(..4)?, 4),
                        };
                        let code = u32::from_str_radix(hex, 16).ok()?;
                        out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
                        for _ in 0..skip {
                            chars.next();
                        }
                    }
                    other => out.push(other),
                }
            }
            c => out.push(c),
        }
    }
    None
}

/// A count as the log writes it: a number, or its text.
fn number(fields: &Map<String, Value>, key: &str) -> Option<u64> {
    match fields.get(key)? {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

fn text<'a>(fields: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    fields.get(key).and_then(Value::as_str)
}

fn flag(fields: &Map<String, Value>, key: &str) -> Option<bool> {
    match fields.get(key)? {
        Value::Bool(b) => Some(*b),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

/// Retries and what came of them.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Retries {
    /// Calls retried at least once.
    pub retried_calls: u64,
    /// Attempts sent again, all calls together.
    pub retries: u64,
    /// Calls that succeeded on a retry.
    pub recovered: u64,
    /// Calls retried that failed all the same (their last failure reached the agent).
    pub gave_up: u64,
}

/// Failures of one tool of one server.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ToolRow {
    pub server: String,
    pub tool: String,
    pub failures: u64,
    pub unclassified: u64,
    pub timed_out: u64,
    pub retried_calls: u64,
    pub recovered: u64,
}

/// Failures one rule decided (`(none)`: no rule did).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RuleRow {
    pub rule: String,
    pub failures: u64,
}

/// Unclassified failures of one shape.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Unclassified {
    pub count: u64,
    /// The text with its variable parts masked (`<n>`, `<path>`, `'…'` ...).
    pub shape: String,
    pub tools: Vec<String>,
    pub example: String,
}

/// Everything the report says, as `--json` prints it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Report {
    pub lines: u64,
    /// Lines of the proxy's log.
    pub proxy_lines: u64,
    /// Lines copied from the servers' stderr.
    pub server_lines: u64,
    /// Lines that are not the proxy's (blank lines left out).
    pub skipped_lines: u64,
    /// Runs of the proxy that ended (the statistics at exit).
    pub runs: u64,
    /// Tool calls of the runs that ended.
    pub calls: u64,
    /// Failed calls the agent was told about: rewritten, or given up for lack of an answer.
    pub failures: u64,
    pub unclassified: u64,
    pub timed_out: u64,
    pub by_category: BTreeMap<String, u64>,
    /// Most failures first.
    pub by_tool: Vec<ToolRow>,
    /// Most failures first.
    pub by_rule: Vec<RuleRow>,
    pub retries: Retries,
    /// Most frequent first, at most [`TOP_UNCLASSIFIED`].
    pub unclassified_texts: Vec<Unclassified>,
    /// How many shapes there are in all.
    pub unclassified_shapes: usize,
}

/// Builds a [`Report`] line by line.
#[derive(Debug, Default)]
pub struct Reader {
    report: Report,
    tools: BTreeMap<(String, String), ToolRow>,
    rules: BTreeMap<String, u64>,
    /// (tool, text) of each failure no rule decided.
    undecided: Vec<(String, String)>,
}

impl Reader {
    /// Reads one line (without its line end).
    pub fn line(&mut self, line: &str) {
        if line.trim().is_empty() {
            return;
        }
        self.report.lines += 1;
        match parse_line(line) {
            Line::Foreign => self.report.skipped_lines += 1,
            Line::ServerOutput => self.report.server_lines += 1,
            Line::Proxy(fields) => {
                self.report.proxy_lines += 1;
                self.event(&fields);
            }
        }
    }

    fn tool_row(&mut self, fields: &Map<String, Value>) -> &mut ToolRow {
        let server = text(fields, "server").unwrap_or("?").to_owned();
        let tool = text(fields, "tool").unwrap_or("?").to_owned();
        self.tools
            .entry((server.clone(), tool.clone()))
            .or_insert_with(|| ToolRow {
                server,
                tool,
                ..ToolRow::default()
            })
    }

    fn event(&mut self, fields: &Map<String, Value>) {
        let attempts = number(fields, "attempts").unwrap_or(1);
        match text(fields, "event") {
            Some(event @ (EVENT_REWRITTEN | EVENT_TIMED_OUT)) => {
                let timed_out = event == EVENT_TIMED_OUT;
                let rule = text(fields, "rule").unwrap_or(NO_RULE).to_owned();
                let category = text(fields, "category").unwrap_or("unknown").to_owned();
                let report = &mut self.report;
                report.failures += 1;
                *report.by_category.entry(category).or_default() += 1;
                if attempts > 1 {
                    report.retries.gave_up += 1;
                }
                let unclassified = rule == NO_RULE;
                if unclassified {
                    report.unclassified += 1;
                }
                if timed_out {
                    report.timed_out += 1;
                }
                *self.rules.entry(rule).or_default() += 1;
                if unclassified && !timed_out {
                    let tool = text(fields, "tool").unwrap_or("?").to_owned();
                    let said = text(fields, "text").unwrap_or("").to_owned();
                    self.undecided.push((tool, said));
                }
                let row = self.tool_row(fields);
                row.failures += 1;
                row.unclassified += u64::from(unclassified);
                row.timed_out += u64::from(timed_out);
            }
            Some(EVENT_RETRYING) => {
                self.report.retries.retries += 1;
                // The first retry of a call: one more call retried.
                if number(fields, "attempt") == Some(1) {
                    self.report.retries.retried_calls += 1;
                    self.tool_row(fields).retried_calls += 1;
                }
            }
            Some(EVENT_RECOVERED) => {
                self.report.retries.recovered += 1;
                self.tool_row(fields).recovered += 1;
            }
            // A count asked for by signal is the run's so far: only the last one counts.
            Some(EVENT_STATISTICS) if flag(fields, "at_exit") != Some(false) => {
                self.report.runs += 1;
                self.report.calls += number(fields, "calls").unwrap_or(0);
            }
            _ => {}
        }
    }

    /// The report of every line read.
    pub fn finish(self) -> Report {
        let mut report = self.report;
        let mut tools: Vec<ToolRow> = self.tools.into_values().collect();
        tools.sort_by(|a, b| {
            b.failures
                .cmp(&a.failures)
                .then_with(|| (&a.server, &a.tool).cmp(&(&b.server, &b.tool)))
        });
        report.by_tool = tools;
        let mut rules: Vec<RuleRow> = self
            .rules
            .into_iter()
            .map(|(rule, failures)| RuleRow { rule, failures })
            .collect();
        rules.sort_by(|a, b| {
            b.failures
                .cmp(&a.failures)
                .then_with(|| a.rule.cmp(&b.rule))
        });
        report.by_rule = rules;
        let groups = coverage::group(
            self.undecided
                .iter()
                .map(|(tool, said)| (tool.as_str(), said.as_str())),
        );
        report.unclassified_shapes = groups.len();
        report.unclassified_texts = groups
            .into_iter()
            .take(TOP_UNCLASSIFIED)
            .map(|g| Unclassified {
                count: g.count as u64,
                shape: g.shape,
                tools: g.tools.into_iter().collect(),
                example: g.example,
            })
            .collect();
        report
    }
}

/// The report of `lines`.
pub fn read<'a>(lines: impl IntoIterator<Item = &'a str>) -> Report {
    let mut reader = Reader::default();
    for line in lines {
        reader.line(line);
    }
    reader.finish()
}

/// Rows as a table: columns as wide as their widest cell, numbers on the right.
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let numeric: Vec<bool> = (0..header.len())
        .map(|c| {
            !rows.is_empty()
                && rows
                    .iter()
                    .all(|r| r[c].chars().all(|ch| ch.is_ascii_digit() || ch == '.'))
        })
        .collect();
    let widths: Vec<usize> = (0..header.len())
        .map(|c| {
            rows.iter()
                .map(|r| r[c].chars().count())
                .chain(std::iter::once(header[c].chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    let header: Vec<String> = header.iter().map(|h| (*h).to_owned()).collect();
    for row in std::iter::once(&header).chain(rows) {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            let pad = widths[c] - cell.chars().count();
            if c > 0 {
                line.push_str("  ");
            }
            if numeric[c] {
                line.push_str(&" ".repeat(pad));
                line.push_str(cell);
            } else {
                line.push_str(cell);
                if c + 1 < row.len() {
                    line.push_str(&" ".repeat(pad));
                }
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// At most `max` characters of `text`, on one line.
fn head(text: &str, max: usize) -> String {
    let one_line: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if one_line.chars().count() <= max {
        return one_line;
    }
    let mut cut: String = one_line.chars().take(max - 1).collect();
    cut.push('…');
    cut
}

const CATEGORIES: [&str; 5] = [
    "transient",
    "validation",
    "business",
    "permission",
    "unknown",
];

impl Report {
    /// The report as the terminal shows it.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let percent = |n: u64| {
            if self.failures == 0 {
                "0".to_owned()
            } else {
                format!("{:.0}", 100.0 * n as f64 / self.failures as f64)
            }
        };
        let runs = match self.runs {
            1 => "1 finished run".to_owned(),
            n => format!("{n} finished runs"),
        };
        out.push_str(&format!(
            "{} failed tool calls, {} unclassified, {} with no answer in time; {} calls in {runs}\n",
            self.failures, self.unclassified, self.timed_out, self.calls
        ));
        out.push_str(&format!(
            "read {} lines: {} from the proxy, {} from the servers' stderr, {} skipped (not the \
             proxy's)\n",
            self.lines, self.proxy_lines, self.server_lines, self.skipped_lines
        ));
        if self.failures == 0 && self.retries.retries == 0 {
            if self.proxy_lines == 0 {
                out.push_str(
                    "\nno line of the proxy's log was found: is this a file written with \
                     --log-file?\n",
                );
            }
            return out;
        }

        let mut categories: Vec<(String, u64)> = CATEGORIES
            .iter()
            .map(|c| {
                (
                    (*c).to_owned(),
                    self.by_category.get(*c).copied().unwrap_or(0),
                )
            })
            .collect();
        for (c, n) in &self.by_category {
            if !CATEGORIES.contains(&c.as_str()) {
                categories.push((c.clone(), *n));
            }
        }
        let rows: Vec<Vec<String>> = categories
            .iter()
            .map(|(c, n)| vec![c.clone(), n.to_string(), percent(*n)])
            .collect();
        out.push_str("\nFailures by category\n");
        out.push_str(&table(&["CATEGORY", "FAILURES", "%"], &rows));

        let rows: Vec<Vec<String>> = self
            .by_tool
            .iter()
            .map(|r| {
                vec![
                    r.server.clone(),
                    r.tool.clone(),
                    r.failures.to_string(),
                    r.unclassified.to_string(),
                    r.timed_out.to_string(),
                    r.retried_calls.to_string(),
                    r.recovered.to_string(),
                ]
            })
            .collect();
        out.push_str("\nFailures by server and tool\n");
        out.push_str(&table(
            &[
                "SERVER",
                "TOOL",
                "FAILURES",
                "UNCLASSIFIED",
                "NO ANSWER",
                "RETRIED",
                "RECOVERED",
            ],
            &rows,
        ));

        if !self.by_rule.is_empty() {
            let rows: Vec<Vec<String>> = self
                .by_rule
                .iter()
                .map(|row| {
                    let rule = if row.rule == NO_RULE {
                        "(no rule: unclassified)".to_owned()
                    } else {
                        row.rule.clone()
                    };
                    vec![rule, row.failures.to_string(), percent(row.failures)]
                })
                .collect();
            out.push_str("\nFailures by rule\n");
            out.push_str(&table(&["RULE", "FAILURES", "%"], &rows));
        }

        let r = &self.retries;
        out.push_str("\nRetries\n");
        out.push_str(&table(
            &["", "CALLS"],
            &[
                vec!["retried".into(), r.retried_calls.to_string()],
                vec!["recovered after a retry".into(), r.recovered.to_string()],
                vec!["failed after retrying".into(), r.gave_up.to_string()],
                vec!["attempts sent again".into(), r.retries.to_string()],
            ],
        ));

        if !self.unclassified_texts.is_empty() {
            let rows: Vec<Vec<String>> = self
                .unclassified_texts
                .iter()
                .map(|u| {
                    vec![
                        u.count.to_string(),
                        head(&u.tools.join(","), 24),
                        head(&u.shape, 100),
                    ]
                })
                .collect();
            out.push_str(&format!(
                "\nMost frequent unclassified texts ({} of {} shapes; write rules for them, see \
                 `mcp-errnorm coverage`)\n",
                self.unclassified_texts.len(),
                self.unclassified_shapes
            ));
            out.push_str(&table(
                &["COUNT", "TOOLS", "TEXT (variable parts masked)"],
                &rows,
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const TEXT_REWRITE: &str = r#"2026-12-02T16:08:32.698787Z  INFO rewrote a failed tool call event="rewritten" server="fs" tool="read" request_id="req 7" rule="enoent" category=validation code=NOT_FOUND retryable=false attempts=1 text="ENOENT: open \"/srv/x\"""#;

    fn fields(line: &str) -> Map<String, Value> {
        match parse_line(line) {
            Line::Proxy(fields) => fields,
            other => panic!("{other:?}: {line}"),
        }
    }

    #[test]
    fn a_text_line_reads_back_field_by_field() {
        let f = fields(TEXT_REWRITE);
        assert_eq!(f["event"], "rewritten");
        assert_eq!(f["server"], "fs");
        assert_eq!(f["request_id"], "req 7");
        assert_eq!(f["category"], "validation");
        assert_eq!(f["attempts"], "1");
        assert_eq!(f["text"], "ENOENT: open \"/srv/x\"");
    }

    #[test]
    fn escapes_colours_json_counts_and_a_prefix_are_read() {
        let line = "[fs] [info] \x1b[2m2026-12-02T16:08:33.898821Z\x1b[0m \x1b[32m INFO\x1b[0m \
                    statistics event=\"statistics\" at_exit=true calls=5 \
                    by_tool={\"my tool\":3,\"x\":2} text=\"a\\nb\\u{1b}c\\\\\"";
        let f = fields(line);
        assert_eq!(f["calls"], "5");
        assert_eq!(f["by_tool"], json!({"my tool": 3, "x": 2}));
        assert_eq!(f["text"], "a\nb\u{1b}c\\");
    }

    #[test]
    fn a_line_claude_desktop_copied_into_its_log_is_read() {
        let line = format!(
            "2026-02-02T15:40:55.236Z [files] [info] {TEXT_REWRITE} {{ metadata: undefined }}"
        );
        assert_eq!(fields(&line)["rule"], "enoent");
    }

    #[test]
    fn json_lines_read_their_fields_even_after_a_prefix() {
        let line = r#"{"timestamp":"t","level":"INFO","fields":{"message":"m","event":"recovered","attempts":2}}"#;
        assert_eq!(fields(line)["attempts"], 2);
        assert_eq!(
            fields(&format!("2026 [x] {line} trailing"))["event"],
            "recovered"
        );
    }

    #[test]
    fn other_lines_are_foreign_and_server_output_is_apart() {
        for line in [
            "hello",
            "{\"not\":\"a log line\"}",
            "[1,2,3]",
            "2026-12-02 INFO no",
            "{\"timestamp\":",
        ] {
            assert_eq!(parse_line(line), Line::Foreign, "{line}");
        }
        // A server that prints what looks like the proxy's line is still the server's.
        let fake = r#"2026-12-02T16:08:32Z  INFO rewrote event="rewritten" server="x" stream="server stderr""#;
        assert_eq!(parse_line(fake), Line::ServerOutput);
        let fake = r#"{"timestamp":"t","level":"INFO","fields":{"message":"event=\"rewritten\"","stream":"server stderr"}}"#;
        assert_eq!(parse_line(fake), Line::ServerOutput);
        // The proxy's line whose fields do not read back is the proxy's, with none.
        assert_eq!(
            parse_line("2026-12-02T16:08:32Z  WARN something odd x=\"unterminated"),
            Line::Proxy(Map::new())
        );
    }

    fn rewrite(
        server: &str,
        tool: &str,
        rule: &str,
        category: &str,
        attempts: u64,
        text: &str,
    ) -> String {
        json!({"timestamp": "t", "level": "INFO", "fields": {
            "message": "rewrote a failed tool call", "event": "rewritten", "server": server,
            "tool": tool, "rule": rule, "category": category, "attempts": attempts, "text": text,
        }})
        .to_string()
    }

    #[test]
    fn a_report_counts_by_category_tool_rule_retries_and_texts() {
        let lines = [
            rewrite("fs", "read", "enoent", "validation", 1, "ENOENT"),
            rewrite("fs", "read", NO_RULE, "unknown", 1, "the frob broke on item 42"),
            rewrite("db", "query", NO_RULE, "unknown", 1, "the frob broke on item 7"),
            rewrite("db", "query", "fetch-failed", "transient", 3, "fetch failed"),
            r#"2026-12-02T16:08:32Z  INFO transient failure: retrying event="retrying" server="db" tool="query" attempt=1"#.into(),
            r#"2026-12-02T16:08:32Z  INFO transient failure: retrying event="retrying" server="db" tool="query" attempt=2"#.into(),
            r#"2026-12-02T16:08:32Z  INFO transient failure: retrying event="retrying" server="db" tool="query" attempt=1"#.into(),
            r#"2026-12-02T16:08:32Z  INFO a retry succeeded event="recovered" server="db" tool="query" attempts=2"#.into(),
            r#"2026-12-02T16:08:32Z  WARN no answer in time: cancelled event="timed_out" server="db" tool="slow" rule="(none)" category=transient attempts=1"#.into(),
            r#"2026-12-02T16:08:33Z  INFO statistics event="statistics" at_exit=false calls=3"#.into(),
            r#"2026-12-02T16:08:34Z  INFO statistics event="statistics" at_exit=true calls=9"#.into(),
            "garbage".into(),
            String::new(),
        ];
        let report = read(lines.iter().map(String::as_str));
        assert_eq!(report.lines, 12);
        assert_eq!(report.skipped_lines, 1);
        assert_eq!(report.failures, 5);
        assert_eq!(report.unclassified, 3);
        assert_eq!(report.timed_out, 1);
        assert_eq!((report.runs, report.calls), (1, 9));
        assert_eq!(report.by_category["unknown"], 2);
        assert_eq!(report.by_category["transient"], 2);
        assert_eq!(
            report.by_rule[0],
            RuleRow {
                rule: NO_RULE.to_owned(),
                failures: 3
            }
        );
        assert_eq!(
            report.retries,
            Retries {
                retried_calls: 2,
                retries: 3,
                recovered: 1,
                gave_up: 1
            }
        );
        let query = &report.by_tool[0];
        assert_eq!(
            (query.server.as_str(), query.tool.as_str(), query.failures),
            ("db", "query", 2)
        );
        assert_eq!((query.retried_calls, query.recovered), (2, 1));
        let [texts] = &report.unclassified_texts[..] else {
            panic!("{:?}", report.unclassified_texts)
        };
        assert_eq!(texts.count, 2);
        assert_eq!(texts.shape, "the frob broke on item <n>");
        assert_eq!(texts.tools, ["query", "read"]);

        let shown = report.render();
        assert!(
            shown.contains("5 failed tool calls, 3 unclassified"),
            "{shown}"
        );
        assert!(shown.contains("validation         1  20"), "{shown}");
        assert!(shown.contains("(no rule: unclassified)"), "{shown}");
    }

    #[test]
    fn any_line_cut_anywhere_is_read_without_a_panic() {
        let lines = [
            TEXT_REWRITE.to_owned(),
            rewrite("fs", "réad", NO_RULE, "unknown", 2, "ü \"x\" \\ \n"),
            r#"2026-12-02T16:08:32Z  INFO m a="\u{zz}" b="\u12" c={"x": [1, {"y": "}"}]} d=\"#
                .to_owned(),
            "2026-12-02T16:08:32Z  INFO é=1 =2 a== b=\"\\\" c=[".to_owned(),
        ];
        let mut reader = Reader::default();
        for line in &lines {
            for (at, _) in line.char_indices() {
                reader.line(&line[..at]);
                reader.line(&line[at..]);
            }
        }
        let report = reader.finish();
        assert!(report.lines > 100);
        assert!(!report.render().is_empty());
    }

    #[test]
    fn tables_align_text_left_and_numbers_right() {
        let rows = vec![
            vec!["a".to_owned(), "1".to_owned()],
            vec!["long name".to_owned(), "100".to_owned()],
        ];
        assert_eq!(
            table(&["NAME", "N"], &rows),
            "NAME         N\na            1\nlong name  100\n"
        );
    }
}
