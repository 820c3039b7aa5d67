// The TS SDK's own shutdown through mcp-errnorm: `client.close()` ends stdin, waits 2 s, sends
// SIGTERM, waits 2 s, then SIGKILL. A server that ignores EOF and SIGTERM must not outlive it:
// killed by the proxy before the client kills the proxy (which would leave it behind).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { before, test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';

import { PROXY, REPO_ROOT, TEST_TIMEOUT_MS, VENV_PYTHON, checkPrerequisites } from './helpers.mjs';

before(() => checkPrerequisites());

const FIXTURE = path.join(REPO_ROOT, 'tests', 'fixtures', 'upstream.py');

/** The command lines of the processes that mention `marker`. */
function processesMentioning(marker) {
    const found = [];
    for (const pid of fs.readdirSync('/proc')) {
        if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
        try {
            const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
            if (cmdline.includes(marker)) found.push(`${pid}: ${cmdline}`);
        } catch {
            // gone meanwhile
        }
    }
    return found;
}

test('shutdown: a server that ignores EOF and SIGTERM does not outlive client.close()', { timeout: TEST_TIMEOUT_MS }, async () => {
    // The fixture ignores its arguments: the marker only names its process.
    const marker = `mcp-errnorm-e2e-${randomUUID()}`;
    const transport = new StdioClientTransport({
        command: PROXY,
        args: ['--', VENV_PYTHON, FIXTURE, marker],
        env: { ...getDefaultEnvironment(), FIXTURE_IGNORE_EOF: '1', FIXTURE_IGNORE_TERM: '1' },
        stderr: 'ignore',
    });
    const client = new Client({ name: 'mcp-errnorm-e2e', version: '0.0.0' });
    await client.connect(transport);
    const answer = await client.callTool({ name: 'echo', arguments: { x: 1 } });
    assert.equal(answer.isError, undefined);
    assert.equal(processesMentioning(marker).length, 2, 'the proxy and the server run');
    await client.close();
    let left = processesMentioning(marker);
    for (let i = 0; i < 20 && left.length; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        left = processesMentioning(marker);
    }
    for (const line of left) process.kill(Number(line.split(':')[0]), 'SIGKILL');
    assert.deepEqual(left, [], 'processes still running after the client closed');
});
