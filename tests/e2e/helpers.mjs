// Shared helpers for the Node end-to-end tests of mcp-errnorm.
//
// The tests drive real MCP servers with the official TypeScript SDK
// (@modelcontextprotocol/sdk 1.x Client + StdioClientTransport), once directly
// and once through the proxy (`mcp-errnorm -- <server command>`), and compare.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';

export const E2E_DIR = path.dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = path.resolve(E2E_DIR, '..', '..');
export const PROXY = process.env.MCP_ERRNORM_BIN || path.join(REPO_ROOT, 'target', 'debug', 'mcp-errnorm');
const NODE_MODULES = path.join(E2E_DIR, 'node_modules');
export const FS_SERVER_JS = path.join(NODE_MODULES, '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js');
export const EV_SERVER_JS = path.join(NODE_MODULES, '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
export const VENV_PYTHON = path.join(E2E_DIR, '.venv', 'bin', 'python');

export const ERROR_META_KEY = 'mcp-errnorm/error';
export const CANONICAL_KEYS = [
    'errorCategory', 'errorCode', 'isRetryable', 'retryAfterSeconds', 'message', 'userMessage',
    'alternatives', 'attempted_query', 'partial_results', 'originalError', 'ruleId',
];
const CATEGORIES = ['transient', 'validation', 'business', 'permission', 'unknown'];
const MCP_PROFILE_KEYS = ['errorCategory', 'isRetryable', 'message', 'errorCode', 'attempted_query'];
const ENTERPRISE_KEYS = ['success', 'data', 'error_code', 'error_message', 'retry_recommended', 'retry_after_seconds'];

export const CLOSE_BOUND_MS = 3500;
export const TEST_TIMEOUT_MS = 60_000;

export const NOT_FOUND = { category: 'validation', retryable: false, code: 'NOT_FOUND' };
export const PERMISSION = { category: 'permission', retryable: false, code: 'PERMISSION_DENIED' };
export const VALIDATION = { category: 'validation', retryable: false, code: 'VALIDATION_ERROR' };
export const ALREADY_EXISTS = { category: 'validation', retryable: false, code: 'ALREADY_EXISTS' };
export const UNAVAILABLE = { category: 'transient', retryable: true, code: 'SYSTEM_UNAVAILABLE' };

export function checkPrerequisites() {
    const problems = [];
    try {
        fs.accessSync(PROXY, fs.constants.X_OK);
    } catch {
        problems.push(`proxy binary ${PROXY} is missing (build it, or set MCP_ERRNORM_BIN)`);
    }
    for (const f of [FS_SERVER_JS, EV_SERVER_JS, VENV_PYTHON]) {
        if (!fs.existsSync(f)) problems.push(`${f} is missing (run scripts/e2e-setup.sh)`);
    }
    if (problems.length) throw new Error(problems.join('; '));
}

export const fsCmd = (allowedDir) => [process.execPath, FS_SERVER_JS, allowedDir];
export const evCmd = () => [process.execPath, EV_SERVER_JS, 'stdio'];
export const timeCmd = () => [VENV_PYTHON, '-m', 'mcp_server_time', '--local-timezone', 'UTC'];
export const proxyCmd = (server, profile) => [PROXY, ...(profile ? ['--profile', profile] : []), '--', ...server];

export const pretty = (v) => JSON.stringify(v, null, 2);

/**
 * A file far over the proxy's stream_answers_over (64 KiB), with what JSON must escape and what
 * UTF-8 spells in several bytes: reading it checks that a long answer streams through whole.
 */
export const BIG_TEXT = Array.from({ length: 15000 }, (_, i) => `line ${i}: "quoted" back\\slash\ttab \u00e9\u2713\u{1f389}\n`).join('');

/** allowed/{hello.txt, big.txt, empty_dir/, sub/file.txt} and outside/secret.txt in a fresh temporary dir. */
export function makeSandbox() {
    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-errnorm-e2e-')));
    const allowed = path.join(root, 'allowed');
    const outside = path.join(root, 'outside');
    fs.mkdirSync(path.join(allowed, 'empty_dir'), { recursive: true });
    fs.mkdirSync(path.join(allowed, 'sub'));
    fs.mkdirSync(outside);
    fs.writeFileSync(path.join(allowed, 'hello.txt'), 'hello world\n');
    fs.writeFileSync(path.join(allowed, 'big.txt'), BIG_TEXT);
    fs.writeFileSync(path.join(allowed, 'sub', 'file.txt'), 'a file in a subdirectory\n');
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'not for you\n');
    return { root, allowed, outside, cleanup: () => fs.rmSync(root, { recursive: true, force: true }) };
}

