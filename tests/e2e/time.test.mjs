// mcp-server-time (Python reference server) through mcp-errnorm, driven by the TS SDK 1.x Client.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';

import {
    NOT_FOUND, TEST_TIMEOUT_MS, VALIDATION,
    assertClosedPromptly, assertSameSuccess, checkPrerequisites, checkRewritten, describe,
    directAndProxied, pretty, proxyCmd, timeCmd, upstreamText, withClient,
} from './helpers.mjs';

before(() => checkPrerequisites());

// get_current_time's datetime moves between two calls: drop it from both representations.
function withoutClock(result) {
    const out = structuredClone(result);
    if (out.structuredContent && typeof out.structuredContent === 'object') delete out.structuredContent.datetime;
    for (const block of out.content ?? []) {
        if (block.type !== 'text') continue;
        try {
            const body = JSON.parse(block.text);
            delete body.datetime;
            block.text = JSON.stringify(body);
        } catch {
            // not JSON: leave it
        }
    }
    return out;
}

test('time: tools/list and successful results are unchanged through the proxy', { timeout: TEST_TIMEOUT_MS }, async () => {
    const run = async (c) => {
        const tools = await c.listTools();
        const convert = await c.call('convert_time', { source_timezone: 'UTC', time: '12:00', target_timezone: 'Asia/Tokyo' });
        const now = await c.call('get_current_time', { timezone: 'UTC' });
        return { tools, convert, now };
    };
    const d = await withClient(timeCmd(), run);
    const p = await withClient(proxyCmd(timeCmd()), run);
    assertClosedPromptly(p);
    assert.deepStrictEqual(p.value.tools, d.value.tools, `tools/list differs through the proxy:\n${pretty(p.value.tools)}`);
    assert.equal(d.value.convert.result.structuredContent?.time_difference, '+9.0h', describe(d.value.convert));
    assertSameSuccess(d.value.convert, p.value.convert);
    assertSameSuccess(d.value.now, p.value.now, withoutClock);
});

const FAILURES = {
    // id: [tool, arguments, expectation, substring the upstream's own text must have]
    'invalid timezone': ['get_current_time', { timezone: 'Mars/Olympus_Mons' }, VALIDATION, 'Invalid timezone'],
    'invalid time': ['convert_time', { source_timezone: 'UTC', time: '25:99', target_timezone: 'Asia/Tokyo' }, VALIDATION, 'Invalid time format'],
    'missing argument (pydantic)': ['get_current_time', {}, VALIDATION, 'validation error'],
};

for (const [id, [tool, args, expect, marker]] of Object.entries(FAILURES)) {
    test(`time: ${id} arrives as a structured isError result`, { timeout: TEST_TIMEOUT_MS }, async () => {
        const { direct, proxied, proxyTool, proxyRun } = await directAndProxied(timeCmd(), tool, args);
        assertClosedPromptly(proxyRun);
        assert.ok(!direct.error && direct.result.isError === true, describe(direct));
        assert.ok(upstreamText(direct).includes(marker), describe(direct));
        checkRewritten(proxied, { expect, upstream: direct, source: 'result', rpcCode: null, hasOutputSchema: Boolean(proxyTool?.outputSchema) });
    });
}

test('time: unknown tool (JSON-RPC -32602 from the server) resolves as an isError result, not an exception', { timeout: TEST_TIMEOUT_MS }, async () => {
    const { direct, proxied, proxyRun } = await directAndProxied(timeCmd(), 'no_such_tool', {});
    assertClosedPromptly(proxyRun);
    assert.ok(direct.error, `directly, the server should answer with a JSON-RPC error: ${describe(direct)}`);
    assert.equal(direct.error.code, -32602, describe(direct));
    assert.ok(upstreamText(direct).includes('Unknown tool: no_such_tool'), describe(direct));
    checkRewritten(proxied, { expect: NOT_FOUND, upstream: direct, source: 'rpc', rpcCode: -32602, hasOutputSchema: false });
});

test('time: --profile enterprise on a JSON-RPC failure', { timeout: TEST_TIMEOUT_MS }, async () => {
    const { direct, proxied, proxyRun } = await directAndProxied(timeCmd(), 'no_such_tool', {}, { profile: 'enterprise' });
    assertClosedPromptly(proxyRun);
    checkRewritten(proxied, { expect: NOT_FOUND, upstream: direct, source: 'rpc', rpcCode: -32602, hasOutputSchema: false, profile: 'enterprise' });
});
