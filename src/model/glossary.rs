//! The glossary: the words failures are written in, in many languages, each mapped to one
//! English concept (`password`, `timeout`, `quota`, ...). Pure: a text in, its concepts out.
//!
//! The model learns mostly from English texts. A concept found in a text is one more feature
//! (`g:password`), learned from every text that says it in any language, so a failure in a
//! language the corpus barely has ("Geçersiz kullanıcı adı/şifre") still weighs like its
//! English reading.
//!
//! `glossary.tsv` holds one line per concept and language: `concept<TAB>language<TAB>forms`,
//! forms separated by `|`. A form matches where a word starts and may run into the word
//! (`inválid` matches "inválido" and "inválidas"); one that ends with a space, or is one word of
//! four letters or fewer, must end the word there. In scripts written without spaces (Chinese,
//! Japanese, Thai) and in Korean a form matches anywhere. Texts and forms are compared as
//! [`normalized`] gives them.

use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, MatchKind};

use super::is_cjk;

/// The glossary as shipped.
pub const SOURCE: &str = include_str!("glossary.tsv");

/// The concepts and the matcher of their forms: pattern `i` is a form of `concepts[owner[i]]`.
struct Glossary {
    concepts: Vec<&'static str>,
    owner: Vec<usize>,
    matcher: AhoCorasick,
}

/// The glossary's lines as (concept, language, forms), comments and blank lines left out.
fn entries() -> impl Iterator<Item = (&'static str, &'static str, &'static str)> {
    SOURCE
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|line| match line.split('\t').collect::<Vec<_>>()[..] {
            [concept, language, forms] => (concept, language, forms),
            _ => panic!("glossary.tsv: {line:?} is not concept, language and forms"),
        })
}

static GLOSSARY: LazyLock<Glossary> = LazyLock::new(|| {
    let mut concepts: Vec<&'static str> = Vec::new();
    let mut owner = Vec::new();
    let mut patterns = Vec::new();
    for (concept, _language, forms) in entries() {
        let id = match concepts.iter().position(|c| *c == concept) {
            Some(id) => id,
            None => {
                concepts.push(concept);
                concepts.len() - 1
            }
        };
        for form in forms.split('|') {
            let words = normalized(form);
            let words = words.trim();
            if words.is_empty() {
                continue;
            }
            let anywhere = words.chars().next().is_some_and(written_without_spaces);
            let start = if anywhere { "" } else { " " };
            // A short stem of one language is a word of another ("reti", Italian for
            // networks, starts "reticulation"): four letters or fewer match whole words only.
            let whole = form.ends_with(' ') || (!words.contains(' ') && words.chars().count() <= 4);
            let end = if whole { " " } else { "" };
            patterns.push(format!("{start}{words}{end}"));
            owner.push(id);
        }
    }
    // A contiguous NFA: the smallest of the crate's automata (1.5 MB; a DFA took 51 MB), and as
    // fast as a DFA on the first KiB of a failure the model reads.
    let matcher = AhoCorasickBuilder::new()
        .kind(Some(AhoCorasickKind::ContiguousNFA))
        .match_kind(MatchKind::Standard)
        .build(&patterns)
        .expect("the glossary's forms build an automaton");
    Glossary {
        concepts,
        owner,
        matcher,
    }
});

/// Whether a script puts no spaces between words (or, for Korean, glues particles to them).
fn written_without_spaces(c: char) -> bool {
    is_cjk(c) || ('\u{0E00}'..='\u{0E7F}').contains(&c)
}

/// Whether a character belongs to a word: a letter or digit of any script, or a mark that
/// Unicode does not count as a letter but that sits inside Indic words (the virama that joins
/// consonants, the nukta), which would otherwise cut "ত্রুটি" or "கோப்பு" into pieces.
pub fn is_word_char(c: char) -> bool {
    c.is_alphanumeric()
        || (('\u{0900}'..='\u{0DFF}').contains(&c) && !matches!(c, '\u{0964}' | '\u{0965}'))
}

/// A text as the glossary reads it: lowercase, every run of characters that are not word
/// characters ([`is_word_char`]) one space, and a space at either end, so that a word's start
/// is " word".
pub fn normalized(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push(' ');
    let mut space = true;
    let mut push = |out: &mut String, c: char| {
        if is_word_char(c) {
            out.push(c);
            space = false;
        } else if !space {
            out.push(' ');
            space = true;
        }
    };
    for c in text.chars() {
        if c.is_ascii() {
            // Most failures are ASCII: the short way, without Unicode's case tables.
            push(&mut out, c.to_ascii_lowercase());
        } else if c == 'İ' {
            // Turkish's dotted capital I lowercases to "i" and a combining dot, which would
            // split the word.
            push(&mut out, 'i');
        } else {
            c.to_lowercase().for_each(|c| push(&mut out, c));
        }
    }
    if !space {
        out.push(' ');
    }
    out
}

/// The concepts a text says, each once, in the glossary's order.
pub fn concepts(text: &str) -> Vec<&'static str> {
    let glossary = &*GLOSSARY;
    let mut found = vec![false; glossary.concepts.len()];
    for m in glossary.matcher.find_overlapping_iter(&normalized(text)) {
        found[glossary.owner[m.pattern().as_usize()]] = true;
    }
    glossary
        .concepts
        .iter()
        .zip(found)
        .filter_map(|(c, f)| f.then_some(*c))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizing_keeps_indic_words_whole() {
        assert_eq!(normalized("ত্রুটি: কোটা"), " ত্রুটি কোটা ");
        assert_eq!(normalized("கோப்பு।"), " கோப்பு ");
        assert_eq!(normalized("त्रुटि॥ fichier"), " त्रुटि fichier ");
    }

    #[test]
    fn normalizing_lowercases_and_turns_punctuation_into_single_spaces() {
        assert_eq!(normalized("N'existe PAS!!"), " n existe pas ");
        assert_eq!(normalized("GEÇERSİZ"), " geçersiz ");
        assert_eq!(normalized(""), " ");
    }

    #[test]
    fn a_failure_in_another_language_reads_as_its_english_concepts() {
        let found = concepts("Geçersiz kullanıcı adı/şifre");
        assert!(found.contains(&"invalid"), "{found:?}");
        assert!(found.contains(&"password"), "{found:?}");
        let found = concepts("Contraseña incorrecta");
        assert!(
            found.contains(&"password") && found.contains(&"incorrect"),
            "{found:?}"
        );
        let found = concepts("连接超时，请稍后重试");
        assert!(
            found.contains(&"timeout") && found.contains(&"retry"),
            "{found:?}"
        );
    }

    #[test]
    fn forms_match_where_words_start_and_whole_words_only_whole() {
        assert!(concepts("Parameter invalid").contains(&"invalid"));
        // "invalid" must start a word, and "key " must end one.
        assert!(!concepts("reinvalidated").contains(&"invalid"));
        assert!(concepts("the key is wrong").contains(&"key"));
        assert!(!concepts("keyboard layout").contains(&"key"));
        // A short stem of another language does not read into an English word.
        assert!(!concepts("Spline #77: reticulation returned 0x2a").contains(&"network"));
    }

    #[test]
    fn every_line_of_the_glossary_is_a_concept_a_language_and_forms() {
        for (concept, language, forms) in entries() {
            assert!(
                concept.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'),
                "{concept:?}"
            );
            assert!(
                forms.split('|').all(|f| !f.trim().is_empty()),
                "{concept} {language}: {forms:?}"
            );
        }
        assert!(!GLOSSARY.concepts.is_empty());
    }
}
