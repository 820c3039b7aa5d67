//! The server's stderr, copied to the proxy's own with secrets masked: both go to the client's
//! log (or its terminal), where a database URL the server prints on start would otherwise sit
//! in clear beside the proxy's masked lines.
//!
//! Line by line, and at most [`PIECE`] at a time, so a line that never ends is copied in
//! pieces; lines with no secret go out as their bytes came. Copying never stops before the
//! server closes stderr, even when the proxy's own stderr is gone: a server blocked on a full
//! stderr pipe would hang.
//!
//! With a log file (`--log-file`, for clients that discard stderr) each line also goes to the
//! proxy's log, masked alike, as an event of its own: the server's last words before a crash
//! are what that log is read for.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::OwnedFd;

use tokio::sync::oneshot;

use crate::redact::Redactor;

/// The target of the server's lines in the log file, which every log level lets through: the
/// file is where a client that discards stderr keeps them.
pub const SERVER_STDERR: &str = "server_stderr";

/// The most of a line held before it is copied on (a secret cut in two is not found).
const PIECE: u64 = 1 << 20;
/// The most of a private key's lines held together so that its pattern (BEGIN to END) sees
/// them all.
const KEY_BLOCK: usize = 64 << 10;

/// Copies `from` to our stderr until it closes, then says so through `done`; also to the log
/// when it goes to a file (`to_log`).
pub(super) fn copy(from: OwnedFd, redactor: Redactor, to_log: bool, done: oneshot::Sender<()>) {
    let log =
        |line: &str| tracing::info!(target: SERVER_STDERR, stream = "server stderr", "{line}");
    copy_lines(
        BufReader::new(File::from(from)),
        super::PatientStderr,
        &redactor,
        to_log.then_some(&log),
    );
    let _ = done.send(());
}

/// Copies line by line, each also given to `log` (masked, without its line end) if any.
fn copy_lines(
    mut from: impl BufRead,
    mut to: impl Write,
    redactor: &Redactor,
    log: Option<&dyn Fn(&str)>,
) {
    let mut line = Vec::new();
    loop {
        line.clear();
        match (&mut from).take(PIECE).read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        // A private key spans lines: they are masked together, BEGIN to END.
        if contains(&line, b"-----BEGIN ") && contains(&line, b"PRIVATE KEY") {
            while !contains(&line, b"-----END ") && line.len() < KEY_BLOCK {
                match (&mut from).take(PIECE).read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
            }
        }
        let text = String::from_utf8_lossy(&line);
        // A coloured line is judged without its colours (`Redactor::text`).
        let masked = redactor
            .finds_any(&text)
            .then(|| redactor.text(&text).into_owned());
        let written = match &masked {
            Some(masked) => to.write_all(masked.as_bytes()),
            None => to.write_all(&line),
        };
        if let Some(log) = log {
            let shown = masked.as_deref().unwrap_or(&text);
            log(shown.trim_end_matches(['\n', '\r']));
        }
        // Nowhere to write any more: the server's lines still have to be taken.
        let _ = written.and_then(|()| to.flush());
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(haystack, needle).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_masked_and_every_other_byte_is_kept() {
        let input: &[u8] = b"starting \x1b[32mok\x1b[0m\nconnecting to postgres://app:pa55w0rd@db/x\n\xff raw\nno newline at the end";
        let mut out = Vec::new();
        copy_lines(input, &mut out, &Redactor::defaults(), None);
        assert_eq!(
            out,
            b"starting \x1b[32mok\x1b[0m\nconnecting to postgres://app:[REDACTED]@db/x\n\xff raw\nno newline at the end"
        );
    }

    #[test]
    fn a_secret_split_by_colour_codes_is_masked_and_other_colours_kept() {
        let input: &[u8] =
            b"\x1b[2mapi_key\x1b[0m=\x1b[35mAnsiKey456y\x1b[0m\n  password: \x1b[32m'AnsiPw123x'\x1b[39m,\n\x1b[32mready\x1b[0m on \x1b[1;4mport\x1b[0m\n";
        let mut out = Vec::new();
        copy_lines(input, &mut out, &Redactor::defaults(), None);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "api_key=[REDACTED]\n  password: '[REDACTED]',\n\x1b[32mready\x1b[0m on \x1b[1;4mport\x1b[0m\n"
        );
    }

    #[test]
    fn a_private_key_over_several_lines_is_masked_whole() {
        let input: &[u8] = b"loaded key\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\nx5Qz9abc\n-----END RSA PRIVATE KEY-----\nready\n";
        let mut out = Vec::new();
        copy_lines(input, &mut out, &Redactor::defaults(), None);
        assert_eq!(out, b"loaded key\n[REDACTED]\nready\n");
    }

    #[test]
    fn a_line_that_never_ends_is_copied_in_pieces() {
        let input = vec![b'a'; 3 * PIECE as usize + 5];
        let mut out = Vec::new();
        copy_lines(&input[..], &mut out, &Redactor::defaults(), None);
        assert_eq!(out, input);
    }

    #[test]
    fn with_a_log_each_line_is_logged_masked_without_its_line_end() {
        let input: &[u8] = b"starting\r\nDATABASE_URL=postgres://app:pa55w0rd@db/x\nlast words";
        let logged = std::cell::RefCell::new(Vec::new());
        let log = |line: &str| logged.borrow_mut().push(line.to_owned());
        let mut out = Vec::new();
        copy_lines(input, &mut out, &Redactor::defaults(), Some(&log));
        assert_eq!(
            logged.into_inner(),
            [
                "starting",
                "DATABASE_URL=postgres://app:[REDACTED]@db/x",
                "last words"
            ]
        );
        assert!(!String::from_utf8_lossy(&out).contains("pa55w0rd"));
    }
}
