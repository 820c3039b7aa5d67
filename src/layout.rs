//! Keeps the map in `lib.rs` true: reads the crate's own sources and fails when a core module
//! imports from the shell, when the top-level modules (or the files of one module) import each
//! other in a circle, when a module is on neither list, or when `libc` or `unsafe` shows up
//! outside `sys`.
//!
//! Imports are read from the text (`crate::x` paths, `use crate::{x, y::z}` groups and
//! `super::x` between the files of a module), comments and test code left out: a test may
//! reach wherever it needs to.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The pure core: values in, values out; no I/O. Keep in step with `lib.rs`.
const CORE: &[&str] = &[
    "taxonomy",
    "diagnostic",
    "template",
    "sync",
    "rules",
    "model",
    "classify",
    "check",
    "coverage",
    "report",
    "render",
    "rewrite",
    "wire",
    "recovery",
    "redact",
    "session",
    "config",
];

/// The I/O shell. Keep in step with `lib.rs`.
const SHELL: &[&str] = &[
    "sys",
    "files",
    "exit",
    "tell",
    "relay",
    "upstream",
    "reload",
    "unmatched",
    "log_writer",
    "cli",
    "commands",
    "install",
    "demo",
    "doctor",
    "manual",
];

/// Modules that exist only for tests.
const TEST_ONLY: &[&str] = &["layout"];

/// One source file: its path under `src/` and its code (comments and tests left out).
struct Source {
    path: PathBuf,
    code: String,
}

fn sources() -> Vec<Source> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    let mut dirs = vec![root.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("src/ is readable") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).expect("a source file");
                let path = path.strip_prefix(&root).expect("under src/").to_owned();
                files.push(Source {
                    code: code_of(&text),
                    path,
                });
            }
        }
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    files
}