/**
 * Launch `cmd` over stdio, connect the SDK Client, run `body(conn)`, close.
 * Returns { value, closedAfterMs, stderr }: closedAfterMs is the time from the
 * last answer to the client being fully closed (the child process gone).
 */
export async function withClient(cmd, body) {
    const transport = new StdioClientTransport({
        command: cmd[0],
        args: cmd.slice(1),
        env: { ...getDefaultEnvironment(), RUST_BACKTRACE: '1' },
        stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk) => {
        stderr += chunk.toString();
    });
    const client = new Client({ name: 'mcp-errnorm-e2e', version: '0.0.0' });
    let lastAnswer = null;
    const conn = {
        client,
        tools: [],
        async listTools() {
            const { tools } = await client.listTools();
            this.tools = tools;
            lastAnswer = performance.now();
            return tools;
        },
        tool(name) {
            return this.tools.find((t) => t.name === name);
        },
        async call(name, args) {
            const out = { name, arguments: args, result: undefined, error: undefined };
            try {
                out.result = await client.callTool({ name, arguments: args });
            } catch (e) {
                out.error = e;
            }
            lastAnswer = performance.now();
            return out;
        },
    };
    let value;
    try {
        await client.connect(transport);
        value = await body(conn);
    } catch (e) {
        await client.close().catch(() => {});
        e.message += `\n--- stderr of ${cmd.join(' ')}:\n${stderr}`;
        throw e;
    }
    await client.close();
    const closedAfterMs = lastAnswer === null ? null : performance.now() - lastAnswer;
    return { value, closedAfterMs, stderr };
}

export function assertClosedPromptly(run, label = 'proxy') {
    assert.ok(run.closedAfterMs !== null, `${label}: no call was made`);
    assert.ok(
        run.closedAfterMs < CLOSE_BOUND_MS,
        `${label}: closing the client took ${run.closedAfterMs.toFixed(0)} ms after the last answer (bound ${CLOSE_BOUND_MS} ms)\nstderr:\n${run.stderr}`,
    );
}

export function describe(outcome) {
    if (outcome.error) return `threw ${outcome.error.constructor?.name}: code=${outcome.error.code} ${outcome.error.message}`;
    return pretty(outcome.result);
}

export function upstreamText(outcome) {
    if (outcome.error) {
        // McpError.message is "MCP error <code>: <message>"; the server's own text is the tail.
        return String(outcome.error.message).replace(/^MCP error -?\d+: /, '');
    }
    assert.equal(outcome.result.isError, true, `expected a failure, got ${describe(outcome)}`);
    return outcome.result.content.map((b) => b.text ?? '').join('\n');
}

export function assertSameSuccess(direct, proxied, normalize = (r) => r) {
    const ctx = `\n--- through the proxy:\n${describe(proxied)}\n--- directly:\n${describe(direct)}`;
    assert.ok(!direct.error && !direct.result.isError, `the direct call failed${ctx}`);
    assert.ok(!proxied.error, `the proxied call threw${ctx}`);
    assert.deepStrictEqual(normalize(proxied.result), normalize(direct.result), `the proxy changed a successful result${ctx}`);
    assert.ok(!(proxied.result._meta && ERROR_META_KEY in proxied.result._meta), `a success carries ${ERROR_META_KEY}${ctx}`);
}

