#!/usr/bin/env python3
"""Checks a folder of newly gathered failure cases before they join the corpus.

    python3 scripts/check-cases.py FOLDER [FOLDER ...]

Each FOLDER holds one `<family>.jsonl` per family, one case per line, in the format of
docs/labelling.md. The check is what a gatherer runs until it says "no problems":

- every line is JSON with exactly the case keys, `source` "result" and `rpc_code` null;
- `family` is the file's name, the category one of the four, `also` another one or null;
- `retryable` is true exactly for a transient failure that is not NO_SPACE;
- a family has 8 to 12 cases, is not already in tests/corpus (development, holdout or the
  next holdout) and
  is in one folder only;
- no text is in tests/corpus already, or twice among the folders.

Several gatherers working at once each pass all the folders, so that two of them never take
the same family or text. It prints counts per folder and exits 1 when there is a problem.
"""

import collections
import json
import pathlib
import sys

KEYS = {"text", "tool", "source", "rpc_code", "category", "also", "code", "retryable", "family", "origin"}
CATEGORIES = ("transient", "validation", "business", "permission")
CORPUS = pathlib.Path(__file__).resolve().parent.parent / "tests" / "corpus"


def corpus_texts_and_families():
    texts, families = set(), set()
    for path in (p for part in ("", "holdout/", "next-holdout/") for p in CORPUS.glob(part + "*.jsonl")):
        families.add(path.stem.removeprefix("dev-").lower())
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                case = json.loads(line)
                texts.add(case.get("text"))
                families.add((case.get("family") or origin_name(case.get("origin", ""))).lower())
    return texts, families


def origin_name(origin):
    """The family of a case without one, as the corpus tests derive it: the origin up to its
    version or detail (`httpx@0.28.1` -> `httpx`, `psql (PostgreSQL) 15.18` -> `psql`)."""
    cut = [i for i, c in enumerate(origin) if i > 0 and c in "@("]
    return origin[: cut[0] if cut else len(origin)].strip()


def problems_of(case, family):
    if set(case) != KEYS:
        yield f"keys {sorted(set(case) ^ KEYS)} differ"
    if case.get("family") != family:
        yield "family must be the file's name"
    if case.get("category") not in CATEGORIES:
        yield "category must be one of " + ", ".join(CATEGORIES)
    also = case.get("also")
    if also is not None and (also == case.get("category") or also not in CATEGORIES):
        yield "also must be another category, or null"
    if case.get("source") != "result" or case.get("rpc_code") is not None:
        yield "source must be result and rpc_code null"
    if case.get("retryable") != (case.get("category") == "transient" and case.get("code") != "NO_SPACE"):
        yield "retryable must be true exactly for transient (not NO_SPACE)"
    for key in ("text", "tool", "code", "origin"):
        if not case.get(key):
            yield f"{key} is empty"


def main(folders):
    if not folders:
        sys.exit(__doc__)
    known_texts, known_families = corpus_texts_and_families()
    seen, taken = {}, {}
    problems = []
    for folder in map(pathlib.Path, folders):
        counts, categories = collections.Counter(), collections.Counter()
        for path in sorted(folder.glob("*.jsonl")):
            family = path.stem
            if family.lower() in known_families:
                problems.append(f"{path}: family '{family}' is in the corpus already")
            if family.lower() in taken:
                problems.append(f"{path}: family '{family}' is also in {taken[family.lower()]}")
            taken[family.lower()] = folder
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                where = f"{path}:{number}"
                try:
                    case = json.loads(line)
                except json.JSONDecodeError as e:
                    problems.append(f"{where}: not JSON ({e})")
                    continue
                problems += [f"{where}: {p}" for p in problems_of(case, family)]
                text = case.get("text")
                if text in known_texts:
                    problems.append(f"{where}: the text is in the corpus already")
                if text in seen:
                    problems.append(f"{where}: the text is also at {seen[text]}")
                seen[text] = where
                counts[family] += 1
                categories[case.get("category")] += 1
        for family, n in counts.items():
            if not 8 <= n <= 12:
                problems.append(f"{folder}/{family}.jsonl: {n} cases, 8 to 12 wanted")
        print(f"{folder}: {sum(counts.values())} cases, {len(counts)} families, {dict(categories)}")
    for problem in problems:
        print(problem)
    print(f"{len(problems)} problems" if problems else "no problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
