//! A unified diff of an edit, for `--dry-run`. The edits say where the text changed, so only
//! those lines are compared (client configs such as `~/.claude.json` can be large).

use std::ops::Range;

use super::edit::Edit;

const CONTEXT: usize = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Same,
    Del,
    Add,
}

/// The unified diff turning `old` into the result of `edits` (sorted, non-overlapping), with
/// `label` in the `---`/`+++` headers. Empty when nothing changes.
// Long: one pass building the hunks, their context and headers, as `diff -u` prints them.
pub fn unified(label: &str, old: &str, edits: &[Edit]) -> String {
    let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
    let starts: Vec<usize> = std::iter::once(0)
        .chain(
            old.match_indices('\n')
                .map(|(i, _)| i + 1)
                .filter(|&i| i < old.len()),
        )
        .collect();
    let line_of = |pos: usize| starts.partition_point(|&s| s <= pos).saturating_sub(1);
    let line_start = |line: usize| starts.get(line).copied().unwrap_or(old.len());

    // Regions of whole lines touched by edits (edits on adjacent lines share one, so that a
    // hunk reads as all its old lines, then all its new ones), with their new text.
    let mut regions: Vec<(Range<usize>, String)> = Vec::new();
    let mut i = 0;
    while i < edits.len() {
        let lo = line_of(edits[i].range.start);
        let mut hi = line_of(edits[i].range.end.max(edits[i].range.start + 1) - 1) + 1;
        let mut j = i + 1;
        while j < edits.len() && line_of(edits[j].range.start) <= hi {
            hi = hi.max(line_of(edits[j].range.end.max(edits[j].range.start + 1) - 1) + 1);
            j += 1;
        }
        let mut text = String::new();
        let mut at = line_start(lo);
        for e in &edits[i..j] {
            text.push_str(&old[at..e.range.start]);
            text.push_str(&e.text);
            at = e.range.end;
        }
        text.push_str(&old[at..line_start(hi).max(at)]);
        regions.push((lo..hi, text));
        i = j;
    }

    // The whole script: unchanged lines between regions, a line diff inside each.
    let mut script: Vec<(Op, String)> = Vec::new();
    let mut at = 0;
    for (lines, text) in &regions {
        script.extend(
            old_lines[at..lines.start]
                .iter()
                .map(|l| (Op::Same, l.to_string())),
        );
        let new: Vec<&str> = text.split_inclusive('\n').collect();
        script.extend(line_diff(&old_lines[lines.clone()], &new));
        at = lines.end;
    }
    script.extend(old_lines[at..].iter().map(|l| (Op::Same, l.to_string())));
    if script.iter().all(|(op, _)| *op == Op::Same) {
        return String::new();
    }

    let mut out = format!("--- {label}\n+++ {label}\n");
    let changed: Vec<usize> = (0..script.len())
        .filter(|&k| script[k].0 != Op::Same)
        .collect();
    let mut k = 0;
    while k < changed.len() {
        let first = changed[k];
        let mut last = first;
        while k + 1 < changed.len() && changed[k + 1] <= last + 2 * CONTEXT + 1 {
            k += 1;
            last = changed[k];
        }
        k += 1;
        let from = first.saturating_sub(CONTEXT);
        let to = (last + CONTEXT + 1).min(script.len());
        let (mut old_no, mut new_no) = (1, 1);
        for (op, _) in &script[..from] {
            match op {
                Op::Same => (old_no, new_no) = (old_no + 1, new_no + 1),
                Op::Del => old_no += 1,
                Op::Add => new_no += 1,
            }
        }
        let hunk = &script[from..to];
        let old_len = hunk.iter().filter(|(op, _)| *op != Op::Add).count();
        let new_len = hunk.iter().filter(|(op, _)| *op != Op::Del).count();
        out.push_str(&format!(
            "@@ -{},{old_len} +{},{new_len} @@\n",
            if old_len == 0 { old_no - 1 } else { old_no },
            if new_len == 0 { new_no - 1 } else { new_no },
        ));
        for (op, line) in hunk {
            out.push(match op {
                Op::Same => ' ',
                Op::Del => '-',
                Op::Add => '+',
            });
            out.push_str(line.strip_suffix('\n').unwrap_or(line));
            out.push('\n');
            if !line.ends_with('\n') {
                out.push_str("\\ No newline at end of file\n");
            }
        }
    }
    out
}

/// A shortest line diff of two small texts (longest common subsequence).
fn line_diff(old: &[&str], new: &[&str]) -> Vec<(Op, String)> {
    let (n, m) = (old.len(), new.len());
    if n * m > 4_000_000 {
        let mut out: Vec<_> = old.iter().map(|l| (Op::Del, l.to_string())).collect();
        out.extend(new.iter().map(|l| (Op::Add, l.to_string())));
        return out;
    }
    // lcs[i][j]: the LCS length of old[i..] and new[j..].
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if old[i] == new[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let mut out = Vec::with_capacity(n + m);
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        if i < n && j < m && old[i] == new[j] {
            out.push((Op::Same, old[i].to_string()));
            (i, j) = (i + 1, j + 1);
        } else if i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1]) {
            out.push((Op::Del, old[i].to_string()));
            i += 1;
        } else {
            out.push((Op::Add, new[j].to_string()));
            j += 1;
        }
    }
    out
}

