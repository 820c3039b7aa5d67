// Recovery through the proxy, seen by the TS SDK 1.x Client + StdioClientTransport: a transient
// failure retried away, a destructive tool left alone, a cancelled call not retried, an upstream
// crash survived on the same session, a slow call timed out.
//
// The upstream is tests/fixtures/upstream.py (scriptable faults); it records every line it reads
// in FIXTURE_RECORD (set through the config's [env]), so the tests can see what it was sent.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

import { ERROR_META_KEY, PROXY, REPO_ROOT, TEST_TIMEOUT_MS, checkPrerequisites, pretty, withClient } from './helpers.mjs';

const FIXTURE = path.join(REPO_ROOT, 'tests', 'fixtures', 'upstream.py');
const dirs = [];

before(() => checkPrerequisites());
after(() => {
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

/**
 * A client session to the proxy (with `config`) in front of the fixture upstream. `body` gets
 * { client, call, count, recorded, errors, dir }; `errors` collects what the SDK reports through
 * client.onerror (a second answer to one request shows up as "a response for an unknown message
 * ID"). Returns { value, stderr, errors, recorded }.
 */
async function withFixture(config, body) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-errnorm-recovery-'));
    dirs.push(dir);
    const record = path.join(dir, 'record.jsonl');
    const cfg = path.join(dir, 'config.toml');
    fs.writeFileSync(cfg, `${config}\n[env]\nFIXTURE_RECORD = ${JSON.stringify(record)}\n`);
    const recorded = () => {
        if (!fs.existsSync(record)) return [];
        return fs.readFileSync(record, 'utf8').split('\n').filter(Boolean).flatMap((l) => {
            try {
                return [JSON.parse(l)];
            } catch {
                return [];
            }
        });
    };
    const errors = [];
    const run = await withClient([PROXY, '--config', cfg, '--', 'python3', FIXTURE], async (conn) => {
        const { client } = conn;
        client.onerror = (e) => errors.push(String(e?.message ?? e));
        await conn.listTools(); // the annotations decide what is retried
        const call = (name, args, options) => client.callTool({ name, arguments: args }, undefined, options);
        const count = async (key) => {
            const res = await call('count', { key });
            assert.notEqual(res.isError, true, pretty(res));
            return Number(res.content[0].text);
        };
        return body({ client, call, count, recorded, errors, dir });
    });
    return { ...run, errors, recorded: recorded() };
}

function canonical(res) {
    const error = res._meta?.[ERROR_META_KEY];
    assert.ok(error && typeof error === 'object', `no _meta[${ERROR_META_KEY}]:\n${pretty(res)}`);
    return error;
}

const callsOf = (recorded, tool) => recorded.filter((m) => m.method === 'tools/call' && m.params.name === tool);
const cancelsOf = (recorded, id) =>
    recorded.filter((m) => m.method === 'notifications/cancelled' && m.params?.requestId === id);
const texts = (res) => res.content.map((b) => b.text);
const FAST_RETRY = '[retry]\nbase_delay_ms = 1\nmax_delay_ms = 20\n';

test('recovery: a transient failure is recovered by retry; the client sees one answer', { timeout: TEST_TIMEOUT_MS }, async () => {
    const run = await withFixture(FAST_RETRY, async ({ call, count }) => {
        const res = await call('flaky', { key: 'k', fails: 2 });
        // One more round trip: a second answer to the flaky call would have arrived by now.
        return { res, upstreamCalls: await count('k') };
    });
    const { res, upstreamCalls } = run.value;
    const ctx = `\n${pretty(res)}\nstderr:\n${run.stderr}`;
    assert.notEqual(res.isError, true, `the retry did not recover the call${ctx}`);
    assert.deepEqual(texts(res), ['ok after 3 calls'], ctx);
    assert.ok(!(res._meta && ERROR_META_KEY in res._meta), ctx);
    assert.equal(upstreamCalls, 3, `the upstream saw ${upstreamCalls} calls, want 1 + 2 retries${ctx}`);
    assert.equal(callsOf(run.recorded, 'flaky').length, 3);
    assert.deepEqual(run.errors, [], `the SDK reported errors (a duplicate or stray answer?)${ctx}`);
    assert.match(run.stderr, /retried=2 recovered=1/);
});

test('recovery: a destructive tool is not retried', { timeout: TEST_TIMEOUT_MS }, async () => {
    const run = await withFixture(FAST_RETRY, async ({ call, count }) => {
        const res = await call('flaky_destructive', { key: 'd', fails: 1 });
        return { res, upstreamCalls: await count('d') };
    });
    const { res, upstreamCalls } = run.value;
    const ctx = `\n${pretty(res)}`;
    assert.equal(res.isError, true, ctx);
    const error = canonical(res);
    assert.equal(error.attempts, 1, `a destructive tool was retried${ctx}`);
    assert.equal(error.isRetryable, true, `the failure itself is transient: the agent may retry${ctx}`);
    assert.equal(error.errorCategory, 'transient', ctx);
    assert.deepStrictEqual(error.attempted_query, { tool: 'flaky_destructive', arguments: { key: 'd', fails: 1 } }, ctx);
    assert.equal(upstreamCalls, 1, `the upstream saw ${upstreamCalls} calls${ctx}`);
    assert.deepEqual(run.errors, []);
});

for (const [label, cancelOptions, reasonPattern] of [
    // The SDK sends notifications/cancelled with reason String(signal.reason).
    ['AbortSignal', () => {
        const controller = new AbortController();
        setTimeout(() => controller.abort('the user pressed stop'), 300);
        return { signal: controller.signal };
    }, /^the user pressed stop$/],
    ['RequestOptions.timeout', () => ({ timeout: 300 }), /timed out/i],
]) {
    test(`recovery: a call cancelled by ${label} is not retried`, { timeout: TEST_TIMEOUT_MS }, async () => {
        // The first backoff lasts max(jitter * 400 ms, Retry-After 1 s) = 1 s: time to cancel in.
        const text = '503 Service Unavailable, Retry-After: 1';
        const run = await withFixture('[retry]\nbase_delay_ms = 400\nmax_delay_ms = 400\n', async ({ call, count }) => {
            const started = performance.now();
            let outcome;
            try {
                outcome = { result: await call('flaky', { key: 'c', fails: 99, text }, cancelOptions()) };
            } catch (e) {
                outcome = { error: e };
            }
            const cancelledAfter = performance.now() - started;
            await sleep(Math.max(0, started + 1600 - performance.now())); // the retry was due at ~1.0 s
            const afterCancel = await count('c');
            // Control: the same failure, not cancelled, is retried after the announced second.
            const t0 = performance.now();
            const control = await call('flaky', { key: 'c2', fails: 1, text });
            const controlTook = performance.now() - t0;
            return { outcome, cancelledAfter, afterCancel, control, controlTook, controlCalls: await count('c2') };
        });
        const v = run.value;
        assert.ok(v.outcome.error, `the call was answered before it was cancelled:\n${pretty(v.outcome.result)}`);
        assert.ok(v.cancelledAfter < 900, `cancelled after ${v.cancelledAfter} ms`);
        assert.equal(v.afterCancel, 1, `the cancelled call was retried: the upstream saw ${v.afterCancel} calls\nstderr:\n${run.stderr}`);
        const first = callsOf(run.recorded, 'flaky')[0];
        const cancels = cancelsOf(run.recorded, first.id);
        assert.equal(cancels.length, 1, `the SDK's cancellation was not passed on to the upstream once:\n${pretty(run.recorded)}`);
        assert.match(String(cancels[0].params.reason), reasonPattern, pretty(cancels));
        assert.deepEqual(texts(v.control), ['ok after 2 calls'], pretty(v.control));
        assert.equal(v.controlCalls, 2);
        assert.ok(v.controlTook >= 900, `the control retry came after ${v.controlTook} ms, not after Retry-After`);
        // A cancelled request gets no answer (the SDK reports a late one as an unknown message ID).
        assert.deepEqual(run.errors, [], `answers after the cancellation?\nstderr:\n${run.stderr}`);
    });
}

test('recovery: a crash is survived on the same client session', { timeout: TEST_TIMEOUT_MS }, async () => {
    const config = '[restart]\nattempts = 2\nbackoff_ms = 50\n';
    let marker;
    const run = await withFixture(config, async ({ call, client, dir }) => {
        marker = path.join(dir, 'crashed');
        const held = call('hold', { text: 'never released' }).then(
            (result) => ({ result }),
            (error) => ({ error }),
        );
        await sleep(100); // the hold reaches the upstream first
        const crashed = await call('crash_once', { marker });
        const heldOutcome = await held;
        const again = await call('crash_once', { marker });
        const echo = await call('echo', { a: 1 });
        const { tools } = await client.listTools();
        return { crashed, heldOutcome, again, echo, tools };
    });
    const { crashed, heldOutcome, again, echo, tools } = run.value;
    const ctx = `\n--- the crashed call:\n${pretty(crashed)}\n--- stderr:\n${run.stderr}`;
    assert.ok(fs.existsSync(marker), 'the upstream never ran crash_once');
    assert.equal(crashed.isError, true, ctx);
    const error = canonical(crashed);
    assert.deepEqual([error.errorCategory, error.isRetryable], ['transient', true], ctx);
    assert.match(error.message, /exited with status 3/, ctx);
    assert.deepStrictEqual(error.attempted_query, { tool: 'crash_once', arguments: { marker } }, ctx);
    // The other call in flight when the upstream died is answered too, not left hanging.
    assert.ok(heldOutcome.result, `the held call threw: ${heldOutcome.error}`);
    assert.equal(heldOutcome.result.isError, true, pretty(heldOutcome.result));
    const heldError = canonical(heldOutcome.result);
    assert.deepEqual([heldError.errorCategory, heldError.isRetryable], ['transient', true], pretty(heldOutcome.result));
    assert.deepEqual(texts(again), ['survived'], `${pretty(again)}${ctx}`);
    assert.notEqual(again.isError, true);
    assert.deepEqual(texts(echo), ['{"a":1}'], pretty(echo));
    assert.ok(tools.some((t) => t.name === 'crash_once'));
    assert.equal(callsOf(run.recorded, 'crash_once').length, 2, 'the crashed call was sent again');
    const inits = run.recorded.filter((m) => m.method === 'initialize');
    assert.equal(inits.length, 2, `initialize was not replayed to the new upstream:\n${pretty(run.recorded)}`);
    assert.ok(String(inits[1].id).startsWith('mcp-errnorm/replay/'), pretty(inits));
    assert.deepStrictEqual(inits[1].params, inits[0].params, "the replay is not the client's own initialize");
    assert.deepEqual(run.errors, [], `the SDK reported errors${ctx}`);
});

test('recovery: a slow call times out and the session stays usable', { timeout: TEST_TIMEOUT_MS }, async () => {
    const run = await withFixture('[timeouts]\ndefault_seconds = 0.5\n', async ({ call }) => {
        const t0 = performance.now();
        const res = await call('sleep', { seconds: 2 });
        const took = performance.now() - t0;
        // The single-threaded upstream is busy until t0 + 2 s; its late 'slept' must be dropped.
        await sleep(Math.max(0, t0 + 2200 - performance.now()));
        const echo = await call('echo', { after: 'timeout' });
        return { res, took, echo };
    });
    const { res, took, echo } = run.value;
    const ctx = `\n${pretty(res)}\nstderr:\n${run.stderr}`;
    assert.ok(took < 1000, `the timeout answer took ${took} ms${ctx}`);
    assert.ok(took >= 450, `answered before the limit (${took} ms)${ctx}`);
    assert.equal(res.isError, true, ctx);
    const error = canonical(res);
    assert.deepEqual([error.errorCode, error.errorCategory, error.isRetryable], ['TIMEOUT', 'transient', true], ctx);
    assert.deepStrictEqual(error.attempted_query, { tool: 'sleep', arguments: { seconds: 2 } }, ctx);
    assert.deepEqual(texts(echo), ['{"after":"timeout"}'], pretty(echo));
    const sleepId = callsOf(run.recorded, 'sleep')[0].id;
    assert.deepEqual(cancelsOf(run.recorded, sleepId).map((c) => c.params.reason), ['timeout'], pretty(run.recorded));
    assert.deepEqual(run.errors, [], `the late answer reached the client?${ctx}`);
});