/** Assert the full contract of a rewritten failure; returns the canonical object. */
export function checkRewritten(proxied, { expect, upstream, source, rpcCode, hasOutputSchema, profile = 'mcp' }) {
    const ctx = `\n--- result through the proxy:\n${describe(proxied)}\n--- same call directly:\n${describe(upstream)}`;
    assert.ok(!proxied.error, `the call through the proxy threw instead of resolving${ctx}`);
    const res = proxied.result;
    assert.equal(res.isError, true, `isError is not true${ctx}`);
    if (hasOutputSchema) {
        assert.equal(res.structuredContent, undefined, `rewritten failure of a tool with an outputSchema carries structuredContent${ctx}`);
    }

    const canon = res._meta?.[ERROR_META_KEY];
    assert.ok(canon && typeof canon === 'object' && !Array.isArray(canon), `_meta has no ${ERROR_META_KEY} object${ctx}`);
    const missing = CANONICAL_KEYS.filter((k) => !(k in canon));
    assert.deepEqual(missing, [], `canonical error lacks keys${ctx}`);
    assert.ok(CATEGORIES.includes(canon.errorCategory), `errorCategory ${canon.errorCategory}${ctx}`);
    assert.deepEqual(
        { category: canon.errorCategory, retryable: canon.isRetryable, code: canon.errorCode },
        expect,
        `classification${ctx}`,
    );
    assert.equal(typeof canon.isRetryable, 'boolean', ctx);
    assert.ok(canon.retryAfterSeconds === null || Number.isInteger(canon.retryAfterSeconds), `retryAfterSeconds${ctx}`);
    assert.ok(typeof canon.message === 'string' && canon.message.length > 0, `message${ctx}`);
    assert.ok(canon.userMessage === null || typeof canon.userMessage === 'string', `userMessage${ctx}`);
    assert.ok(Array.isArray(canon.alternatives) && canon.alternatives.every((a) => typeof a === 'string'), `alternatives${ctx}`);
    assert.deepStrictEqual(canon.attempted_query, { tool: proxied.name, arguments: proxied.arguments }, `attempted_query${ctx}`);
    const orig = canon.originalError;
    assert.ok(orig && typeof orig === 'object', `originalError${ctx}`);
    assert.equal(orig.source, source, `originalError.source${ctx}`);
    const raw = upstreamText(upstream);
    assert.ok(typeof orig.text === 'string' && orig.text.includes(raw), `originalError.text does not contain the upstream's text ${JSON.stringify(raw)}${ctx}`);
    assert.ok('rpcCode' in orig, `originalError.rpcCode missing${ctx}`);
    assert.equal(orig.rpcCode, rpcCode, `originalError.rpcCode${ctx}`);
    assert.ok(canon.ruleId === null || typeof canon.ruleId === 'string', `ruleId${ctx}`);

    assert.ok(Array.isArray(res.content) && res.content.length > 0, `no content${ctx}`);
    const first = res.content[0];
    assert.equal(first.type, 'text', `content[0] is not text${ctx}`);
    let body;
    try {
        body = JSON.parse(first.text);
    } catch (e) {
        assert.fail(`content[0].text is not JSON (${e.message})${ctx}`);
    }
    assert.equal(first.text, JSON.stringify(body), `content[0].text is not compact JSON${ctx}`);
    if (profile === 'mcp') {
        for (const k of MCP_PROFILE_KEYS) {
            assert.ok(k in body, `profile mcp body lacks ${k}${ctx}`);
            assert.deepStrictEqual(body[k], canon[k], `profile mcp body's ${k} differs from the canonical${ctx}`);
        }
    } else if (profile === 'enterprise') {
        for (const k of ENTERPRISE_KEYS) assert.ok(k in body, `profile enterprise body lacks ${k}${ctx}`);
        assert.equal(body.success, false, ctx);
        assert.equal(body.data, null, ctx);
        assert.equal(body.error_code, canon.errorCode, ctx);
        assert.ok(typeof body.error_message === 'string' && body.error_message.length > 0, ctx);
        assert.equal(body.retry_recommended, canon.isRetryable, ctx);
        // Without a wait from the server, a recommended retry comes with backoff (seed 000).
        let wait = canon.retryAfterSeconds;
        if (wait === null && canon.isRetryable) wait = 2 ** (Math.min(Math.max(canon.attempts, 1), 7) - 1);
        assert.equal(body.retry_after_seconds, wait, ctx);
    } else {
        throw new Error(`unknown profile ${profile}`);
    }
    return canon;
}

/**
 * Run `name(args)` directly and through the proxy (fresh sessions each) and
 * return { direct, proxied, proxyRun, proxyTool }.
 */
export async function directAndProxied(serverCmd, name, args, { profile } = {}) {
    const d = await withClient(serverCmd, async (c) => {
        await c.listTools();
        return c.call(name, args);
    });
    const p = await withClient(proxyCmd(serverCmd, profile), async (c) => {
        await c.listTools();
        const out = await c.call(name, args);
        return { out, tool: c.tool(name) };
    });
    return { direct: d.value, proxied: p.value.out, proxyTool: p.value.tool, proxyRun: p };
}