/// A unified diff coloured as `git diff` colours it: the file headers bold, the hunk headers
/// cyan, removed lines red, added lines green; for a stream that strips the colour where
/// there must be none (`anstream`).
pub fn painted(diff: &str) -> String {
    use anstyle::{AnsiColor, Style};
    let color = |c: AnsiColor| Style::new().fg_color(Some(c.into()));
    let mut out = String::with_capacity(diff.len() + diff.len() / 4);
    for line in diff.split_inclusive('\n') {
        let style = if line.starts_with("--- ") || line.starts_with("+++ ") {
            Style::new().bold()
        } else if line.starts_with("@@") {
            color(AnsiColor::Cyan)
        } else if line.starts_with('-') {
            color(AnsiColor::Red)
        } else if line.starts_with('+') {
            color(AnsiColor::Green)
        } else {
            out.push_str(line);
            continue;
        };
        let body = line.strip_suffix('\n').unwrap_or(line);
        out.push_str(&format!("{style}{body}{style:#}"));
        if line.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn painted_colours_each_kind_of_line_and_keeps_the_text() {
        let diff =
            "--- a\n+++ a\n@@ -1,2 +1,2 @@\n same\n-old\n+new\n\\ No newline at end of file\n";
        let painted = super::painted(diff);
        assert!(painted.contains("\x1b[31m-old\x1b[0m\n"), "{painted:?}");
        assert!(painted.contains("\x1b[32m+new\x1b[0m\n"), "{painted:?}");
        assert!(
            painted.contains("\x1b[36m@@ -1,2 +1,2 @@\x1b[0m\n"),
            "{painted:?}"
        );
        assert!(painted.contains("\x1b[1m--- a\x1b[0m\n"), "{painted:?}");
        assert!(painted.contains("\n same\n"), "{painted:?}");
        // Without the colour, the very same diff.
        let mut plain = Vec::new();
        let mut stream = anstream::StripStream::new(&mut plain);
        std::io::Write::write_all(&mut stream, painted.as_bytes()).unwrap();
        assert_eq!(String::from_utf8(plain).unwrap(), diff);
    }

    use super::*;

    fn edit(old: &str, find: &str, text: &str) -> Edit {
        let start = old.find(find).unwrap();
        Edit {
            range: start..start + find.len(),
            text: text.into(),
        }
    }

    #[test]
    fn a_hunk_with_context() {
        let old = "1\n2\n3\n4\n5\nX\n7\n8\n9\n10\n11\n";
        let d = unified("f.json", old, &[edit(old, "X", "Y\nZ")]);
        assert_eq!(
            d,
            "--- f.json\n+++ f.json\n@@ -3,7 +3,8 @@\n 3\n 4\n 5\n-X\n+Y\n+Z\n 7\n 8\n 9\n"
        );
    }

    #[test]
    fn distant_changes_make_two_hunks_close_ones_one() {
        let old: String = (1..=30).map(|i| format!("{i}\n")).collect();
        let d = unified(
            "f",
            &old,
            &[edit(&old, "2\n", "two\n"), edit(&old, "25\n", "x\n")],
        );
        assert_eq!(d.matches("@@ -").count(), 2, "{d}");
        let d = unified(
            "f",
            &old,
            &[
                edit(&old, "\n5\n", "\nfive\n"),
                edit(&old, "\n9\n", "\nnine\n"),
            ],
        );
        assert_eq!(d.matches("@@ -").count(), 1, "{d}");
    }

    /// Applies a unified diff made by `unified` (test helper: trusts the hunk headers).
    fn patch(old: &str, diff: &str) -> String {
        let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
        let mut out = String::new();
        let mut at = 0;
        let mut lines = diff.lines().skip(2).peekable();
        while let Some(header) = lines.next() {
            let start: usize = header[4..].split(',').next().unwrap().parse().unwrap();
            let start = start.max(1) - 1;
            out.extend(old_lines[at..start].iter().copied());
            at = start;
            while let Some(l) = lines.next_if(|l| !l.starts_with("@@")) {
                match &l[..1] {
                    " " => {
                        out.push_str(old_lines[at]);
                        at += 1;
                    }
                    "-" => at += 1,
                    "+" => {
                        out.push_str(&l[1..]);
                        out.push('\n');
                    }
                    _ => {}
                }
            }
        }
        out.extend(old_lines[at..].iter().copied());
        out
    }

    #[test]
    fn the_diff_of_each_client_fixture_patches_to_the_result() {
        use super::super::edit::{apply, Action, Wrapper};
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/clients");
        let action = Action::Install(Wrapper {
            program: "/usr/local/bin/mcp-errnorm".into(),
            launcher: vec![],
            options: vec!["--config".into(), "/etc/mcp-errnorm.toml".into()],
            name: true,
        });
        let mut checked = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
            let Ok(out) = apply(&text, &action, &[]) else {
                continue;
            };
            let d = unified("f", &text, &out.edits);
            assert_eq!(patch(&text, &d), out.text, "{d}");
            let back = apply(&out.text, &Action::Uninstall, &[]).unwrap();
            assert_eq!(
                patch(&out.text, &unified("f", &out.text, &back.edits)),
                back.text
            );
            checked += 1;
        }
        assert!(checked >= 6);
    }

    #[test]
    fn insertion_at_end_without_newline() {
        let old = "a\nb";
        let d = unified(
            "f",
            old,
            &[Edit {
                range: 3..3,
                text: "c".into(),
            }],
        );
        assert_eq!(
            d,
            "--- f\n+++ f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+bc\n\\ No newline at end of file\n"
        );
        assert_eq!(unified("f", old, &[]), "");
    }
}
