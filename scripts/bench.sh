#!/usr/bin/env bash
# The benchmark: builds release (the proxy, the fast upstream and the byte relay examples) and runs
# benches/proxy.rs, which measures the same workloads straight to the upstream, through a byte
# relay and through mcp-errnorm (and through mcp-rtk from crates.io, installed on first run into
# target/bench-tools), then prints every figure, the ratios and PASS/FAIL per target.
#
#   scripts/bench.sh            # the full run (a few minutes on 2 cores)
#   scripts/bench.sh --quick    # every workload smaller, for a smoke run
#   scripts/bench.sh --soak     # then the 1,000,000-message soak (tests/it/faults.rs, ignored by default)
#   scripts/bench.sh --no-rtk   # skip the side-by-side proxy
#   scripts/bench.sh --only=classify   # one workload: inflight, latency, timeouts, mb1, mb50,
#                                      # fail, startup, memory or classify
#
# Always exits 0 after a complete run: it reports, it does not gate.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bench_args=() soak=false rtk=true
for arg in "$@"; do
    case "$arg" in
        --quick | --only=*) bench_args+=("$arg") ;;
        --soak) soak=true ;;
        --no-rtk) rtk=false ;;
        *) echo "usage: scripts/bench.sh [--quick] [--soak] [--no-rtk] [--only=WORKLOAD]" >&2; exit 64 ;;
    esac
done

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(free -g | awk '/^Mem:/ {print $2}') GiB"

# Another stdio MCP proxy, side by side: mcp-rtk (crates.io), pinned.
RTK_VERSION=1.6.0
rtk_bin="$PWD/target/bench-tools/bin/mcp-rtk"
if $rtk; then
    if [[ ! -x "$rtk_bin" ]] || ! "$rtk_bin" --version 2>/dev/null | grep -q "$RTK_VERSION"; then
        echo "installing mcp-rtk $RTK_VERSION into target/bench-tools (first run only)..."
        cargo install mcp-rtk --version "$RTK_VERSION" --locked --root target/bench-tools >&2 \
            || echo "could not install mcp-rtk: running without it"
    fi
    [[ -x "$rtk_bin" ]] && export MCP_ERRNORM_BENCH_RTK="$rtk_bin"
fi

cargo build --release --locked --bins --examples
cargo bench --locked --bench proxy -- "${bench_args[@]}"

if $soak; then
    echo
    echo "soak: 1,000,000 messages through the release proxy and the fast upstream"
    MCP_ERRNORM_BIN="$PWD/target/release/mcp-errnorm" \
    MCP_ERRNORM_SOAK_UPSTREAM="$PWD/target/release/examples/fast_upstream" \
        cargo test --locked --test it -- --ignored --nocapture faults::soak
fi
