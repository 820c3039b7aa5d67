//! Trains the fallback classifier (`src/model.rs`) on the development corpus
//! (`tests/corpus/*.jsonl`) and writes `src/model/weights.txt`.
//!
//! ```text
//! cargo run --release --example train-model            # retrain, write the model
//! cargo run --release --example train-model -- --lofo  # leave-one-family-out figures
//! cargo run --release --example train-model -- --lofo --guesses FILE  # and each guess, as JSONL
//! ```
//!
//! The holdout (`tests/corpus/holdout/`) and the recorded results are never read.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use mcp_errnorm::classify::{classify, MODEL_MIN_CONFIDENCE};
use mcp_errnorm::model::{self, corpus, Guess, TRAINING};
use mcp_errnorm::rules::{Failure, RuleSet};
use mcp_errnorm::taxonomy::Category;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cases = development_cases(&root.join("tests/corpus"));
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--lofo") {
        let guesses = leave_one_family_out(&cases);
        if let Some(at) = args.iter().position(|a| a == "--guesses") {
            let path = args.get(at + 1).expect("--guesses takes a file name");
            write_guesses(Path::new(path), &cases, &guesses);
        }
        return;
    }
    let model = model::train(&model::samples(&cases), TRAINING);
    let out = root.join("src/model/weights.txt");
    std::fs::write(&out, model.to_text()).expect("write the model");
    eprintln!(
        "trained on {} cases: {} features, written to {}",
        cases.len(),
        model.len(),
        out.display()
    );
}

/// The development corpus: every `*.jsonl` directly in `dir` but the successes, by file name.
fn development_cases(dir: &Path) -> Vec<corpus::Case> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("read the corpus folder")
        .map(|e| e.expect("a corpus entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .filter(|p| !p.ends_with("successes.jsonl"))
        .collect();
    files.sort();
    let mut cases = Vec::new();
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).expect("read a corpus file");
        cases.extend(corpus::parse(&name, &text).unwrap_or_else(|e| panic!("{e}")));
    }
    cases
}

