#!/usr/bin/env node
// The npm launcher of mcp-errnorm: finds the prebuilt binary of this platform in the
// optional dependency npm installed for it (@mcp-errnorm/<os>-<cpu>), and runs it with this
// process's arguments, stdin, stdout and stderr, exiting as it exits.
//
// MCP_ERRNORM_BINARY=/path/to/mcp-errnorm overrides the lookup.
"use strict";

const { spawn } = require("child_process");
const path = require("path");

const PLATFORMS = {
  "darwin-arm64": "@mcp-errnorm/darwin-arm64",
  "darwin-x64": "@mcp-errnorm/darwin-x64",
  "linux-arm64": "@mcp-errnorm/linux-arm64",
  "linux-x64": "@mcp-errnorm/linux-x64",
};

function binaryPath() {
  if (process.env.MCP_ERRNORM_BINARY) {
    return process.env.MCP_ERRNORM_BINARY;
  }
  const key = `${process.platform}-${process.arch}`;
  const pkg = PLATFORMS[key];
  if (!pkg) {
    const supported = Object.keys(PLATFORMS).join(", ");
    fail(
      `no prebuilt binary for ${key} (supported: ${supported}; Windows is not supported yet).\n` +
        "Install from source instead: cargo install mcp-errnorm --locked",
    );
  }
  try {
    return path.join(path.dirname(require.resolve(`${pkg}/package.json`)), "bin", "mcp-errnorm");
  } catch (_) {
    fail(
      `the package ${pkg}, which holds the binary for ${key}, is not installed.\n` +
        "npm installs it as an optional dependency of mcp-errnorm: reinstall without " +
        "--no-optional / --omit=optional, or install it by hand: npm install " +
        `${pkg}@${require("../package.json").version}`,
    );
  }
}

function fail(message) {
  process.stderr.write(`mcp-errnorm: ${message}\n`);
  // EX_UNAVAILABLE, as when the proxy cannot start the server.
  process.exit(69);
}

const child = spawn(binaryPath(), process.argv.slice(2), { stdio: "inherit" });

// The client stops the server with a signal: pass it on, and let the binary decide.
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill(signal);
    }
  });
}

child.on("error", (err) => fail(`cannot run ${err.path || "the binary"}: ${err.message}`));
child.on("exit", (code, signal) => {
  if (signal) {
    // Die of the same signal, so that the parent sees what the binary's parent would.
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code === null ? 70 : code);
});
