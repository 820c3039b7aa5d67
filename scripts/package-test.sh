#!/usr/bin/env bash
# The packages, built and installed as a user gets them, each driven end to end with a real MCP
# server (mcp-server-time) by the official Python SDK client (tests/e2e/package_check.py):
#   1. the release binary, built once (cargo build --release --locked);
#   2. PyPI: the wheel (maturin, bindings = "bin", from a throwaway venv), installed into a
#      fresh venv and run as the installed `mcp-errnorm` command; with uv on PATH, also as
#      `uvx --from <wheel> mcp-errnorm`, and `install` run that way must write
#      `uvx mcp-errnorm@<version> --`, not the cache path; the same through `pipx run`
#      (pipx from PyPI), whose `install` must write `pipx run --spec mcp-errnorm==<version>`;
#   3. npm: this platform's package (npm/platform/make-package.js) and the launcher
#      (npm/mcp-errnorm), `npm pack`ed, installed from the tarballs into an empty project, and
#      run as `npx mcp-errnorm`; `install` run by `npx -y` must write
#      `npx -y mcp-errnorm@<version> --`;
#   4. crates.io: `cargo package --locked`, which builds the packaged crate; its binary runs,
#      and prints what it embeds (a schema, the example config, the man pages).
# Needs what scripts/test.sh needs (it runs scripts/e2e-setup.sh for the SDK client).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo="$PWD"
start=$SECONDS

export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore PIP_NO_INPUT=1
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false

log() { printf 'package-test [%3ds]: %s\n' "$((SECONDS - start))" "$*" >&2; }
die() { log "FAILED: $*"; exit 1; }

version="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)"
[[ -n "$version" ]] || die "no version in Cargo.toml"
case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) npm_os=linux npm_cpu=x64 ;;
    Linux-aarch64) npm_os=linux npm_cpu=arm64 ;;
    Darwin-x86_64) npm_os=darwin npm_cpu=x64 ;;
    Darwin-arm64) npm_os=darwin npm_cpu=arm64 ;;
    *) die "no package for $(uname -s)-$(uname -m) (Linux and macOS, x86_64 and arm64, only)" ;;
esac

tmp="$(mktemp -d "${TMPDIR:-/tmp}/mcp-errnorm-package-test.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

scripts/e2e-setup.sh
check=(tests/e2e/.venv/bin/python tests/e2e/package_check.py)

# ----------------------------------------------------------------------------- the binary
log "cargo build --release --locked"
cargo build --release --locked
bin="$repo/target/release/mcp-errnorm"
"$bin" --version | grep -qF "$version" || die "$bin --version does not say $version"

# A client config with one stdio server, for `install --dry-run` from each package.
cat >"$tmp/mcp.json" <<'JSON'
{ "mcpServers": { "time": { "command": "uvx", "args": ["mcp-server-time"] } } }
JSON

# --------------------------------------------------------------------------------- PyPI
log "maturin build (maturin from PyPI in a throwaway venv)"
python3 -m venv "$tmp/maturin-venv"
"$tmp/maturin-venv/bin/pip" install -q 'maturin>=1.7,<2'
"$tmp/maturin-venv/bin/maturin" build --release --locked --out "$tmp/wheels" 2>&1 | tail -n 3
wheel="$(ls "$tmp"/wheels/mcp_errnorm-"$version"-*.whl)"
log "wheel: $(basename "$wheel") ($(du -k "$wheel" | cut -f1) KiB)"

log "pip install the wheel into a fresh venv"
python3 -m venv "$tmp/user-venv"
"$tmp/user-venv/bin/pip" install -q "$wheel"
installed="$tmp/user-venv/bin/mcp-errnorm"
[[ -x "$installed" ]] || die "the wheel installed no $installed"
log "e2e through the wheel's command: $installed"
"${check[@]}" -- "$installed"

if command -v uv >/dev/null; then
    # uvx unpacks the wheel into uv's cache (archive-v0): what `uvx mcp-errnorm` does.
    export UV_CACHE_DIR="$tmp/uv-cache/uv"
    log "e2e through uvx --from the wheel"
    "${check[@]}" -- uvx --offline --from "$wheel" mcp-errnorm
    out="$(uvx --offline --from "$wheel" mcp-errnorm install --client "$tmp/mcp.json" --dry-run)"
    grep -qF "\"command\": \"uvx\"" <<<"$out" && grep -qF "\"mcp-errnorm@$version\", \"--name\", \"time\", \"--\"" <<<"$out" \
        || die "install run by uvx did not write 'uvx mcp-errnorm@$version --':"$'\n'"$out"
    log "install run by uvx writes: uvx mcp-errnorm@$version --"
    unset UV_CACHE_DIR
