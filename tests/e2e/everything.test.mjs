// @modelcontextprotocol/server-everything (stdio) through mcp-errnorm, driven by the TS SDK 1.x Client.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';

import {
    NOT_FOUND, TEST_TIMEOUT_MS, UNAVAILABLE, VALIDATION,
    assertClosedPromptly, assertSameSuccess, checkPrerequisites, checkRewritten, describe,
    directAndProxied, evCmd, pretty, proxyCmd, upstreamText, withClient,
} from './helpers.mjs';

before(() => checkPrerequisites());

test('everything: tools/list and successful results are unchanged through the proxy', { timeout: TEST_TIMEOUT_MS }, async () => {
    const calls = [
        ['echo', { message: 'hello through the proxy' }],
        ['get-sum', { a: 2, b: 40 }],
        ['get-structured-content', { location: 'Chicago' }],
    ];
    const run = async (c) => {
        const tools = await c.listTools();
        const results = [];
        for (const [n, a] of calls) results.push(await c.call(n, a));
        return { tools, results };
    };
    const d = await withClient(evCmd(), run);
    const p = await withClient(proxyCmd(evCmd()), run);
    assertClosedPromptly(p);
    assert.deepStrictEqual(p.value.tools, d.value.tools, `tools/list differs through the proxy:\n${pretty(p.value.tools)}`);
    assert.ok(d.value.results[2].result.structuredContent, describe(d.value.results[2]));
    d.value.results.forEach((dr, i) => assertSameSuccess(dr, p.value.results[i]));
});

const FAILURES = {
    // id: [tool, arguments, expectation, substring the upstream's own text must have]
    'echo without message': ['echo', {}, VALIDATION, 'MCP error -32602: Input validation error'],
    // Port 9 (discard) on loopback: nothing listens, the connection is refused at once.
    'fetch failed': ['gzip-file-as-resource', { data: 'http://127.0.0.1:9/x' }, UNAVAILABLE, 'fetch failed'],
    'unsupported URL protocol': ['gzip-file-as-resource', { data: 'file:///etc/passwd' }, VALIDATION, 'Unsupported URL protocol'],
    'unknown tool': ['no_such_tool', {}, NOT_FOUND, 'MCP error -32602: Tool no_such_tool not found'],
    // get-structured-content declares an outputSchema: the 1.x Client would throw on a bad structuredContent.
    'outputSchema tool with a bad argument': ['get-structured-content', { location: 'Atlantis' }, VALIDATION, 'Input validation error'],
};

for (const [id, [tool, args, expect, marker]] of Object.entries(FAILURES)) {
    test(`everything: ${id} arrives as a structured isError result`, { timeout: TEST_TIMEOUT_MS }, async () => {
        const { direct, proxied, proxyTool, proxyRun } = await directAndProxied(evCmd(), tool, args);
        assertClosedPromptly(proxyRun);
        assert.ok(!direct.error && direct.result.isError === true, describe(direct));
        assert.ok(upstreamText(direct).includes(marker), describe(direct));
        checkRewritten(proxied, { expect, upstream: direct, source: 'result', rpcCode: null, hasOutputSchema: Boolean(proxyTool?.outputSchema) });
        if (tool === 'get-structured-content') assert.ok(proxyTool?.outputSchema, 'get-structured-content no longer declares an outputSchema');
    });
}
