//! The floor any stdio proxy pays, for the benchmark (`scripts/bench.sh`): spawn the command
//! given as arguments and copy bytes both ways, parsing nothing.
//!
//! Each direction is one thread doing `read` into a 64 KiB buffer then `write_all`, which is what
//! any proxy that looks at the bytes must at least do (a splice(2) relay would never bring them
//! into user space, so it is no floor for a proxy that reads messages). Exits with the child's
//! status when the child's stdout closes.

use std::io::{Read, Write};
use std::process::{Command, Stdio};

fn pump(mut from: impl Read, mut to: impl Write) {
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buffer) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        if to.write_all(&buffer[..n]).is_err() || to.flush().is_err() {
            return;
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args = match args.first().map(String::as_str) {
        Some("--") => &args[1..],
        _ => &args[..],
    };
    let Some((program, rest)) = args.split_first() else {
        eprintln!("usage: byte_relay [--] COMMAND [ARGS...]");
        std::process::exit(64);
    };
    let mut child = Command::new(program)
        .args(rest)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            eprintln!("byte_relay: cannot start {program}: {e}");
            std::process::exit(69);
        });
    let child_stdin = child.stdin.take().expect("piped");
    let child_stdout = child.stdout.take().expect("piped");
    // stdin -> child: when the client closes stdin, dropping the child's stdin closes it too.
    std::thread::spawn(move || pump(std::io::stdin(), child_stdin));
    pump(child_stdout, std::io::stdout());
    let status = child.wait().map(|s| s.code().unwrap_or(1)).unwrap_or(70);
    std::process::exit(status);
}
