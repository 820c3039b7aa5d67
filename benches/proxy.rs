//! The benchmark behind `scripts/bench.sh`: the same workloads, in one run, three (or four) ways:
//!
//! - `direct`: the client talks to the fast upstream (`examples/fast_upstream.rs`) itself;
//! - `relay`: through a byte relay that parses nothing (`examples/byte_relay.rs`), the floor any
//!   stdio proxy pays;
//! - `errnorm`: through `target/release/mcp-errnorm`; for 32 calls in flight and the memory
//!   workload, also with a time limit on every call (`[timeouts]`);
//! - `baseline`: through another build of mcp-errnorm named by `MCP_ERRNORM_BENCH_BASELINE`
//!   (before and after a change, in one run), when it is set.
//! - `mcp-rtk`: through another stdio MCP proxy from crates.io, when `scripts/bench.sh` could
//!   install it (`MCP_ERRNORM_BENCH_RTK` names its binary).
//!
//! Then classification in-process with 10, 100 and 1,000 generated rules, and the proxy's
//! memory. Prints every figure, the ratios against the relay, and PASS/FAIL per target; always
//! exits 0 (it reports, it does not gate). `--quick` runs every workload smaller.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_errnorm::classify::{classify, decided_by_a_rule};
use mcp_errnorm::diagnostic::SourceFile;
use mcp_errnorm::rules::{Failure, RuleSet};
use mcp_errnorm::taxonomy::Source;

/// No single workload may take longer than this; a stuck proxy is killed and reported.
const WATCHDOG: Duration = Duration::from_secs(90);

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Via {
    Direct,
    Relay,
    Errnorm,
    /// The proxy with a time limit on every call (`[timeouts] default_seconds = 30`).
    ErrnormTimed,
    Rtk,
    /// Another build of mcp-errnorm (`MCP_ERRNORM_BENCH_BASELINE`), to compare two versions in
    /// one run.
    Baseline,
}

impl Via {
    fn name(self) -> &'static str {
        match self {
            Via::Direct => "direct",
            Via::Relay => "relay",
            Via::Errnorm => "errnorm",
            Via::ErrnormTimed => "errnorm with time limits",
            Via::Rtk => "mcp-rtk",
            Via::Baseline => "baseline",
        }
    }
}

struct Paths {
    errnorm: PathBuf,
    relay: PathBuf,
    upstream: PathBuf,
    rtk: Option<PathBuf>,
    baseline: Option<PathBuf>,
    scratch: PathBuf,
}

impl Paths {
    fn find() -> Paths {
        // This binary is target/release/deps/proxy-<hash>; the examples are beside deps/.
        let exe = std::env::current_exe().expect("current exe");
        let release = exe
            .parent()
            .and_then(Path::parent)
            .expect("target/release")
            .to_path_buf();
        let scratch = release.join("bench-scratch");
        std::fs::create_dir_all(&scratch).expect("scratch dir");
        std::fs::write(
            scratch.join("timeouts.toml"),
            "[timeouts]\ndefault_seconds = 30\n",
        )
        .expect("timeouts config");
        let paths = Paths {
            errnorm: PathBuf::from(env!("CARGO_BIN_EXE_mcp-errnorm")),
            relay: release.join("examples/byte_relay"),
            upstream: release.join("examples/fast_upstream"),
            rtk: std::env::var_os("MCP_ERRNORM_BENCH_RTK")
                .map(PathBuf::from)
                .filter(|p| p.exists()),
            baseline: std::env::var_os("MCP_ERRNORM_BENCH_BASELINE").map(PathBuf::from),
            scratch,
        };
        for p in [&paths.errnorm, &paths.relay, &paths.upstream] {
            assert!(
                p.exists(),
                "{} is missing: run scripts/bench.sh (it builds the examples)",
                p.display()
            );
        }
        paths
    }

    fn command(&self, via: Via) -> Command {
        let mut c = match via {
            Via::Direct => Command::new(&self.upstream),
            Via::Relay => {
                let mut c = Command::new(&self.relay);
                c.arg("--").arg(&self.upstream);
                c
            }
            Via::Errnorm | Via::ErrnormTimed => {
                // MCP_ERRNORM_BENCH_PREFIX="perf record -g -o FILE --" profiles the proxy.
                let prefix = std::env::var("MCP_ERRNORM_BENCH_PREFIX").unwrap_or_default();
                let mut words = prefix.split_whitespace();
                let mut c = match words.next() {
                    Some(first) => {
                        let mut c = Command::new(first);
                        c.args(words).arg(&self.errnorm);
                        c
                    }
                    None => Command::new(&self.errnorm),
                };
                if via == Via::ErrnormTimed {
                    c.arg("--config").arg(self.scratch.join("timeouts.toml"));
                }
                c.arg("--").arg(&self.upstream);
                c
            }
            Via::Baseline => {
                let mut c = Command::new(self.baseline.as_ref().expect("a baseline build"));
                c.arg("--").arg(&self.upstream);
                c
            }
            Via::Rtk => {
                let mut c = Command::new(self.rtk.as_ref().expect("rtk installed"));
                // It keeps statistics under $HOME: keep them out of the user's.
                c.env("HOME", &self.scratch)
                    .env("XDG_DATA_HOME", &self.scratch)
                    .env("XDG_CONFIG_HOME", &self.scratch)
                    .arg("--")
                    .arg(&self.upstream);
                c
            }
        };
        c.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        c
    }
}

