//! The CPU cost of rewriting one failed tool call, in-process: `Inspector::client_line` for a
//! `tools/call` request, then `Inspector::upstream_line` for its failed answer, with the
//! embedded default rules and the default settings (as `mcp-errnorm -- server` runs).
//!
//!   cargo bench --bench rewrite                  # ns per call for every case
//!   cargo bench --bench rewrite -- --case=enoent --secs=20    # one case, long (for perf)
//!   cargo bench --bench rewrite -- --dump=FILE   # also writes every answer line, to diff
//!
//! Each case is timed as a pair (request + answer), next to the same pair for a small success,
//! which is what the relay pays for any call; the difference is the rewrite.

use std::io::Write;
use std::time::{Duration, Instant};

use mcp_errnorm::config::{Flags, Settings};
use mcp_errnorm::relay::Inspector;
use mcp_errnorm::render::Profile;

struct Case {
    name: &'static str,
    profile: Profile,
    /// The answer's `result` or `error` member, as the upstream writes it.
    answer: &'static str,
}

const CASES: &[Case] = &[
    Case {
        name: "success (baseline)",
        profile: Profile::Mcp,
        answer: r#""result":{"content":[{"type":"text","text":"ok"}]}"#,
    },
    Case {
        name: "enoent (fast upstream default)",
        profile: Profile::Mcp,
        answer: r#""result":{"content":[{"type":"text","text":"ENOENT: no such file or directory, open '/srv/app/config.yaml'"}],"isError":true}"#,
    },
    Case {
        name: "enoent, enterprise profile",
        profile: Profile::Enterprise,
        answer: r#""result":{"content":[{"type":"text","text":"ENOENT: no such file or directory, open '/srv/app/config.yaml'"}],"isError":true}"#,
    },
    Case {
        name: "http 429 with Retry-After",
        profile: Profile::Mcp,
        answer: r#""result":{"content":[{"type":"text","text":"Error: HTTP 429 Too Many Requests: rate limit exceeded. Retry-After: 30"}],"isError":true}"#,
    },
    Case {
        name: "401 with a bearer token",
        profile: Profile::Mcp,
        answer: r#""result":{"content":[{"type":"text","text":"Request failed with status 401 Unauthorized (Authorization: Bearer abcdefghijklmnop1234)"}],"isError":true}"#,
    },
    Case {
        name: "no rule matches: the model decides",
        profile: Profile::Mcp,
        answer: r#""result":{"content":[{"type":"text","text":"MCP error -32603: the frobnicator could not be reticulated"}],"isError":true}"#,
    },
    Case {
        name: "json-rpc error (unknown tool)",
        profile: Profile::Mcp,
        answer: r#""error":{"code":-32602,"message":"MCP error -32602: Tool nope not found"}"#,
    },
    Case {
        name: "python traceback (long text)",
        profile: Profile::Mcp,
        answer: r#""result":{"content":[{"type":"text","text":"Error executing tool query: Traceback (most recent call last):\n  File \"/app/server.py\", line 88, in call_tool\n    rows = await db.fetch(sql)\n  File \"/usr/lib/python3.12/site-packages/asyncpg/pool.py\", line 212, in fetch\n    return await con.fetch(query)\nasyncpg.exceptions.UndefinedTableError: relation \"orders_2024\" does not exist"}],"isError":true,"structuredContent":{"rows":[]}}"#,
    },
];

/// The request arguments: the failing call, as a client sends it.
const ARGUMENTS: &str = r#"{"path":"/srv/app/config.yaml","limit":10}"#;

fn inspector(profile: Profile) -> Inspector {
    let settings = Settings::load(&Flags {
        profile: Some(profile),
        ..Flags::default()
    })
    .expect("default settings");
    let inspector = Inspector::new(settings.rewriter(), settings.policy.clone());
    // Open the session as the benchmark's client does against the fast upstream.
    let open = [
        (
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#,
            r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"fast-upstream","version":"1.0.0"}}}"#,
        ),
        (
            r#"{"jsonrpc":"2.0","id":"list","method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":"list","result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}},{"name":"fail","inputSchema":{"type":"object"}}]}}"#,
        ),
    ];
    for (request, answer) in open {
        inspector.client_line(format!("{request}\n").into_bytes());
        inspector.upstream_line(format!("{answer}\n").into_bytes());
    }
    inspector
}

