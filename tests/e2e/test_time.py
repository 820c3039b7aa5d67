"""mcp-server-time (Python reference server) through mcp-errnorm, driven by the Python SDK.

In "auto" mode the client probes server/discover and this server answers it, so
the session runs on protocol 2026-07-28; in "legacy" mode it is 2025-11-25.
"""

from __future__ import annotations

import copy
import json

import anyio
import pytest

from e2e_support import (
    MODES,
    NOT_FOUND,
    TEST_TIMEOUT_SECONDS,
    VALIDATION,
    assert_closed_promptly,
    assert_same_success,
    check_rewritten,
    connect,
    pretty,
    proxy_cmd,
    time_cmd,
    tools_as_json,
)

pytestmark = pytest.mark.anyio

FAILURES = {
    # id: (tool, arguments, expectation, substring the upstream's own text must have)
    "invalid-timezone": (
        "get_current_time",
        {"timezone": "Mars/Olympus_Mons"},
        VALIDATION,
        "Invalid timezone",
    ),
    "invalid-time": (
        "convert_time",
        {"source_timezone": "UTC", "time": "25:99", "target_timezone": "Asia/Tokyo"},
        VALIDATION,
        "Invalid time format",
    ),
    "missing-argument": ("get_current_time", {}, VALIDATION, "validation error"),
}


def _without_clock(result: dict) -> dict:
    """get_current_time's datetime moves between two calls: drop it from both representations."""
    out = copy.deepcopy(result)
    sc = out.get("structuredContent")
    if isinstance(sc, dict):
        sc.pop("datetime", None)
    for block in out.get("content", []):
        if block.get("type") == "text":
            try:
                body = json.loads(block["text"])
            except ValueError:
                continue
            if isinstance(body, dict):
                body.pop("datetime", None)
                block["text"] = json.dumps(body, sort_keys=True)
    return out


@pytest.mark.parametrize("mode", MODES)
async def test_successes_pass_through_unchanged(mode):
    convert = ("convert_time", {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"})
    now = ("get_current_time", {"timezone": "UTC"})
    with anyio.fail_after(TEST_TIMEOUT_SECONDS):
        async with connect(time_cmd(), mode, "direct") as d:
            direct_tools = await d.list_tools()
            d_convert = await d.call(*convert)
            d_now = await d.call(*now)
        async with connect(proxy_cmd(time_cmd()), mode, "proxy") as p:
            proxy_tools = await p.list_tools()
            p_convert = await p.call(*convert)
            p_now = await p.call(*now)
    assert_closed_promptly(p)
    assert p.protocol == d.protocol, f"protocol via proxy {p.protocol} != direct {d.protocol}"
    if mode == "auto":
        assert d.protocol == "2026-07-28", f"the time server should speak 2026-07-28 in auto mode, got {d.protocol}"
    assert tools_as_json(proxy_tools) == tools_as_json(direct_tools), (
        f"tools/list differs through the proxy:\n{pretty(tools_as_json(proxy_tools))}"
    )
    assert d_convert.result.structured_content["time_difference"] == "+9.0h"
    assert_same_success(d_convert, p_convert)
    assert_same_success(d_now, p_now, normalize=_without_clock)


@pytest.mark.parametrize("case", list(FAILURES))
@pytest.mark.parametrize("mode", MODES)
async def test_failure_is_rewritten(mode, case):
    tool, args, expect, marker = FAILURES[case]
    with anyio.fail_after(TEST_TIMEOUT_SECONDS):
        async with connect(time_cmd(), mode, "direct") as d:
            await d.list_tools()
            direct = await d.call(tool, args)
        async with connect(proxy_cmd(time_cmd()), mode, "proxy") as p:
            await p.list_tools()
            proxied = await p.call(tool, args)
    assert_closed_promptly(p)
    assert not direct.raised and direct.result.is_error, direct.describe()
    assert marker in direct.upstream_text(), direct.describe()
    spec = p.tool(tool)
    check_rewritten(
        proxied,
        expect=expect,
        upstream=direct,
        source="result",
        rpc_code=None,
        has_output_schema=bool(spec is not None and spec.output_schema),
    )


@pytest.mark.parametrize("mode", MODES)
async def test_unknown_tool_rpc_error_becomes_result(mode):
    """The server answers an unknown tool with JSON-RPC -32602; through the proxy it is an isError result."""
    with anyio.fail_after(TEST_TIMEOUT_SECONDS):
        async with connect(time_cmd(), mode, "direct") as d:
            await d.list_tools()
            direct = await d.call("no_such_tool", {})
        async with connect(proxy_cmd(time_cmd()), mode, "proxy") as p:
            await p.list_tools()
            proxied = await p.call("no_such_tool", {})
    assert_closed_promptly(p)
    assert direct.raised and direct.error.code == -32602, direct.describe()
    assert "Unknown tool: no_such_tool" in direct.error.message, direct.describe()
    check_rewritten(
        proxied, expect=NOT_FOUND, upstream=direct, source="rpc", rpc_code=-32602, has_output_schema=False
    )
