#!/usr/bin/env bash
# Install the end-to-end test dependencies of mcp-errnorm:
#   - tests/e2e/node_modules  (npm ci from tests/e2e/package-lock.json)
#   - tests/e2e/.venv         (python3 venv + pip install -r tests/e2e/requirements.txt)
#
# Idempotent: each step is skipped when a stamp file shows it was already done
# for the current lockfile / requirements file and the result still imports.
# Runs from any working directory; needs only Node >= 20 + npm and
# Python >= 3.10 + pip (works as root).
#
# Then run the tests:
#   tests/e2e/.venv/bin/python -m pytest tests/e2e -q
#   node --test tests/e2e/
# (both need target/debug/mcp-errnorm, or MCP_ERRNORM_BIN pointing at the proxy)
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
e2e="$repo_root/tests/e2e"
PYTHON="${PYTHON:-python3}"

export PIP_DISABLE_PIP_VERSION_CHECK=1
export PIP_ROOT_USER_ACTION=ignore
export PIP_NO_INPUT=1
export npm_config_audit=false
export npm_config_fund=false
export npm_config_update_notifier=false

log() { printf 'e2e-setup: %s\n' "$*" >&2; }

hash_of() {
    # sha256 of the given files' contents, concatenated.
    cat "$@" | sha256sum | cut -d' ' -f1
}

# ---------------------------------------------------------------- node side
command -v node >/dev/null || { log "node not found (need Node >= 20)"; exit 1; }
command -v npm >/dev/null || { log "npm not found"; exit 1; }

node_stamp="$e2e/node_modules/.e2e-setup-stamp"
node_want="$(hash_of "$e2e/package.json" "$e2e/package-lock.json")-node-$(node --version)"
node_ok=false
if [[ -f "$node_stamp" && "$(cat "$node_stamp")" == "$node_want" ]] \
    && [[ -f "$e2e/node_modules/@modelcontextprotocol/sdk/package.json" ]] \
    && [[ -f "$e2e/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js" ]] \
    && [[ -f "$e2e/node_modules/@modelcontextprotocol/server-everything/dist/index.js" ]]; then
    node_ok=true
fi
if $node_ok; then
    log "node_modules up to date"
else
    log "npm ci in tests/e2e"
    (cd "$e2e" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
    printf '%s' "$node_want" >"$node_stamp"
fi

# -------------------------------------------------------------- python side
command -v "$PYTHON" >/dev/null || { log "$PYTHON not found (need Python >= 3.10)"; exit 1; }

venv="$e2e/.venv"
vpy="$venv/bin/python"
py_stamp="$venv/.e2e-setup-stamp"
py_want="$(hash_of "$e2e/requirements.txt")-$("$PYTHON" -c 'import sys; print(sys.version.split()[0])')"
py_ok=false
if [[ -x "$vpy" && -f "$py_stamp" && "$(cat "$py_stamp")" == "$py_want" ]] \
    && "$vpy" -c 'import mcp, mcp_server_time, pytest, jsonschema' >/dev/null 2>&1; then
    py_ok=true
fi
if $py_ok; then
    log "venv up to date"
else
    if [[ ! -x "$vpy" ]]; then
        log "creating venv tests/e2e/.venv"
        if ! "$PYTHON" -m venv "$venv" >/dev/null 2>&1; then
            # Debian's python3 without python3-venv has no ensurepip: make a
            # venv without pip and drive the host's pip into it instead.
            rm -rf "$venv"
            "$PYTHON" -m venv --without-pip "$venv"
        fi
    fi
    log "pip install -r tests/e2e/requirements.txt"
    if "$vpy" -m pip --version >/dev/null 2>&1; then
        "$vpy" -m pip install -q -r "$e2e/requirements.txt"
    else
        "$PYTHON" -m pip --python "$vpy" install -q -r "$e2e/requirements.txt"
    fi
    "$vpy" -c 'import mcp, mcp_server_time, pytest, jsonschema' \
        || { log "venv is missing a package after install"; exit 1; }
    printf '%s' "$py_want" >"$py_stamp"
fi

log "ready"
