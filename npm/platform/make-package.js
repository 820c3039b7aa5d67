#!/usr/bin/env node
// Makes the npm package of one platform's binary from the templates beside this file:
//
//   node npm/platform/make-package.js <os> <cpu> <binary> <out-dir>
//
// <os> and <cpu> are Node's names (process.platform, process.arch): linux|darwin, x64|arm64.
// The version is the launcher's (npm/mcp-errnorm/package.json), which must equal Cargo.toml's
// and each of the launcher's optionalDependencies (checked here). <out-dir> is created (and
// must not exist); `npm pack <out-dir>` or `npm publish <out-dir>` then packs it.
"use strict";

const fs = require("fs");
const path = require("path");

const [os, cpu, binary, outDir] = process.argv.slice(2);
const SUPPORTED = ["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64"];

function die(message) {
  process.stderr.write(`make-package: ${message}\n`);
  process.exit(1);
}

if (!outDir) die("usage: make-package.js <os> <cpu> <binary> <out-dir>");
if (!SUPPORTED.includes(`${os}-${cpu}`)) die(`unsupported platform ${os}-${cpu} (${SUPPORTED.join(", ")})`);
if (!fs.statSync(binary, { throwIfNoEntry: false })?.isFile()) die(`${binary}: no such file`);
if (fs.existsSync(outDir)) die(`${outDir} exists already`);

const here = __dirname;
const root = path.resolve(here, "..", "..");
const launcher = JSON.parse(fs.readFileSync(path.join(root, "npm", "mcp-errnorm", "package.json"), "utf8"));
const version = launcher.version;
const cargo = fs.readFileSync(path.join(root, "Cargo.toml"), "utf8").match(/^version\s*=\s*"([^"]+)"/m);
if (!cargo || cargo[1] !== version) {
  die(`npm/mcp-errnorm/package.json has version ${version}, Cargo.toml ${cargo && cargo[1]}: make them equal`);
}
const name = `@mcp-errnorm/${os}-${cpu}`;
if (launcher.optionalDependencies?.[name] !== version) {
  die(`the launcher's optionalDependencies must list ${name} at ${version}`);
}

const fill = (text) =>
  text.replaceAll("{{os}}", os).replaceAll("{{cpu}}", cpu).replaceAll("{{version}}", version);

fs.mkdirSync(path.join(outDir, "bin"), { recursive: true });
fs.writeFileSync(path.join(outDir, "package.json"), fill(fs.readFileSync(path.join(here, "package.json.tmpl"), "utf8")));
fs.writeFileSync(path.join(outDir, "README.md"), fill(fs.readFileSync(path.join(here, "README.md.tmpl"), "utf8")));
const target = path.join(outDir, "bin", "mcp-errnorm");
fs.copyFileSync(binary, target);
fs.chmodSync(target, 0o755);
process.stdout.write(`${outDir}: ${name}@${version}\n`);