else
    log "uv not on PATH: uvx not tried"
fi

# pipx run unpacks the wheel into pipx's cache (PIPX_HOME/.cache): what `pipx run mcp-errnorm`
# does. pipx comes from PyPI, into the throwaway venv.
log "e2e through pipx run --spec the wheel"
"$tmp/maturin-venv/bin/pip" install -q pipx
pipx=("$tmp/maturin-venv/bin/pipx" run --spec "$wheel" mcp-errnorm)
export PIPX_HOME="$tmp/pipx-home/pipx" PIPX_BIN_DIR="$tmp/pipx-home/bin"
"${check[@]}" -- "${pipx[@]}"
out="$("${pipx[@]}" install --client "$tmp/mcp.json" --dry-run)"
grep -qF '"command": "pipx"' <<<"$out" \
    && grep -qF "\"--spec\", \"mcp-errnorm==$version\", \"mcp-errnorm\", \"--name\", \"time\", \"--\"" <<<"$out" \
    || die "install run by pipx did not write 'pipx run --spec mcp-errnorm==$version mcp-errnorm --':"$'\n'"$out"
log "install run by pipx run writes: pipx run --spec mcp-errnorm==$version mcp-errnorm --"
unset PIPX_HOME PIPX_BIN_DIR

# ---------------------------------------------------------------------------------- npm
log "npm pack: @mcp-errnorm/$npm_os-$npm_cpu and the launcher"
node npm/platform/make-package.js "$npm_os" "$npm_cpu" "$bin" "$tmp/npm-platform" >/dev/null
mkdir -p "$tmp/tarballs"
(cd "$tmp/tarballs" && npm pack --silent "$tmp/npm-platform" >/dev/null && npm pack --silent "$repo/npm/mcp-errnorm" >/dev/null)
platform_tgz="$tmp/tarballs/mcp-errnorm-$npm_os-$npm_cpu-$version.tgz"
launcher_tgz="$tmp/tarballs/mcp-errnorm-$version.tgz"
[[ -f "$platform_tgz" && -f "$launcher_tgz" ]] || die "npm pack made: $(ls "$tmp/tarballs")"

log "npm install both tarballs into an empty project"
mkdir "$tmp/project"
(cd "$tmp/project" && npm init -y >/dev/null && npm install --no-save --loglevel=error "$platform_tgz" "$launcher_tgz" >/dev/null)
log "e2e through npx mcp-errnorm"
"${check[@]}" --cwd "$tmp/project" -- npx mcp-errnorm

# `npx -y` outside a project unpacks the packages into npm's cache (_npx): `install` run that
# way must write `npx -y mcp-errnorm@<version> --`.
out="$(cd "$tmp" && npm_config_cache="$tmp/npm-cache" npx -y --package="$platform_tgz" \
    --package="$launcher_tgz" mcp-errnorm install --client "$tmp/mcp.json" --dry-run)"
grep -qF '"command": "npx"' <<<"$out" && grep -qF "\"-y\", \"mcp-errnorm@$version\", \"--name\", \"time\", \"--\"" <<<"$out" \
    || die "install run by npx -y did not write 'npx -y mcp-errnorm@$version --':"$'\n'"$out"
log "install run by npx -y writes: npx -y mcp-errnorm@$version --"

# ----------------------------------------------------------------------------- crates.io
log "cargo package --locked (builds the packaged crate)"
dirty=()
[[ -z "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]] || dirty=(--allow-dirty)
cargo package --locked "${dirty[@]}"
# The verification builds target/package/mcp-errnorm-<version>/ into the shared target dir
# (debug): what it left there is the packaged crate's binary.
crate_bin="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/debug/mcp-errnorm"
"$crate_bin" --version | grep -qF "$version" || die "the packaged crate's binary does not run"
"$crate_bin" classify 'ENOENT: no such file or directory' | grep -q NOT_FOUND \
    || die "the packaged crate's binary does not classify"
# What the binary carries for its users, embedded from files the crate must include.
"$crate_bin" schema mcp | python3 -c 'import json,sys; json.load(sys.stdin)' \
    || die "the packaged crate's binary prints no JSON Schema"
"$crate_bin" init --print | grep -qF 'fallback_model' \
    || die "the packaged crate's binary prints no example config"
"$crate_bin" man --dir "$tmp/man" 2>/dev/null && [[ -s "$tmp/man/mcp-errnorm-install.1" ]] \
    || die "the packaged crate's binary writes no man pages"
log "the packaged crate's binary runs: $crate_bin"

log "all packages pass ($((SECONDS - start)) s)"