/// One call: the request, then its answer; returns what the client receives.
fn call(inspector: &Inspector, id: u64, answer: &str) -> Vec<Vec<u8>> {
    let request = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"fail\",\"arguments\":{ARGUMENTS}}}}}\n"
    );
    let answer = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},{answer}}}\n");
    let sent = inspector.client_line(std::hint::black_box(request.into_bytes()));
    std::hint::black_box(sent);
    inspector
        .upstream_line(std::hint::black_box(answer.into_bytes()))
        .to_client
}

/// Mean ns per call over at least `min` time, measured in a few rounds; the best round counts
/// (the least disturbed by the rest of the machine).
fn time(case: &Case, min: Duration) -> f64 {
    let inspector = inspector(case.profile);
    let mut id = 1u64;
    for _ in 0..2_000 {
        call(&inspector, id, case.answer);
        id += 1;
    }
    let rounds = 5;
    let mut best = f64::INFINITY;
    for _ in 0..rounds {
        let start = Instant::now();
        let mut n = 0u64;
        while start.elapsed() < min / rounds {
            for _ in 0..500 {
                std::hint::black_box(call(&inspector, id, case.answer));
                id += 1;
            }
            n += 500;
        }
        best = best.min(start.elapsed().as_nanos() as f64 / n as f64);
    }
    best
}

fn main() {
    let arg = |name: &str| {
        std::env::args().find_map(|a| a.strip_prefix(&format!("--{name}=")).map(str::to_owned))
    };
    let secs: f64 = arg("secs").and_then(|s| s.parse().ok()).unwrap_or(1.0);
    let only = arg("case");
    if let Some(path) = arg("dump") {
        let mut out = std::fs::File::create(&path).expect("dump file");
        for case in CASES {
            let inspector = inspector(case.profile);
            for line in call(&inspector, 7, case.answer) {
                out.write_all(&line).expect("write dump");
            }
        }
    }
    println!("ns per call (request + answer through Inspector), best of 5 rounds:");
    let mut baseline = None;
    for case in CASES {
        if only.as_deref().is_some_and(|o| !case.name.starts_with(o)) {
            continue;
        }
        let ns = time(case, Duration::from_secs_f64(secs));
        let extra = match baseline {
            None if case.name.starts_with("success") => {
                baseline = Some(ns);
                String::new()
            }
            Some(b) => format!("   (+{:6.0} ns over a success)", ns - b),
            None => String::new(),
        };
        println!("  {:34} {ns:8.0} ns{extra}", case.name);
    }
    if only.is_none() {
        classification(Duration::from_secs_f64(secs));
    }
}

/// Classification alone: a failure a rule decides, and one the fallback model decides (target:
/// under 20 us), on the embedded defaults.
fn classification(min: Duration) {
    use mcp_errnorm::classify::classify;
    use mcp_errnorm::rules::{Failure, RuleSet};
    use mcp_errnorm::taxonomy::Source;
    let rules = RuleSet::defaults();
    let failure = |text| Failure {
        text,
        tool: "query",
        source: Source::Result,
        rpc_code: None,
    };
    let by_rule = "ENOENT: no such file or directory, open '/srv/app/config.yaml'";
    let by_model = "MCP error -32603: Report job 4100 rejected: the scheduler queue wh-0 is paused";
    let time = |text| {
        for _ in 0..1_000 {
            std::hint::black_box(classify(&rules, failure(text)));
        }
        let mut best = f64::INFINITY;
        for _ in 0..5 {
            let start = Instant::now();
            let mut n = 0u64;
            while start.elapsed() < min / 5 {
                for _ in 0..200 {
                    std::hint::black_box(classify(&rules, failure(std::hint::black_box(text))));
                }
                n += 200;
            }
            best = best.min(start.elapsed().as_nanos() as f64 / n as f64);
        }
        best
    };
    let rule = time(by_rule);
    let model = time(by_model);
    assert_eq!(
        classify(&rules, failure(by_model)).rule_id.as_deref(),
        Some("model")
    );
    println!("classification alone (embedded defaults), best of 5 rounds:");
    println!("  {:34} {:8.2} us", "a rule decides", rule / 1000.0);
    println!(
        "  {:34} {:8.2} us   ({:.1}x a rule's)",
        "the fallback model decides",
        model / 1000.0,
        model / rule
    );
}
