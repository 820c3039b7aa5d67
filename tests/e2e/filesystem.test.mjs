// @modelcontextprotocol/server-filesystem through mcp-errnorm, driven by the TS SDK 1.x Client.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';

import {
    ALREADY_EXISTS, BIG_TEXT, NOT_FOUND, PERMISSION, TEST_TIMEOUT_MS, VALIDATION,
    assertClosedPromptly, assertSameSuccess, checkPrerequisites, checkRewritten, describe,
    directAndProxied, fsCmd, makeSandbox, pretty, proxyCmd, upstreamText, withClient,
} from './helpers.mjs';

let sb;
before(() => {
    checkPrerequisites();
    sb = makeSandbox();
});
after(() => sb?.cleanup());

test('filesystem: tools/list and successful results are unchanged through the proxy', { timeout: TEST_TIMEOUT_MS }, async () => {
    const calls = [
        ['read_text_file', { path: path.join(sb.allowed, 'hello.txt') }],
        ['list_directory', { path: path.join(sb.allowed, 'empty_dir') }],
        ['search_files', { path: sb.allowed, pattern: 'zzz-no-such-name' }],
        ['list_allowed_directories', {}],
        ['read_text_file', { path: path.join(sb.allowed, 'big.txt') }],
    ];
    const run = async (c) => {
        const tools = await c.listTools();
        const results = [];
        for (const [n, a] of calls) results.push(await c.call(n, a));
        return { tools, results, version: c.client.getServerVersion() };
    };
    const d = await withClient(fsCmd(sb.allowed), run);
    const p = await withClient(proxyCmd(fsCmd(sb.allowed)), run);
    assertClosedPromptly(p);
    assert.deepStrictEqual(p.value.tools, d.value.tools, `tools/list differs through the proxy:\n${pretty(p.value.tools)}`);
    assert.deepStrictEqual(p.value.version, d.value.version);
    assert.equal(d.value.results[0].result.content[0].text, 'hello world\n');
    assert.equal(d.value.results.at(-1).result.content[0].text, BIG_TEXT);
    d.value.results.forEach((dr, i) => assertSameSuccess(dr, p.value.results[i]));
});

const failures = () => ({
    // id: [tool, arguments, expectation, substring the upstream's own text must have]
    'ENOENT': ['read_text_file', { path: path.join(sb.allowed, 'missing.txt') }, NOT_FOUND, 'ENOENT: no such file or directory'],
    'access denied': ['read_text_file', { path: path.join(sb.outside, 'secret.txt') }, PERMISSION, 'Access denied - path outside allowed directories'],
    'EISDIR': ['read_text_file', { path: path.join(sb.allowed, 'empty_dir') }, VALIDATION, 'EISDIR'],
    'ENOTDIR': ['list_directory', { path: path.join(sb.allowed, 'hello.txt') }, VALIDATION, 'ENOTDIR'],
    'move onto existing destination': ['move_file', { source: path.join(sb.allowed, 'sub', 'file.txt'), destination: path.join(sb.allowed, 'hello.txt') }, ALREADY_EXISTS, 'Destination already exists'],
    'edit with no match': ['edit_file', { path: path.join(sb.allowed, 'hello.txt'), edits: [{ oldText: 'NO SUCH TEXT', newText: 'x' }] }, NOT_FOUND, 'Could not find exact match for edit'],
    'head and tail together': ['read_text_file', { path: path.join(sb.allowed, 'hello.txt'), head: 1, tail: 1 }, VALIDATION, 'Cannot specify both head and tail'],
    'wrong argument type': ['read_text_file', { path: 123 }, VALIDATION, 'MCP error -32602: Input validation error'],
    'unknown tool': ['no_such_tool', {}, NOT_FOUND, 'MCP error -32602: Tool no_such_tool not found'],
});

for (const id of ['ENOENT', 'access denied', 'EISDIR', 'ENOTDIR', 'move onto existing destination', 'edit with no match', 'head and tail together', 'wrong argument type', 'unknown tool']) {
    test(`filesystem: ${id} arrives as a structured isError result`, { timeout: TEST_TIMEOUT_MS }, async () => {
        const [tool, args, expect, marker] = failures()[id];
        const { direct, proxied, proxyTool, proxyRun } = await directAndProxied(fsCmd(sb.allowed), tool, args);
        assertClosedPromptly(proxyRun);
        assert.ok(!direct.error && direct.result.isError === true, describe(direct));
        assert.ok(upstreamText(direct).includes(marker), describe(direct));
        checkRewritten(proxied, { expect, upstream: direct, source: 'result', rpcCode: null, hasOutputSchema: Boolean(proxyTool?.outputSchema) });
        assert.equal(fs.readFileSync(path.join(sb.allowed, 'hello.txt'), 'utf8'), 'hello world\n');
        assert.ok(fs.existsSync(path.join(sb.allowed, 'sub', 'file.txt')));
    });
}

test('filesystem: a failing outputSchema tool resolves with isError (no structuredContent, so the 1.x Client does not throw)', { timeout: TEST_TIMEOUT_MS }, async () => {
    const p = await withClient(proxyCmd(fsCmd(sb.allowed)), async (c) => {
        await c.listTools();
        const tool = c.tool('read_text_file');
        // callTool would throw McpError if an isError result carried structuredContent not matching the outputSchema.
        const result = await c.client.callTool({ name: 'read_text_file', arguments: { path: path.join(sb.allowed, 'missing.txt') } });
        return { tool, result };
    });
    assertClosedPromptly(p);
    assert.ok(p.value.tool?.outputSchema, 'read_text_file no longer declares an outputSchema');
    assert.equal(p.value.result.isError, true, pretty(p.value.result));
    assert.equal(p.value.result.structuredContent, undefined, pretty(p.value.result));
});

test('filesystem: --profile enterprise renders the enterprise body and keeps the canonical _meta', { timeout: TEST_TIMEOUT_MS }, async () => {
    const args = { path: path.join(sb.allowed, 'missing.txt') };
    const { direct, proxied, proxyTool, proxyRun } = await directAndProxied(fsCmd(sb.allowed), 'read_text_file', args, { profile: 'enterprise' });
    assertClosedPromptly(proxyRun);
    checkRewritten(proxied, { expect: NOT_FOUND, upstream: direct, source: 'result', rpcCode: null, hasOutputSchema: Boolean(proxyTool?.outputSchema), profile: 'enterprise' });
});