/// A client session with one process (the upstream itself, or a proxy in front of it).
struct Proc {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Option<BufReader<ChildStdout>>,
    done: Arc<AtomicBool>,
    next_id: u64,
}

type R<T> = Result<T, String>;

impl Proc {
    fn start(paths: &Paths, via: Via) -> R<Proc> {
        let mut child = paths
            .command(via)
            .spawn()
            .map_err(|e| format!("spawn {}: {e}", via.name()))?;
        if std::env::var_os("MCP_ERRNORM_BENCH_VERBOSE").is_some() {
            eprintln!("started {} as pid {}", via.name(), child.id());
        }
        let stdin = child.stdin.take();
        let stdout = child
            .stdout
            .take()
            .map(|s| BufReader::with_capacity(1 << 16, s));
        let done = Arc::new(AtomicBool::new(false));
        let (flag, pid) = (done.clone(), child.id() as libc::pid_t);
        std::thread::spawn(move || {
            let deadline = Instant::now() + WATCHDOG;
            while !flag.load(Ordering::Relaxed) {
                if Instant::now() > deadline {
                    // SAFETY: kill(2) on the pid of a child this program spawned and has not reaped.
                    unsafe { libc::kill(pid, libc::SIGKILL) };
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        Ok(Proc {
            child,
            stdin,
            stdout,
            done,
            next_id: 1,
        })
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn send(&mut self, line: &[u8]) -> R<()> {
        let stdin = self.stdin.as_mut().ok_or("stdin closed")?;
        stdin.write_all(line).map_err(|e| format!("write: {e}"))
    }

    fn recv_into(&mut self, buf: &mut Vec<u8>) -> R<()> {
        buf.clear();
        let out = self.stdout.as_mut().ok_or("stdout taken")?;
        match out.read_until(b'\n', buf) {
            Ok(0) => Err("the process closed its stdout (died, or killed by the watchdog)".into()),
            Ok(_) => Ok(()),
            Err(e) => Err(format!("read: {e}")),
        }
    }

    fn request(&mut self, line: &[u8], buf: &mut Vec<u8>) -> R<()> {
        self.send(line)?;
        self.recv_into(buf)
    }

    /// `initialize`, `notifications/initialized`, `tools/list`, as a client opens a session.
    fn handshake(&mut self) -> R<()> {
        let mut buf = Vec::new();
        self.request(
            br#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}
"#,
            &mut buf,
        )?;
        expect_answer(&buf, "init")?;
        self.send(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")?;
        self.request(
            b"{\"jsonrpc\":\"2.0\",\"id\":\"list\",\"method\":\"tools/list\"}\n",
            &mut buf,
        )?;
        expect_answer(&buf, "list")
    }

    fn call_line(&mut self, tool: &str, arguments: &str) -> Vec<u8> {
        let id = self.next_id;
        self.next_id += 1;
        format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"{tool}\",\"arguments\":{arguments}}}}}\n"
        )
        .into_bytes()
    }

    /// `total` calls with `window` in flight; returns the seconds taken and the bytes received.
    fn windowed(
        &mut self,
        tool: &str,
        arguments: &str,
        total: usize,
        window: usize,
    ) -> R<(f64, u64)> {
        let mut stdout = self.stdout.take().ok_or("stdout taken")?;
        let (tx, rx) = std::sync::mpsc::sync_channel::<usize>(window * 2);
        let reader = std::thread::spawn(move || {
            let mut buf = Vec::new();
            for _ in 0..total {
                buf.clear();
                match stdout.read_until(b'\n', &mut buf) {
                    Ok(0) | Err(_) => return (stdout, false),
                    Ok(n) => {
                        if tx.send(n).is_err() {
                            return (stdout, false);
                        }
                    }
                }
            }
            (stdout, true)
        });
        let lines: Vec<Vec<u8>> = (0..total)
            .map(|_| self.call_line(tool, arguments))
            .collect();
        let start = Instant::now();
        let mut sent = 0;
        let mut received = 0;
        let mut bytes = 0u64;
        let mut failed = None;
        while sent < total.min(window) {
            if let Err(e) = self.send(&lines[sent]) {
                failed = Some(e);
                break;
            }
            sent += 1;
        }
        while failed.is_none() && received < total {
            match rx.recv() {
                Ok(n) => {
                    bytes += n as u64;
                    received += 1;
                }
                Err(_) => {
                    failed = Some(format!("answers stopped after {received} of {total}"));
                    break;
                }
            }
            if sent < total {
                if let Err(e) = self.send(&lines[sent]) {
                    failed = Some(e);
                    break;
                }
                sent += 1;
            }
        }
        let took = start.elapsed().as_secs_f64();
        if failed.is_some() {
            // Unblock the reader: the watchdog or the kill below ends its read.
            let _ = self.child.kill();
        }
        let (stdout, complete) = reader.join().map_err(|_| "reader panicked")?;
        self.stdout = Some(stdout);
        match failed {
            Some(e) => Err(e),
            None if !complete => Err("reader stopped early".into()),
            None => Ok((took, bytes)),
        }
    }

    fn finish(mut self) {
        self.stdin.take();
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            match self.child.try_wait() {
                Ok(Some(_)) | Err(_) => break,
                Ok(None) if Instant::now() > deadline => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    break;
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            }
        }
        self.done.store(true, Ordering::Relaxed);
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn expect_answer(line: &[u8], id: &str) -> R<()> {
    let v: serde_json::Value = serde_json::from_slice(line)
        .map_err(|e| format!("answer is not JSON ({e}): {}", preview(line)))?;
    if v["id"] != id || v.get("result").is_none() {
        return Err(format!("unexpected answer: {}", preview(line)));
    }
    Ok(())
}

fn preview(line: &[u8]) -> String {
    let s = String::from_utf8_lossy(&line[..line.len().min(200)]);
    s.trim_end().to_owned()
}

/// kB from /proc/PID/status.
fn proc_status_kb(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find(|l| l.starts_with(field))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

fn skipped<T>() -> R<T> {
    Err("skipped".into())
}

/// Runs `measure` for every way, `rounds` times, the ways alternating within each round so that
/// drift on a shared machine hits every way alike; per way, every round's figure (or the last
/// error, if no round succeeded).
fn interleaved<T>(
    ways: usize,
    rounds: usize,
    mut measure: impl FnMut(usize) -> R<T>,
) -> Vec<R<Vec<T>>> {
    let mut figures: Vec<Vec<T>> = (0..ways).map(|_| Vec::new()).collect();
    let mut errors: Vec<Option<String>> = vec![None; ways];
    for _ in 0..rounds {
        for (way, (figures, error)) in figures.iter_mut().zip(&mut errors).enumerate() {
            match measure(way) {
                Ok(v) => figures.push(v),
                Err(e) => *error = Some(e),
            }
        }
    }
    figures
        .into_iter()
        .zip(errors)
        .map(|(v, e)| match e {
            Some(e) if v.is_empty() => Err(e),
            _ if v.is_empty() => Err("no rounds".into()),
            _ => Ok(v),
        })
        .collect()
}

/// The median round of a throughput figure and its CPU per call.
fn median_round(rounds: R<Vec<(f64, f64)>>) -> R<(f64, Option<f64>)> {
    let rounds = rounds?;
    let figure = median(rounds.iter().map(|r| r.0).collect());
    let cpu = median(rounds.iter().map(|r| r.1).collect());
    Ok((figure, Some(cpu)))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

struct Sizes {
    latency_calls: usize,
    latency_rounds: usize,
    /// Rounds of each throughput workload (the calls are split between them).
    rounds: usize,
    inflight_calls: usize,
    mb1_calls: usize,
    mb50_calls: usize,
    fail_calls: usize,
    startups: usize,
    growth_n: usize,
    classify_iters: usize,
}

// ----------------------------------------------------------------------------- workloads

/// p50 and p99 of one small call at a time, in microseconds.
fn latency(paths: &Paths, via: Via, s: &Sizes) -> R<(f64, f64)> {
    let mut p = Proc::start(paths, via)?;
    p.handshake()?;
    let mut buf = Vec::new();
    let warm: Vec<Vec<u8>> = (0..500).map(|_| p.call_line("echo", "{}")).collect();
    for line in &warm {
        p.request(line, &mut buf)?;
    }
    let lines: Vec<Vec<u8>> = (0..s.latency_calls)
        .map(|_| p.call_line("echo", "{}"))
        .collect();
    let mut micros = Vec::with_capacity(lines.len());
    for line in &lines {
        let start = Instant::now();
        p.request(line, &mut buf)?;
        micros.push(start.elapsed().as_secs_f64() * 1e6);
    }
    p.finish();
    micros.sort_by(|a, b| a.total_cmp(b));
    Ok((percentile(&micros, 0.5), percentile(&micros, 0.99)))
}

/// Calls per second with 32 in flight, and the CPU the process used per call (us; for a proxy,
/// its own CPU, not the upstream's).
fn inflight(paths: &Paths, via: Via, tool: &str, args: &str, total: usize) -> R<(f64, f64)> {
    let mut p = Proc::start(paths, via)?;
    p.handshake()?;
    p.windowed(tool, args, 1000.min(total), 32)?;
    let cpu0 = cpu_seconds(p.pid());
    let (secs, _) = p.windowed(tool, args, total, 32)?;
    let cpu = cpu_seconds(p.pid()) - cpu0;
    p.finish();
    Ok((total as f64 / secs, cpu * 1e6 / total as f64))
}

/// CPU seconds a process used, all its threads: their `se.sum_exec_runtime` (ns resolution)
/// from /proc/PID/task/*/sched where the kernel keeps it, else user + system ticks from
/// /proc/PID/stat (10 ms each: coarse over a round of a few tens of milliseconds).
fn cpu_seconds(pid: u32) -> f64 {
    exec_runtime(pid).unwrap_or_else(|| stat_ticks(pid))
}

fn exec_runtime(pid: u32) -> Option<f64> {
    let mut millis = 0.0;
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).ok()? {
        let sched = std::fs::read_to_string(task.ok()?.path().join("sched")).ok()?;
        let line = sched
            .lines()
            .find(|l| l.starts_with("se.sum_exec_runtime"))?;
        millis += line.rsplit(':').next()?.trim().parse::<f64>().ok()?;
    }
    Some(millis / 1e3)
}

fn stat_ticks(pid: u32) -> f64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return 0.0;
    };
    // Fields after the command name, which is in parentheses and may hold spaces.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    (ticks(11) + ticks(12)) / hz
}

/// MB/s of results of `size` bytes (payload), one call at a time; the process's peak RSS (kB), the size of
/// one answer, and the process's CPU per call (us).
fn big(paths: &Paths, via: Via, size: usize, calls: usize) -> R<(f64, Option<u64>, usize, f64)> {
    let mut p = Proc::start(paths, via)?;
    p.handshake()?;
    let args = format!("{{\"bytes\":{size}}}");
    let mut buf = Vec::new();
    let warm = p.call_line("big", &args);
    p.request(&warm, &mut buf)?;
    let answer_len = buf.len();
    let lines: Vec<Vec<u8>> = (0..calls).map(|_| p.call_line("big", &args)).collect();
    let cpu0 = cpu_seconds(p.pid());
    let start = Instant::now();
    // MB/s of the upstream's payload, whatever the answer's size (a proxy that compresses
    // results, as mcp-rtk does, sends fewer bytes for the same work).
    let bytes = (size * calls) as u64;
    for line in &lines {
        p.request(line, &mut buf)?;
    }
    let secs = start.elapsed().as_secs_f64();
    let cpu = (cpu_seconds(p.pid()) - cpu0) * 1e6 / calls as f64;
    let hwm = proc_status_kb(p.pid(), "VmHWM:");
    p.finish();
    Ok((bytes as f64 / secs / 1e6, hwm, answer_len, cpu))
}

/// Milliseconds from spawn to the answer to `initialize`, median of `n`.
fn startup(paths: &Paths, via: Via, n: usize) -> R<f64> {
    let mut times = Vec::new();
    for _ in 0..n {
        let start = Instant::now();
        let mut p = Proc::start(paths, via)?;
        let mut buf = Vec::new();
        p.request(
            br#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}
"#,
            &mut buf,
        )?;
        times.push(start.elapsed().as_secs_f64() * 1e3);
        p.finish();
    }
    Ok(median(times))
}

/// The proxy's idle RSS after a handshake, and its RSS after `n` and `10 n` calls (kB).
fn memory(paths: &Paths, via: Via, n: usize) -> R<(u64, u64, u64)> {
    let mut p = Proc::start(paths, via)?;
    p.handshake()?;
    std::thread::sleep(Duration::from_millis(300));
    let rss = |p: &Proc| proc_status_kb(p.pid(), "VmRSS:").ok_or("no /proc status".to_owned());
    let idle = rss(&p)?;
    p.windowed("echo", "{}", n, 32)?;
    p.windowed("fail", "{}", n / 10, 32)?;
    let after_n = rss(&p)?;
    p.windowed("echo", "{}", 9 * n, 32)?;
    p.windowed("fail", "{}", 9 * n / 10, 32)?;
    let after_10n = rss(&p)?;
    p.finish();
    Ok((idle, after_n, after_10n))
}

// ----------------------------------------------------------------------------- classification

const SERVICES: &[&str] = &[
    "orders",
    "billing",
    "inventory",
    "search",
    "payments",
    "shipping",
    "ledger",
    "crm",
    "tickets",
    "warehouse",
    "catalog",
    "identity",
    "reports",
    "mailer",
    "storage",
    "analytics",
];

/// `n` rules in the shapes real rule files use: anchored prefixes, alternations, named captures,
/// case-insensitive phrases, tool globs, rpc-only rules, codes of their own.
fn generated_rules(n: usize) -> String {
    let mut out = String::new();
    for i in 0..n {
        let svc = SERVICES[i % SERVICES.len()];
        let k = i / SERVICES.len();
        let rule = match i % 8 {
            0 => format!(
                "[[rule]]\nid = \"{svc}-{k}-unavailable\"\nmatch = '(?i)\\b{svc}{k} (?:service )?(?:is )?(?:unavailable|down|not responding)\\b'\ncode = \"SYSTEM_UNAVAILABLE\"\nmessage = \"The {svc} service is unavailable.\"\n"
            ),
            1 => format!(
                "[[rule]]\nid = \"{svc}-{k}-locked\"\ntools = [\"{svc}_*\"]\nmatch = '{svc}{k}: record (?P<record>\\d+) is locked by (?P<who>\\S+)'\ncategory = \"business\"\ncode = \"RECORD_LOCKED_{i}\"\nmessage = \"Record {{record}} is locked by {{who}}.\"\nalternatives = [\"wait for {{who}} to finish, or edit a copy\"]\n"
            ),
            2 => format!(
                "[[rule]]\nid = \"{svc}-{k}-quota\"\nmatch = '(?i)quota (?P<quota>[a-z_]+) exceeded for {svc}{k} project (?P<project>[\\w-]+)'\ncategory = \"business\"\ncode = \"QUOTA_EXCEEDED\"\nmessage = \"Quota {{quota}} is used up in project {{project}}.\"\nuser_message = \"The {svc} quota is used up.\"\n"
            ),
            3 => format!(
                "[[rule]]\nid = \"{svc}-{k}-e-code\"\nmatch = '^{}{k:03}E(?P<num>\\d{{4}}): (?P<detail>.+)$'\ncode = \"VALIDATION_ERROR\"\nmessage = \"{svc} rejected the input: {{detail}}\"\n",
                svc.to_uppercase()
            ),
            4 => format!(
                "[[rule]]\nid = \"{svc}-{k}-rpc-busy\"\nsource = \"rpc\"\nmatch = '{svc}{k} backend busy(?:, retry after (?P<retry_after>\\d+)s)?'\ncategory = \"transient\"\ncode = \"RATE_LIMITED\"\n"
            ),
            5 => format!(
                "[[rule]]\nid = \"{svc}-{k}-permission\"\nmatch = '(?i)permission denied for (?:schema|relation|table) {svc}{k}_(?P<object>\\w+)'\ncode = \"PERMISSION_DENIED\"\nalternatives = [\"ask an administrator to grant access to {{object}}\"]\n"
            ),
            6 => format!(
                "[[rule]]\nid = \"{svc}-{k}-missing\"\nmatch = 'relation \"{svc}{k}_(?P<table>[a-z_]+)\" does not exist'\ncode = \"NOT_FOUND\"\nmessage = \"Table {svc}{k}_{{table}} does not exist.\"\n"
            ),
            _ => format!(
                "[[rule]]\nid = \"{svc}-{k}-timeout\"\ntools = [\"{svc}_*\", \"*_{svc}\"]\nmatch = '(?i){svc}{k} (?:request|query|call) timed out after (?P<ms>\\d+) ?ms'\ncode = \"TIMEOUT\"\nmessage = \"The {svc} call timed out after {{ms}} ms.\"\n"
            ),
        };
        out.push_str(&rule);
        out.push('\n');
    }
    out
}

/// Realistic failure texts for a table of `n` generated rules: some match early rules, some
/// the last ones, some none at all, one is a long stack trace.
fn failure_texts(n: usize) -> Vec<(String, String, Source)> {
    let svc_of = |i: usize| SERVICES[i % SERVICES.len()];
    let k_of = |i: usize| i / SERVICES.len();
    // The last rule of a shape: the worst case for a first-match table.
    let last_of = |shape: usize| (0..n).rev().find(|i| i % 8 == shape);
    let mut texts = Vec::new();
    if let Some(i) = last_of(1) {
        texts.push((
            format!(
                "{}{}: record 48213 is locked by alice@example.com",
                svc_of(i),
                k_of(i)
            ),
            format!("{}_update", svc_of(i)),
            Source::Result,
        ));
    }
    if let Some(i) = last_of(6) {
        texts.push((
            format!(
                "ERROR: relation \"{}{}_line_items\" does not exist",
                svc_of(i),
                k_of(i)
            ),
            "sql_query".to_owned(),
            Source::Result,
        ));
    }
    if let Some(i) = last_of(7) {
        texts.push((
            format!("{}{} query timed out after 30000 ms", svc_of(i), k_of(i)),
            format!("{}_query", svc_of(i)),
            Source::Result,
        ));
    }
    if let Some(i) = last_of(4) {
        texts.push((
            format!("{}{} backend busy, retry after 20s", svc_of(i), k_of(i)),
            format!("{}_sync", svc_of(i)),
            Source::Rpc,
        ));
    }
    texts.push((
        format!("{}{} service is not responding", svc_of(0), k_of(0)),
        "health".to_owned(),
        Source::Result,
    ));
    // No generated rule matches these.
    texts.push((
        "ENOENT: no such file or directory, open '/srv/app/config.yaml'".into(),
        "read_text_file".into(),
        Source::Result,
    ));
    texts.push((
        "Something went wrong while talking to the upstream API (request id 9f2c)".into(),
        "fetch".into(),
        Source::Result,
    ));
    let mut trace = String::from("Error: connect ECONNREFUSED 10.0.0.12:5432\n");
    for f in 0..25 {
        trace.push_str(&format!(
            "    at Connection.handler{f} (/srv/app/node_modules/pg/lib/connection.js:{}:{})\n",
            100 + f * 7,
            5 + f
        ));
    }
    texts.push((trace, "db_query".into(), Source::Result));
    texts
}

struct ClassifyFigure {
    rules: usize,
    load_ms: f64,
    first_ms: f64,
    /// The mean over the texts a rule decides: what the target is about.
    mean_ns: f64,
    worst_ns: f64,
    /// The mean over the texts no rule decides (read again as words, then guessed by the model).
    unmatched_mean_ns: f64,
    matched: usize,
    texts: usize,
}

fn classification(n: usize, iters: usize) -> ClassifyFigure {
    let file = SourceFile::new(format!("generated-{n}.toml"), generated_rules(n));
    let start = Instant::now();
    let rules = RuleSet::load(&[file], &[]).expect("generated rules load");
    let load_ms = start.elapsed().as_secs_f64() * 1e3;
    assert_eq!(rules.rules().len(), n);
    let texts = failure_texts(n);
    let failures: Vec<Failure> = texts
        .iter()
        .map(|(text, tool, source)| Failure {
            text,
            tool,
            source: *source,
            rpc_code: (*source == Source::Rpc).then_some(-32000),
        })
        .collect();
    // The first failure builds the matcher: timed apart from the steady state.
    let start = Instant::now();
    std::hint::black_box(classify(&rules, failures[0]));
    let first_ms = start.elapsed().as_secs_f64() * 1e3;
    let by_rule: Vec<bool> = failures
        .iter()
        .map(|f| decided_by_a_rule(classify(&rules, *f).rule_id.as_deref()))
        .collect();
    let matched = by_rule.iter().filter(|m| **m).count();
    // Warm the lazy DFA caches as a running proxy has them warm.
    for f in &failures {
        std::hint::black_box(classify(&rules, *f));
    }
    let mut per_text = Vec::new();
    for f in &failures {
        // At most `iters` calls, and no more than a quarter of a second per text.
        let start = Instant::now();
        let mut done = 0;
        while done < iters && (done < 10 || start.elapsed() < Duration::from_millis(250)) {
            std::hint::black_box(classify(&rules, std::hint::black_box(*f)));
            done += 1;
        }
        per_text.push(start.elapsed().as_secs_f64() * 1e9 / done as f64);
    }
    let mean = |matched: bool| {
        let of: Vec<f64> = per_text
            .iter()
            .zip(&by_rule)
            .filter(|(_, m)| **m == matched)
            .map(|(ns, _)| *ns)
            .collect();
        of.iter().sum::<f64>() / of.len().max(1) as f64
    };
    let worst_ns = per_text
        .iter()
        .zip(&by_rule)
        .filter(|(_, m)| **m)
        .map(|(ns, _)| *ns)
        .fold(0.0, f64::max);
    ClassifyFigure {
        rules: n,
        load_ms,
        first_ms,
        mean_ns: mean(true),
        worst_ns,
        unmatched_mean_ns: mean(false),
        matched,
        texts: failures.len(),
    }
}

// ----------------------------------------------------------------------------- report

struct Report {
    passes: usize,
    fails: usize,
}

impl Report {
    fn target(&mut self, ok: bool, what: &str) {
        if ok {
            self.passes += 1;
        } else {
            self.fails += 1;
        }
        println!("{} {what}", if ok { "PASS" } else { "FAIL" });
    }
}

fn show<T: Copy>(r: &R<T>, f: impl Fn(T) -> String) -> String {
    match r {
        Ok(v) => f(*v),
        Err(e) => format!("n/a ({e})"),
    }
}

fn classification_section(s: &Sizes, report: &mut Report) {
    println!(
        "classification, generated rules ({} calls per text; texts matching the last rule of 5 shapes, an early one, none (3, one a 25-frame stack trace))",
        s.classify_iters
    );
    let mut at_1000 = None;
    for n in [10, 100, 1000] {
        let c = classification(n, s.classify_iters);
        println!(
            "  {:5} rules: load {:7.1} ms   first failure {:6.1} ms   decided by a rule ({} of {} texts): mean {:7.0} ns, slowest {:7.0} ns   no rule: mean {:7.0} ns",
            c.rules, c.load_ms, c.first_ms, c.matched, c.texts, c.mean_ns, c.worst_ns, c.unmatched_mean_ns
        );
        if n == 1000 {
            at_1000 = Some(c);
        }
    }
    let start = Instant::now();
    let defaults = RuleSet::defaults();
    let load_ms = start.elapsed().as_secs_f64() * 1e3;
    let texts = failure_texts(1000);
    // The first failure builds the matcher (the proxy starts without it); the rest of the
    // figures are with it built and the lazy DFA caches warm, as a running proxy has them.
    let classify_all = || {
        for (text, tool, source) in &texts {
            std::hint::black_box(classify(
                &defaults,
                Failure {
                    text,
                    tool,
                    source: *source,
                    rpc_code: None,
                },
            ));
        }
    };
    let start = Instant::now();
    classify_all();
    let warm_ms = start.elapsed().as_secs_f64() * 1e3;
    // Time-bounded like the generated tables: at most `classify_iters` rounds or half a second.
    let start = Instant::now();
    let mut rounds = 0;
    while rounds < s.classify_iters && (rounds < 3 || start.elapsed() < Duration::from_millis(500))
    {
        classify_all();
        rounds += 1;
    }
    let per = start.elapsed().as_secs_f64() * 1e9 / (rounds * texts.len()) as f64;
    println!(
        "  the {} embedded default rules: load {load_ms:.1} ms, first {} failures {warm_ms:.1} ms, then mean {per:7.0} ns/failure",
        defaults.rules().len(),
        texts.len()
    );
    if let Some(c) = at_1000 {
        report.target(
            c.mean_ns <= 5000.0,
            &format!(
                "classification with 1,000 rules <= 5 us per failure a rule decides: {:.2} us (slowest text {:.2} us; {:.2} us where no rule decides)",
                c.mean_ns / 1e3,
                c.worst_ns / 1e3,
                c.unmatched_mean_ns / 1e3
            ),
        );
    }
    println!();
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let classify_only = std::env::args().any(|a| a == "--classify");
    // `--only=inflight` (or latency, timeouts, mb1, mb50, fail, startup, memory, classify): one
    // workload.
    let only: Option<String> =
        std::env::args().find_map(|a| a.strip_prefix("--only=").map(str::to_owned));
    let want = |name: &str| only.as_deref().is_none_or(|o| o == name);
    let s = if quick {
        Sizes {
            latency_calls: 1_000,
            latency_rounds: 1,
            rounds: 1,
            inflight_calls: 5_000,
            mb1_calls: 20,
            mb50_calls: 1,
            fail_calls: 2_000,
            startups: 5,
            growth_n: 2_000,
            classify_iters: 2_000,
        }
    } else {
        Sizes {
            latency_calls: 5_000,
            latency_rounds: 5,
            rounds: 5,
            inflight_calls: 100_000,
            mb1_calls: 300,
            mb50_calls: 6,
            fail_calls: 30_000,
            startups: 21,
            growth_n: 20_000,
            classify_iters: 20_000,
        }
    };
    if classify_only {
        let mut report = Report {
            passes: 0,
            fails: 0,
        };
        classification_section(&s, &mut report);
        return;
    }
    let paths = Paths::find();
    let mut vias = vec![Via::Direct, Via::Relay, Via::Errnorm];
    if paths.baseline.is_some() {
        vias.push(Via::Baseline);
    }
    if paths.rtk.is_some() {
        vias.push(Via::Rtk);
    }
    let bench_start = Instant::now();
    let mut report = Report {
        passes: 0,
        fails: 0,
    };
    println!(
        "mcp-errnorm benchmark{}",
        if quick { " (--quick)" } else { "" }
    );
    println!("  upstream: {}", paths.upstream.display());
    println!("  relay:    {}", paths.relay.display());
    println!("  errnorm:  {}", paths.errnorm.display());
    match &paths.rtk {
        Some(p) => println!("  mcp-rtk:  {}", p.display()),
        None => println!("  mcp-rtk:  not installed (MCP_ERRNORM_BENCH_RTK unset)"),
    }
    if let Some(p) = &paths.baseline {
        println!("  baseline: {} (MCP_ERRNORM_BENCH_BASELINE)", p.display());
    }
    println!();

    // Latency: rounds alternate between the ways, and the median round counts, so that drift
    // on a shared machine hits every way alike.
    let rounds = if want("latency") { s.latency_rounds } else { 0 };
    let lat: Vec<R<(f64, f64)>> = interleaved(vias.len(), rounds, |i| latency(&paths, vias[i], &s))
        .into_iter()
        .map(|v| {
            let v = v?;
            Ok((
                median(v.iter().map(|x| x.0).collect()),
                median(v.iter().map(|x| x.1).collect()),
            ))
        })
        .collect();
    println!(
        "latency, 1 small tools/call at a time ({} calls x {} rounds, median round)",
        s.latency_calls, s.latency_rounds
    );
    for (via, r) in vias.iter().zip(&lat) {
        println!(
            "  {:8} {}",
            via.name(),
            show(r, |(p50, p99)| format!(
                "p50 {p50:7.1} us   p99 {p99:7.1} us"
            ))
        );
    }
    let base = |i: usize| lat[i].as_ref().ok().map(|v| v.0);
    if let (Some(d), Some(r)) = (base(0), base(1)) {
        let relay_added = r - d;
        for (i, via) in vias.iter().enumerate().skip(2) {
            if let Some(x) = base(i) {
                println!(
                    "  {:8} adds {:6.1} us over direct; the relay adds {:6.1} us: {:.2}x the relay's",
                    via.name(),
                    x - d,
                    relay_added,
                    (x - d) / relay_added
                );
            }
        }
        if let Some(x) = base(2) {
            let ratio = (x - d) / relay_added;
            report.target(
                ratio <= 1.2,
                &format!("latency added over direct (p50) <= 1.2x the relay's: {ratio:.2}x"),
            );
        }
    }
    println!();

    // Each result (one per way in `ways`): the figure, and the CPU the process used per call
    // where measured. Returns the proxy's ratio to the relay.
    let ratio_line =
        |title: &str, unit: &str, ways: &[Via], results: &[R<(f64, Option<f64>)>]| -> Option<f64> {
            println!("{title}");
            let figure = |way: Via| {
                let i = ways.iter().position(|w| *w == way)?;
                results[i].as_ref().ok().map(|r| r.0)
            };
            let relay = figure(Via::Relay);
            let width = ways.iter().map(|w| w.name().len()).max().unwrap_or(0);
            for (via, r) in ways.iter().zip(results) {
                let ratio = match (via, relay, r) {
                    (Via::Direct | Via::Relay, _, _) | (_, None, _) | (_, _, Err(_)) => {
                        String::new()
                    }
                    (_, Some(relay), Ok(v)) => format!("   {:.2}x the relay", v.0 / relay),
                };
                let cpu = match r {
                    Ok((_, Some(cpu))) => format!("   {cpu:6.2} us CPU/call"),
                    _ => String::new(),
                };
                println!(
                    "  {:width$} {}{cpu}{ratio}",
                    via.name(),
                    show(r, |v| format!("{:10.1} {unit}", v.0))
                );
            }
            println!();
            Some(figure(Via::Errnorm)? / relay?)
        };

    // Throughput: `calls` split over the rounds, which alternate between the ways.
    let throughput = |name: &str, calls: usize, measure: &dyn Fn(Via, usize) -> R<(f64, f64)>| {
        let rounds = if want(name) { s.rounds } else { 0 };
        interleaved(vias.len(), rounds, |i| measure(vias[i], calls / s.rounds))
            .into_iter()
            .map(median_round)
            .collect::<Vec<_>>()
    };
    let r32 = throughput("inflight", s.inflight_calls, &|via, n| {
        inflight(&paths, via, "echo", "{}", n)
    });
    let ratio32 = ratio_line(
        &format!(
            "throughput, 32 small calls in flight ({} calls in {} rounds, median round)",
            s.inflight_calls, s.rounds
        ),
        "calls/s",
        &vias,
        &r32,
    );

    // Not a target: what a time limit on every call costs (one deadline watcher, no timer per
    // call), beside the same workload without one.
    let timed_vias = [Via::Relay, Via::Errnorm, Via::ErrnormTimed];
    let rounds = if want("timeouts") { s.rounds } else { 0 };
    let timed: Vec<R<(f64, Option<f64>)>> = interleaved(timed_vias.len(), rounds, |i| {
        inflight(
            &paths,
            timed_vias[i],
            "echo",
            "{}",
            s.inflight_calls / s.rounds,
        )
    })
    .into_iter()
    .map(median_round)
    .collect();
    ratio_line(
        &format!(
            "throughput, 32 small calls in flight, without and with [timeouts] default_seconds = \
             30 ({} calls in {} rounds, median round)",
            s.inflight_calls, s.rounds
        ),
        "calls/s",
        &timed_vias,
        &timed,
    );

    let mut hwm_50 = None;
    let mut answer_50 = 0;
    let mb1 = throughput("mb1", s.mb1_calls, &|via, n| {
        big(&paths, via, 1 << 20, n).map(|x| (x.0, x.3))
    });
    let ratio_mb1 = ratio_line(
        &format!(
            "throughput, 1 MB results, one at a time ({} calls in {} rounds, median round)",
            s.mb1_calls, s.rounds
        ),
        "MB/s",
        &vias,
        &mb1,
    );
    let mb50: Vec<R<(f64, Option<f64>)>> = vias
        .iter()
        .map(|v| {
            if !want("mb50") {
                return skipped();
            }
            big(&paths, *v, 50 << 20, s.mb50_calls).map(|(mbs, hwm, len, cpu)| {
                if *v == Via::Errnorm {
                    hwm_50 = hwm;
                    answer_50 = len;
                }
                (mbs, Some(cpu))
            })
        })
        .collect();
    let ratio_mb50 = ratio_line(
        &format!(
            "throughput, 50 MB results, one at a time ({} calls)",
            s.mb50_calls
        ),
        "MB/s",
        &vias,
        &mb50,
    );

    let fails = throughput("fail", s.fail_calls, &|via, n| {
        inflight(&paths, via, "fail", "{}", n)
    });
    let ratio_fail = ratio_line(
        &format!(
            "throughput, every result a failure that gets rewritten, 32 in flight ({} calls in {} rounds, median round)",
            s.fail_calls, s.rounds
        ),
        "calls/s",
        &vias,
        &fails,
    );

    let starts: Vec<R<f64>> = vias
        .iter()
        .map(|v| {
            if want("startup") {
                startup(&paths, *v, s.startups)
            } else {
                skipped()
            }
        })
        .collect();
    println!(
        "start-up, spawn to the answer to initialize (median of {})",
        s.startups
    );
    for (via, r) in vias.iter().zip(&starts) {
        println!("  {:8} {}", via.name(), show(r, |v| format!("{v:7.2} ms")));
    }
    println!();

    if let Some(r) = ratio32 {
        report.target(
            r >= 0.95,
            &format!("throughput, 32 in flight >= 0.95x the relay's: {r:.2}x"),
        );
    }
    if let Some(r) = ratio_mb1 {
        report.target(
            r >= 0.95,
            &format!("throughput, 1 MB results >= 0.95x the relay's: {r:.2}x"),
        );
    }
    if let Some(r) = ratio_mb50 {
        println!("(no target) throughput, 50 MB results: {r:.2}x the relay's");
    }
    if let Some(r) = ratio_fail {
        report.target(
            r >= 0.8,
            &format!("throughput, every result rewritten >= 0.8x the relay's: {r:.2}x"),
        );
    }
    println!();

    if want("classify") {
        classification_section(&s, &mut report);
    }

    println!(
        "memory of the proxy process (VmRSS / VmHWM from /proc/PID/status); growth over N = {} and 10 N calls (a tenth of them failures)",
        s.growth_n
    );
    let mut errnorm_mem = None;
    // The side-by-side proxy is left out here: at its pace the long run alone takes a minute.
    // With time limits too: every call then has a deadline, which must go with its answer.
    let mut mem_vias = vec![Via::Relay, Via::Errnorm, Via::ErrnormTimed];
    if paths.baseline.is_some() {
        mem_vias.push(Via::Baseline);
    }
    let mut timed_growth = None;
    for via in mem_vias.iter().filter(|_| want("memory")) {
        match memory(&paths, *via, s.growth_n) {
            Ok((idle, n, n10)) => {
                println!(
                    "  {:24} idle {:6.1} MB   after N {:6.1} MB   after 10 N {:6.1} MB",
                    via.name(),
                    idle as f64 / 1024.0,
                    n as f64 / 1024.0,
                    n10 as f64 / 1024.0
                );
                match via {
                    Via::Errnorm => errnorm_mem = Some((idle, n, n10)),
                    Via::ErrnormTimed => timed_growth = Some(n10 as i64 - n as i64),
                    _ => {}
                }
            }
            Err(e) => println!("  {:24} n/a ({e})", via.name()),
        }
    }
    if let Some(hwm) = hwm_50 {
        println!(
            "  errnorm  peak (VmHWM) over the 50 MB run: {:.1} MB (largest message {:.1} MB)",
            hwm as f64 / 1024.0,
            answer_50 as f64 / 1048576.0
        );
    }
    if let Some((idle, n, n10)) = errnorm_mem {
        report.target(
            idle < 10 * 1024,
            &format!(
                "idle RSS of the proxy < 10 MB: {:.1} MB",
                idle as f64 / 1024.0
            ),
        );
        let growth = (n10 as i64 - n as i64).max(timed_growth.unwrap_or(i64::MIN));
        report.target(
            growth <= 1024,
            &format!(
                "no RSS growth over a long run, with or without time limits \
                 (after 10 N - after N <= 1 MB): {:+.2} MB",
                growth as f64 / 1024.0
            ),
        );
    }
    if let Some(hwm) = hwm_50 {
        let limit = 3 * answer_50 as u64 / 1024 + 10 * 1024;
        report.target(
            hwm <= limit,
            &format!(
                "peak RSS <= 3x the largest message + 10 MB ({:.1} MB): {:.1} MB",
                limit as f64 / 1024.0,
                hwm as f64 / 1024.0
            ),
        );
    }
    println!();
    println!(
        "{} passed, {} failed (targets); bench took {:.0} s",
        report.passes,
        report.fails,
        bench_start.elapsed().as_secs_f64()
    );
}
