"""A client may call a tool without listing tools first (MCP does not require tools/list before
tools/call; hosts also reuse a tool list cached from an earlier session). The failure of a tool
that declares an outputSchema must still not carry structuredContent: a strict client holding
that outputSchema (e.g. the TS SDK 1.x Client) validates structuredContent even on isError.
"""

from __future__ import annotations

import anyio
import pytest

from e2e_support import NOT_FOUND, TEST_TIMEOUT_SECONDS, assert_closed_promptly, check_rewritten, connect, fs_cmd, proxy_cmd

pytestmark = pytest.mark.anyio


async def test_output_schema_tool_called_without_listing(sandbox):
    args = {"path": f"{sandbox.allowed}/missing.txt"}
    with anyio.fail_after(TEST_TIMEOUT_SECONDS):
        async with connect(fs_cmd(sandbox.allowed), "legacy", "direct") as d:
            tools = await d.list_tools()
            direct = await d.call("read_text_file", args)
        async with connect(proxy_cmd(fs_cmd(sandbox.allowed)), "legacy", "proxy") as p:
            proxied = await p.call("read_text_file", args)  # no tools/list in this session
    assert_closed_promptly(p)
    spec = next(t for t in tools if t.name == "read_text_file")
    assert spec.output_schema, "read_text_file no longer declares an outputSchema"
    check_rewritten(
        proxied, expect=NOT_FOUND, upstream=direct, source="result", rpc_code=None, has_output_schema=True
    )
