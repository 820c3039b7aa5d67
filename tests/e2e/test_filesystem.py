"""@modelcontextprotocol/server-filesystem through mcp-errnorm, driven by the Python SDK.

Every test runs the same call against the server directly and through the proxy,
in both client modes: "legacy" (ClientSession + initialize, 2025-11-25) and "auto"
(mcp.Client, which probes server/discover first and falls back to initialize).
"""

from __future__ import annotations

import anyio
import pytest

from e2e_support import (
    ALREADY_EXISTS,
    BIG_TEXT,
    MODES,
    NOT_FOUND,
    PERMISSION,
    TEST_TIMEOUT_SECONDS,
    VALIDATION,
    assert_closed_promptly,
    assert_same_success,
    check_rewritten,
    connect,
    fs_cmd,
    pretty,
    proxy_cmd,
    tools_as_json,
)

pytestmark = pytest.mark.anyio


def _failures(sb):
    a = sb.allowed
    return {
        # id: (tool, arguments, expectation, substring the upstream's own text must have)
        "enoent": ("read_text_file", {"path": f"{a}/missing.txt"}, NOT_FOUND, "ENOENT: no such file or directory"),
        "access-denied": (
            "read_text_file",
            {"path": f"{sb.outside}/secret.txt"},
            PERMISSION,
            "Access denied - path outside allowed directories",
        ),
        "eisdir": ("read_text_file", {"path": f"{a}/empty_dir"}, VALIDATION, "EISDIR"),
        "enotdir": ("list_directory", {"path": f"{a}/hello.txt"}, VALIDATION, "ENOTDIR"),
        "move-onto-existing": (
            "move_file",
            {"source": f"{a}/sub/file.txt", "destination": f"{a}/hello.txt"},
            ALREADY_EXISTS,
            "Destination already exists",
        ),
        "edit-no-match": (
            "edit_file",
            {"path": f"{a}/hello.txt", "edits": [{"oldText": "NO SUCH TEXT", "newText": "x"}]},
            NOT_FOUND,
            "Could not find exact match for edit",
        ),
        "head-and-tail": (
            "read_text_file",
            {"path": f"{a}/hello.txt", "head": 1, "tail": 1},
            VALIDATION,
            "Cannot specify both head and tail",
        ),
        "wrong-argument-type": ("read_text_file", {"path": 123}, VALIDATION, "MCP error -32602: Input validation error"),
        "unknown-tool": ("no_such_tool", {}, NOT_FOUND, "MCP error -32602: Tool no_such_tool not found"),
    }


FAILURE_IDS = list(_failures(type("S", (), {"allowed": "", "outside": ""})).keys())


@pytest.mark.parametrize("mode", MODES)
async def test_successes_pass_through_unchanged(mode, sandbox):
    calls = [
        ("read_text_file", {"path": f"{sandbox.allowed}/hello.txt"}),
        ("list_directory", {"path": f"{sandbox.allowed}/empty_dir"}),
        ("search_files", {"path": str(sandbox.allowed), "pattern": "zzz-no-such-name"}),
        ("list_allowed_directories", {}),
        ("read_text_file", {"path": f"{sandbox.allowed}/big.txt"}),
    ]
    with anyio.fail_after(TEST_TIMEOUT_SECONDS):
        async with connect(fs_cmd(sandbox.allowed), mode, "direct") as d:
            direct_tools = await d.list_tools()
            direct = [await d.call(n, a) for n, a in calls]
        async with connect(proxy_cmd(fs_cmd(sandbox.allowed)), mode, "proxy") as p:
            proxy_tools = await p.list_tools()
            proxied = [await p.call(n, a) for n, a in calls]
    assert_closed_promptly(p)
    assert p.protocol == d.protocol, f"protocol via proxy {p.protocol} != direct {d.protocol}"
    assert tools_as_json(proxy_tools) == tools_as_json(direct_tools), (
        f"tools/list differs through the proxy:\n{pretty(tools_as_json(proxy_tools))}"
    )
    assert direct[0].result.content[0].text == "hello world\n"
    assert direct[-1].result.content[0].text == BIG_TEXT
    for dr, pr in zip(direct, proxied):
        assert_same_success(dr, pr)


@pytest.mark.parametrize("case", FAILURE_IDS)
@pytest.mark.parametrize("mode", MODES)
async def test_failure_is_rewritten(mode, case, sandbox):
    tool, args, expect, marker = _failures(sandbox)[case]
    with anyio.fail_after(TEST_TIMEOUT_SECONDS):
        async with connect(fs_cmd(sandbox.allowed), mode, "direct") as d:
            await d.list_tools()
            direct = await d.call(tool, args)
        async with connect(proxy_cmd(fs_cmd(sandbox.allowed)), mode, "proxy") as p:
            await p.list_tools()
            proxied = await p.call(tool, args)
    assert_closed_promptly(p)
    # The server itself reports this failure as an isError result with the known text.
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
    # the failed calls left the sandbox alone
    assert (sandbox.allowed / "hello.txt").read_text() == "hello world\n"
    assert (sandbox.allowed / "sub" / "file.txt").is_file()


async def test_output_schema_tools_failure_has_no_structured_content(sandbox):
    """read_text_file declares an outputSchema: the rewritten failure must not carry structuredContent."""
    with anyio.fail_after(TEST_TIMEOUT_SECONDS):
        async with connect(proxy_cmd(fs_cmd(sandbox.allowed)), "legacy", "proxy") as p:
            await p.list_tools()
            spec = p.tool("read_text_file")
            proxied = await p.call("read_text_file", {"path": f"{sandbox.allowed}/missing.txt"})
    assert_closed_promptly(p)
    assert spec is not None and spec.output_schema, "read_text_file no longer declares an outputSchema"
    assert not proxied.raised, proxied.describe()
    assert proxied.result.is_error is True, proxied.describe()
    assert proxied.result.structured_content is None, proxied.describe()