/// `text` without its comments and without its test module (by convention, the file's last
/// item: `#[cfg(test)] mod tests`); a file of tests (`tests.rs`) has no code.
fn code_of(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => &text[..at],
        None => text,
    };
    text.lines()
        .map(|line| match line.find("//") {
            // Not a `//` inside a string: good enough for this crate, whose imports are plain.
            Some(at) if !line[..at].contains('"') => &line[..at],
            _ => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The top-level module a file under `src/` belongs to (`relay/pumps.rs` -> `relay`).
fn module_of(path: &Path) -> String {
    let first = path.components().next().expect("a path");
    let first = first.as_os_str().to_string_lossy();
    first.strip_suffix(".rs").unwrap_or(&first).to_owned()
}

/// The names that follow `prefix` in `code` (`crate::` -> every `crate::x` and each `x` of a
/// `crate::{x, y::z}` group).
fn imported(code: &str, prefix: &str) -> BTreeSet<String> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut names = BTreeSet::new();
    for (at, _) in code.match_indices(prefix) {
        // `super::super::x` is the grandparent's: not a sibling.
        if prefix == "super::" && code[at + prefix.len()..].starts_with("super::") {
            continue;
        }
        if at > 0 && code[..at].ends_with("super::") {
            continue;
        }
        let rest = &code[at + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            names.extend(group.split(',').map(|part| ident(part.trim())));
        } else {
            names.insert(ident(rest));
        }
    }
    names.retain(|n| !n.is_empty() && n != "self");
    names
}

/// The edges between the top-level modules: who imports whom, and in which file.
fn module_graph(files: &[Source]) -> BTreeMap<String, BTreeMap<String, PathBuf>> {
    let mut graph: BTreeMap<String, BTreeMap<String, PathBuf>> = BTreeMap::new();
    for file in files {
        let from = module_of(&file.path);
        if from == "lib" || from == "main" || file.path.ends_with("tests.rs") {
            continue;
        }
        for to in imported(&file.code, "crate::") {
            if to != from {
                graph
                    .entry(from.clone())
                    .or_default()
                    .entry(to)
                    .or_insert_with(|| file.path.clone());
            }
        }
    }
    graph
}

/// The edges between the files of one module (`super::x` where `x` is a sibling file).
fn sibling_graph(files: &[Source], dir: &Path) -> BTreeMap<String, BTreeMap<String, PathBuf>> {
    let siblings: BTreeSet<String> = files
        .iter()
        .filter(|f| f.path.parent() == Some(dir))
        .filter_map(|f| Some(f.path.file_stem()?.to_string_lossy().into_owned()))
        .collect();
    let mut graph: BTreeMap<String, BTreeMap<String, PathBuf>> = BTreeMap::new();
    for file in files.iter().filter(|f| f.path.parent() == Some(dir)) {
        let from = file
            .path
            .file_stem()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if from == "tests" {
            continue;
        }
        for to in imported(&file.code, "super::") {
            if to != from && siblings.contains(&to) {
                graph
                    .entry(from.clone())
                    .or_default()
                    .entry(to)
                    .or_insert_with(|| file.path.clone());
            }
        }
    }
    graph
}

/// A circle in `graph`, as the path around it, if there is one.
fn circle<V>(graph: &BTreeMap<String, BTreeMap<String, V>>) -> Option<Vec<String>> {
    fn visit<V>(
        node: &str,
        graph: &BTreeMap<String, BTreeMap<String, V>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut around = path[at..].to_vec();
            around.push(node.to_owned());
            return Some(around);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for next in graph.get(node).into_iter().flat_map(BTreeMap::keys) {
            if let Some(found) = visit(next, graph, path, done) {
                return Some(found);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

#[test]
fn every_module_is_core_or_shell() {
    let modules: BTreeSet<String> = sources()
        .iter()
        .map(|f| module_of(&f.path))
        .filter(|m| m != "lib" && m != "main")
        .collect();
    for module in &modules {
        let listed = [CORE, SHELL, TEST_ONLY]
            .iter()
            .filter(|list| list.contains(&module.as_str()))
            .count();
        assert_eq!(
            listed, 1,
            "src/layout.rs: put `{module}` on exactly one list (CORE or SHELL), and in lib.rs"
        );
    }
}

#[test]
fn the_core_never_imports_the_shell() {
    let graph = module_graph(&sources());
    for (from, imports) in graph.iter().filter(|(m, _)| CORE.contains(&m.as_str())) {
        for (to, file) in imports {
            assert!(
                !SHELL.contains(&to.as_str()),
                "{}: the core module `{from}` imports `{to}`, of the shell",
                file.display()
            );
        }
    }
}

#[test]
fn no_top_level_modules_import_each_other_in_a_circle() {
    let graph = module_graph(&sources());
    if let Some(around) = circle(&graph) {
        let files: Vec<String> = around
            .windows(2)
            .map(|w| format!("{} -> {} in {}", w[0], w[1], graph[&w[0]][&w[1]].display()))
            .collect();
        panic!("a circle: {}", files.join("; "));
    }
}

#[test]
fn no_files_of_one_module_import_each_other_in_a_circle() {
    let files = sources();
    let dirs: BTreeSet<PathBuf> = files
        .iter()
        .filter_map(|f| f.path.parent())
        .filter(|d| !d.as_os_str().is_empty())
        .map(Path::to_owned)
        .collect();
    for dir in dirs {
        let graph = sibling_graph(&files, &dir);
        assert_eq!(
            circle(&graph),
            None,
            "a circle between the files of {dir:?}"
        );
    }
}

#[test]
fn only_sys_calls_the_system() {
    for file in sources() {
        if module_of(&file.path) == "sys" || module_of(&file.path) == "layout" {
            continue;
        }
        for word in ["libc::", "unsafe "] {
            assert!(
                !file.code.contains(word),
                "{}: `{word}` outside src/sys.rs",
                file.path.display()
            );
        }
    }
}

#[test]
fn the_checks_find_what_they_look_for() {
    // The reader: paths, groups, siblings; comments and tests left out.
    let code = code_of(
        "use crate::a::X;\nuse crate::{b, c::Y};\n// crate::d\nfn f() { crate::e::g() }\n\
         #[cfg(test)]\nmod tests {\n    use crate::h;\n}\n",
    );
    let found: Vec<String> = imported(&code, "crate::").into_iter().collect();
    assert_eq!(found, ["a", "b", "c", "e"]);
    let found: Vec<String> = imported("use super::x::Y;\nuse super::super::z;", "super::")
        .into_iter()
        .collect();
    assert_eq!(found, ["x"]);
    // The circle finder.
    let edges = |pairs: &[(&str, &str)]| {
        let mut graph: BTreeMap<String, BTreeMap<String, ()>> = BTreeMap::new();
        for (from, to) in pairs {
            graph
                .entry((*from).to_owned())
                .or_default()
                .insert((*to).to_owned(), ());
        }
        graph
    };
    assert_eq!(circle(&edges(&[("a", "b"), ("b", "c"), ("a", "c")])), None);
    assert_eq!(
        circle(&edges(&[("a", "b"), ("b", "c"), ("c", "a")])),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
}
