#!/usr/bin/env bash
# The whole test suite: unit and integration tests (cargo), then end-to-end tests with real MCP
# servers (npm, PyPI) driven by the official Python and TypeScript SDK clients through the proxy.
# Installs what the end-to-end tests need on first run (scripts/e2e-setup.sh).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/e2e-setup.sh
cargo build --locked
cargo test --locked
export MCP_ERRNORM_BIN="$PWD/target/debug/mcp-errnorm"
tests/e2e/.venv/bin/python -m pytest tests/e2e -q
node --test tests/e2e/