/// For each family: a model trained on every other family guesses all of this one's cases, as
/// if no rule had matched them. Prints agreement and wrong retries by confidence threshold, and
/// returns the guesses, one per case.
fn leave_one_family_out(cases: &[corpus::Case]) -> Vec<Guess> {
    let mut families: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, c) in cases.iter().enumerate() {
        families.entry(c.family()).or_default().push(i);
    }
    // One model per family, on every core: each is trained alone and deterministically, so the
    // guesses do not depend on which thread made them.
    let families_in_order: Vec<&Vec<usize>> = families.values().collect();
    let next = AtomicUsize::new(0);
    let guesses = Mutex::new(vec![None; cases.len()]);
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                while let Some(members) =
                    families_in_order.get(next.fetch_add(1, Ordering::Relaxed))
                {
                    let rest: Vec<corpus::Case> = cases
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| !members.contains(i))
                        .map(|(_, c)| c.clone())
                        .collect();
                    let model = model::train(&model::samples(&rest), TRAINING);
                    let family: Vec<(usize, Guess)> = members
                        .iter()
                        .map(|&i| (i, model.guess(&cases[i].text)))
                        .collect();
                    let mut guesses = guesses.lock().expect("no thread panics holding it");
                    for (i, guess) in family {
                        guesses[i] = Some(guess);
                    }
                }
            });
        }
    });
    let guesses = guesses.into_inner().expect("no thread panicked");
    let guesses: Vec<Guess> = guesses.into_iter().map(Option::unwrap).collect();
    println!(
        "leave-one-family-out: {} cases, {} families (the model alone, as if no rule matched)",
        cases.len(),
        families.len()
    );
    println!("threshold  covered  category-right  wrongly-retryable-if-retried-at-threshold");
    let all: Vec<usize> = (0..cases.len()).collect();
    for t in [0.0f32, 0.4, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 0.98] {
        let (covered, right) = decided_and_right(cases, &guesses, &all, t);
        let wrong_retry = all
            .iter()
            .filter(|&&i| guesses[i].confidence >= t)
            .filter(|&&i| guesses[i].category == Category::Transient && !cases[i].retryable)
            .count();
        println!("{t:>9.2}  {covered:>6.1}%  {right:>13.1}%  {wrong_retry:>5}");
    }
    // Texts in scripts written without spaces (Chinese, Japanese) and in Korean: what the
    // model reads of them, at the confidence it starts deciding from.
    let cjk: Vec<usize> = (0..cases.len())
        .filter(|&i| cases[i].text.chars().any(model::is_cjk))
        .collect();
    let (decided, right) = decided_and_right(cases, &guesses, &cjk, MODEL_MIN_CONFIDENCE);
    println!(
        "the {} cases in Chinese, Japanese or Korean: {decided:.1}% decided from \
         {MODEL_MIN_CONFIDENCE}, {right:.1}% of those rightly",
        cjk.len(),
    );
    // The model only ever sees what no rule decides: the retry question is asked of those.
    let rules = RuleSet::defaults().with_fallback_model(false);
    let undecided: Vec<usize> = (0..cases.len())
        .filter(|&i| {
            let c = &cases[i];
            let failure = Failure {
                text: &c.text,
                tool: &c.tool,
                source: c.source,
                rpc_code: c.rpc_code,
            };
            classify(&rules, failure).rule_id.is_none()
        })
        .collect();
    // What `MODEL_MIN_CONFIDENCE` trades: of the texts only the model reads, how many it
    // decides and how many of those rightly.
    println!(
        "of these, the {} cases no embedded rule decides, guessed from this confidence:",
        undecided.len()
    );
    println!("threshold  covered  category-right");
    for t in [0.4f32, 0.5, 0.6, 0.7, 0.8, 0.9] {
        let (covered, right) = decided_and_right(cases, &guesses, &undecided, t);
        println!("{t:>9.2}  {covered:>6.1}%  {right:>13.1}%");
    }
    println!(
        "of these, the {} cases no embedded rule decides, if transient guesses were retried:",
        undecided.len()
    );
    println!("threshold  retried  rightly  wrongly");
    for t in [0.7f32, 0.8, 0.9, 0.95, 0.98] {
        let retried: Vec<usize> = undecided
            .iter()
            .copied()
            .filter(|&i| guesses[i].category == Category::Transient && guesses[i].confidence >= t)
            .collect();
        let rightly = retried.iter().filter(|&&i| cases[i].retryable).count();
        println!(
            "{t:>9.2}  {:>7}  {rightly:>7}  {:>7}",
            retried.len(),
            retried.len() - rightly
        );
    }
    // What a retry threshold would have to rule out: the confident transient guesses that are
    // not retryable.
    println!("transient guesses at 0.9 or more that are not retryable:");
    for (i, g) in guesses.iter().enumerate() {
        if g.category == Category::Transient && g.confidence >= 0.9 && !cases[i].retryable {
            let text: String = cases[i].text.chars().take(140).collect();
            println!("  {:.3} [{}] {text:?}", g.confidence, cases[i].family());
        }
    }
    guesses
}

/// Writes each case's leave-one-family-out guess as a line of JSON, for studying thresholds
/// and retry evidence outside this program.
fn write_guesses(path: &Path, cases: &[corpus::Case], guesses: &[Guess]) {
    let lines: Vec<String> = cases
        .iter()
        .zip(guesses)
        .map(|(c, g)| {
            serde_json::json!({
                "family": c.family(),
                "text": c.text,
                "guess": g.category.as_str(),
                "confidence": g.confidence,
                "category": c.category.as_str(),
                "also": c.also.map(Category::as_str),
                "retryable": c.retryable,
            })
            .to_string()
        })
        .collect();
    std::fs::write(path, lines.join("\n") + "\n").expect("write the guesses");
}

/// Of the cases `among`, the share the model decides from `threshold` on and the share of
/// those it decides rightly, in percent.
fn decided_and_right(
    cases: &[corpus::Case],
    guesses: &[Guess],
    among: &[usize],
    threshold: f32,
) -> (f64, f64) {
    let decided: Vec<usize> = among
        .iter()
        .copied()
        .filter(|&i| guesses[i].confidence >= threshold)
        .collect();
    let right = decided
        .iter()
        .filter(|&&i| cases[i].accepts(guesses[i].category))
        .count();
    (
        100.0 * decided.len() as f64 / among.len().max(1) as f64,
        100.0 * right as f64 / decided.len().max(1) as f64,
    )
}
