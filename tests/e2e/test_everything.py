"""@modelcontextprotocol/server-everything (stdio) through mcp-errnorm, driven by the Python SDK."""

from __future__ import annotations

import anyio
import pytest

from e2e_support import (
    MODES,
    NOT_FOUND,
    TEST_TIMEOUT_SECONDS,
    UNAVAILABLE,
    VALIDATION,
    assert_closed_promptly,
    assert_same_success,
    check_rewritten,
    connect,
    ev_cmd,
    pretty,
    proxy_cmd,
    tools_as_json,
)

pytestmark = pytest.mark.anyio

FAILURES = {
    # id: (tool, arguments, expectation, substring the upstream's own text must have)
    "echo-missing-message": ("echo", {}, VALIDATION, "MCP error -32602: Input validation error"),
    # Port 9 (discard) on loopback: nothing listens, the connection is refused at once.
    "fetch-failed": ("gzip-file-as-resource", {"data": "http://127.0.0.1:9/x"}, UNAVAILABLE, "fetch failed"),
    "unsupported-url-protocol": (
        "gzip-file-as-resource",
        {"data": "file:///etc/passwd"},
        VALIDATION,
        "Unsupported URL protocol",
    ),
    "unknown-tool": ("no_such_tool", {}, NOT_FOUND, "MCP error -32602: Tool no_such_tool not found"),
}


@pytest.mark.parametrize("mode", MODES)
async def test_successes_pass_through_unchanged(mode):
    calls = [
        ("echo", {"message": "hello through the proxy"}),
        ("get-sum", {"a": 2, "b": 40}),
        ("get-structured-content", {"location": "Chicago"}),
    ]
    with anyio.fail_after(TEST_TIMEOUT_SECONDS):
        async with connect(ev_cmd(), mode, "direct") as d:
            direct_tools = await d.list_tools()
            direct = [await d.call(n, a) for n, a in calls]
        async with connect(proxy_cmd(ev_cmd()), mode, "proxy") as p:
            proxy_tools = await p.list_tools()
            proxied = [await p.call(n, a) for n, a in calls]
    assert_closed_promptly(p)
    assert p.protocol == d.protocol, f"protocol via proxy {p.protocol} != direct {d.protocol}"
    assert tools_as_json(proxy_tools) == tools_as_json(direct_tools), (
        f"tools/list differs through the proxy:\n{pretty(tools_as_json(proxy_tools))}"
    )
    assert direct[2].result.structured_content is not None
    for dr, pr in zip(direct, proxied):
        assert_same_success(dr, pr)


@pytest.mark.parametrize("case", list(FAILURES))
@pytest.mark.parametrize("mode", MODES)
async def test_failure_is_rewritten(mode, case):
    tool, args, expect, marker = FAILURES[case]
    with anyio.fail_after(TEST_TIMEOUT_SECONDS):
        async with connect(ev_cmd(), mode, "direct") as d:
            await d.list_tools()
            direct = await d.call(tool, args)
        async with connect(proxy_cmd(ev_cmd()), mode, "proxy") as p:
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
async def test_structured_content_tool_failure(mode):
    """get-structured-content declares an outputSchema; a bad location fails input validation.

    The rewritten failure must be an isError result without structuredContent.
    """
    args = {"location": "Atlantis"}
    with anyio.fail_after(TEST_TIMEOUT_SECONDS):
        async with connect(ev_cmd(), mode, "direct") as d:
            await d.list_tools()
            direct = await d.call("get-structured-content", args)
        async with connect(proxy_cmd(ev_cmd()), mode, "proxy") as p:
            await p.list_tools()
            spec = p.tool("get-structured-content")
            proxied = await p.call("get-structured-content", args)
    assert_closed_promptly(p)
    assert spec is not None and spec.output_schema, "get-structured-content no longer declares an outputSchema"
    assert not direct.raised and direct.result.is_error, direct.describe()
    check_rewritten(
        proxied, expect=VALIDATION, upstream=direct, source="result", rpc_code=None, has_output_schema=True
    )
