"""--profile enterprise through the Python SDK: the model-facing body changes, the canonical _meta does not."""

from __future__ import annotations

import anyio
import pytest

from e2e_support import (
    NOT_FOUND,
    TEST_TIMEOUT_SECONDS,
    assert_closed_promptly,
    check_rewritten,
    connect,
    fs_cmd,
    proxy_cmd,
    time_cmd,
)

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_enterprise_profile_result_failure(mode, sandbox):
    args = {"path": f"{sandbox.allowed}/missing.txt"}
    with anyio.fail_after(TEST_TIMEOUT_SECONDS):
        async with connect(fs_cmd(sandbox.allowed), mode, "direct") as d:
            await d.list_tools()
            direct = await d.call("read_text_file", args)
        async with connect(proxy_cmd(fs_cmd(sandbox.allowed), profile="enterprise"), mode, "proxy") as p:
            await p.list_tools()
            proxied = await p.call("read_text_file", args)
    assert_closed_promptly(p)
    check_rewritten(
        proxied,
        expect=NOT_FOUND,
        upstream=direct,
        source="result",
        rpc_code=None,
        has_output_schema=True,
        profile="enterprise",
    )


async def test_enterprise_profile_rpc_failure_on_2026_07_28():
    """JSON-RPC -32602 from the time server on a 2026-07-28 session (mcp.Client auto mode)."""
    with anyio.fail_after(TEST_TIMEOUT_SECONDS):
        async with connect(time_cmd(), "auto", "direct") as d:
            await d.list_tools()
            direct = await d.call("no_such_tool", {})
        async with connect(proxy_cmd(time_cmd(), profile="enterprise"), "auto", "proxy") as p:
            await p.list_tools()
            proxied = await p.call("no_such_tool", {})
    assert_closed_promptly(p)
    assert p.protocol == "2026-07-28", p.protocol
    assert direct.raised, direct.describe()
    check_rewritten(
        proxied,
        expect=NOT_FOUND,
        upstream=direct,
        source="rpc",
        rpc_code=-32602,
        has_output_schema=False,
        profile="enterprise",
    )
