"""Shared helpers for the Python end-to-end tests of mcp-errnorm.

The tests drive real MCP servers with the official Python SDK (`mcp`), once
directly and once through the proxy (`mcp-errnorm -- <server command>`), and
compare what the client sees.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator

from mcp import Client, ClientSession, StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

E2E_DIR = Path(__file__).resolve().parent
REPO_ROOT = E2E_DIR.parent.parent
PROXY = Path(os.environ.get("MCP_ERRNORM_BIN") or REPO_ROOT / "target" / "debug" / "mcp-errnorm")
SCHEMA_DIR = REPO_ROOT / "schema"
NODE_MODULES = E2E_DIR / "node_modules"

NODE = shutil.which("node") or "node"
FS_SERVER_JS = NODE_MODULES / "@modelcontextprotocol" / "server-filesystem" / "dist" / "index.js"
EV_SERVER_JS = NODE_MODULES / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"

# A file far over the proxy's stream_answers_over (64 KiB), with what JSON must escape and
# what UTF-8 spells in several bytes: reading it checks that a long answer streams through whole.
BIG_TEXT = "".join(f'line {i}: "quoted" back\\slash\ttab \u00e9\u2713\U0001f389\n' for i in range(15000))

ERROR_META_KEY = "mcp-errnorm/error"
CANONICAL_KEYS = {
    "errorCategory",
    "errorCode",
    "isRetryable",
    "retryAfterSeconds",
    "message",
    "userMessage",
    "alternatives",
    "attempted_query",
    "partial_results",
    "originalError",
    "ruleId",
}
CATEGORIES = {"transient", "validation", "business", "permission", "unknown"}
MCP_PROFILE_KEYS = {"errorCategory", "isRetryable", "message", "errorCode", "attempted_query"}
ENTERPRISE_KEYS = {"success", "data", "error_code", "error_message", "retry_recommended", "retry_after_seconds"}

# Generous bound on "last call answered -> client fully closed" (brief: well under 4 s).
CLOSE_BOUND_SECONDS = 3.5
# Per-test wall-clock guard so a hung proxy fails the test instead of the run.
TEST_TIMEOUT_SECONDS = 60

MODES = ["legacy", "auto"]


def fs_cmd(allowed_dir: Path) -> list[str]:
    return [NODE, str(FS_SERVER_JS), str(allowed_dir)]


def ev_cmd() -> list[str]:
    return [NODE, str(EV_SERVER_JS), "stdio"]


def time_cmd() -> list[str]:
    return [sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC"]


def proxy_cmd(server: list[str], profile: str | None = None) -> list[str]:
    cmd = [str(PROXY)]
    if profile is not None:
        cmd += ["--profile", profile]
    return cmd + ["--", *server]


def pretty(value: Any) -> str:
    try:
        return json.dumps(value, indent=2, ensure_ascii=False, default=str)
    except TypeError:
        return repr(value)


def dump(result: Any) -> dict[str, Any]:
    """The result as the JSON object the SDK parsed (aliases as on the wire)."""
    return result.model_dump(mode="json", by_alias=True, exclude_none=True)


@dataclass
class Outcome:
    """What one tools/call gave the client: a result, or an MCPError raised by the SDK."""

    name: str
    arguments: dict[str, Any]
    result: Any = None
    error: MCPError | None = None

    @property
    def raised(self) -> bool:
        return self.error is not None

    def describe(self) -> str:
        if self.error is not None:
            return f"MCPError code={self.error.code} message={self.error.message!r} data={self.error.error.data!r}"
        return pretty(dump(self.result))

    def upstream_text(self) -> str:
        """The failure text a client sees from the server directly."""
        if self.error is not None:
            return self.error.message
        assert self.result.is_error, f"expected a failure from {self.name}, got {self.describe()}"
        return "\n".join(getattr(block, "text", "") for block in self.result.content)


@dataclass
class Conn:
    label: str
    protocol: str
    _call: Any
    _list: Any
    tools: list[Any] = field(default_factory=list)
    last_call_done: float | None = None
    closed_after: float | None = None  # seconds from last call answered to session fully closed

    async def list_tools(self) -> list[Any]:
        listing = await self._list()
        self.tools = list(listing.tools)
        self.last_call_done = time.monotonic()
        return self.tools

    def tool(self, name: str) -> Any | None:
        return next((t for t in self.tools if t.name == name), None)

    async def call(self, name: str, arguments: dict[str, Any]) -> Outcome:
        out = Outcome(name=name, arguments=arguments)
        try:
            out.result = await self._call(name, arguments)
        except MCPError as exc:
            out.error = exc
        self.last_call_done = time.monotonic()
        return out


@asynccontextmanager
async def connect(cmd: list[str], mode: str, label: str = "") -> AsyncIterator[Conn]:
    """Launch `cmd` over stdio and connect with the SDK.

    mode "legacy": the classic ClientSession + stdio_client + initialize (2025-11-25).
    mode "auto":   the SDK's default `mcp.Client`, which probes `server/discover`
                   first and adopts 2026-07-28 where the server offers it.
    After a clean exit, `conn.closed_after` holds the seconds from the last answer to
    the end of the close.
    """
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env={"RUST_BACKTRACE": "1"})
    conn: Conn
    if mode == "legacy":
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                conn = Conn(label, init.protocol_version, session.call_tool, session.list_tools)
                yield conn
    elif mode == "auto":
        async with Client(params) as client:
            conn = Conn(label, client.protocol_version, client.call_tool, client.list_tools)
            yield conn
    else:  # pragma: no cover
        raise ValueError(mode)
    if conn.last_call_done is not None:
        conn.closed_after = time.monotonic() - conn.last_call_done


def assert_closed_promptly(conn: Conn) -> None:
    assert conn.closed_after is not None, f"{conn.label}: session was not closed cleanly"
    assert conn.closed_after < CLOSE_BOUND_SECONDS, (
        f"{conn.label}: closing the client took {conn.closed_after:.2f}s after the last answer "
        f"(bound {CLOSE_BOUND_SECONDS}s)"
    )


def tools_as_json(tools: list[Any]) -> list[dict[str, Any]]:
    return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]


# ------------------------------------------------------------------ schemas

_schema_cache: dict[str, Any] = {}


def schema(name: str) -> Any | None:
    """The parsed schema/<name>, or None if the lead has not written it (yet)."""
    if name not in _schema_cache:
        path = SCHEMA_DIR / name
        _schema_cache[name] = json.loads(path.read_text()) if path.is_file() else None
    return _schema_cache[name]


def validate_against(instance: Any, schema_name: str, what: str) -> bool:
    """Validate if schema/<schema_name> exists. Returns whether a check ran."""
    sch = schema(schema_name)
    if sch is None:
        return False
    import jsonschema

    cls = jsonschema.validators.validator_for(sch)
    cls.check_schema(sch)
    errors = sorted(cls(sch).iter_errors(instance), key=lambda e: list(e.absolute_path))
    assert not errors, (
        f"{what} does not match schema/{schema_name}:\n"
        + "\n".join(f"  at {list(e.absolute_path)}: {e.message}" for e in errors)
        + f"\ninstance:\n{pretty(instance)}"
    )
    return True


# ------------------------------------------------------- failure contract


@dataclass
class Expect:
    category: str
    retryable: bool
    code: str


NOT_FOUND = Expect("validation", False, "NOT_FOUND")
PERMISSION = Expect("permission", False, "PERMISSION_DENIED")
VALIDATION = Expect("validation", False, "VALIDATION_ERROR")
ALREADY_EXISTS = Expect("validation", False, "ALREADY_EXISTS")
UNAVAILABLE = Expect("transient", True, "SYSTEM_UNAVAILABLE")


def check_rewritten(
    proxied: Outcome,
    *,
    expect: Expect,
    upstream: Outcome,
    source: str,
    rpc_code: int | None,
    has_output_schema: bool,
    profile: str = "mcp",
) -> dict[str, Any]:
    """Assert the full contract of a rewritten failure; returns the canonical object."""
    ctx = f"\n--- result through the proxy:\n{proxied.describe()}\n--- same call directly:\n{upstream.describe()}"
    assert not proxied.raised, f"the proxy let a failure through as a JSON-RPC error{ctx}"
    res = proxied.result
    assert res.is_error is True, f"isError is not true{ctx}"
    if has_output_schema:
        assert res.structured_content is None, (
            f"rewritten failure of a tool with an outputSchema carries structuredContent{ctx}"
        )

    # _meta["mcp-errnorm/error"]: the canonical object
    meta = res.meta or {}
    assert ERROR_META_KEY in meta, f"_meta has no {ERROR_META_KEY!r}{ctx}"
    canon = meta[ERROR_META_KEY]
    assert isinstance(canon, dict), f"_meta[{ERROR_META_KEY!r}] is not an object{ctx}"
    missing = CANONICAL_KEYS - canon.keys()
    assert not missing, f"canonical error lacks keys {sorted(missing)}{ctx}"
    assert canon["errorCategory"] in CATEGORIES, ctx
    assert (canon["errorCategory"], canon["isRetryable"], canon["errorCode"]) == (
        expect.category,
        expect.retryable,
        expect.code,
    ), f"classification: want {expect}{ctx}"
    assert isinstance(canon["errorCode"], str), ctx
    assert isinstance(canon["isRetryable"], bool), ctx
    ras = canon["retryAfterSeconds"]
    assert ras is None or (isinstance(ras, int) and not isinstance(ras, bool)), f"retryAfterSeconds {ras!r}{ctx}"
    assert isinstance(canon["message"], str) and canon["message"], ctx
    assert canon["userMessage"] is None or isinstance(canon["userMessage"], str), ctx
    alts = canon["alternatives"]
    assert isinstance(alts, list) and all(isinstance(a, str) for a in alts), f"alternatives {alts!r}{ctx}"
    assert canon["attempted_query"] == {"tool": proxied.name, "arguments": proxied.arguments}, (
        f"attempted_query does not echo the call{ctx}"
    )
    orig = canon["originalError"]
    assert isinstance(orig, dict), ctx
    assert orig.get("source") == source, f"originalError.source: want {source!r}{ctx}"
    raw = upstream.upstream_text()
    assert isinstance(orig.get("text"), str) and raw in orig["text"], (
        f"originalError.text does not contain the upstream's text {raw!r}{ctx}"
    )
    assert "rpcCode" in orig and orig["rpcCode"] == rpc_code, f"originalError.rpcCode: want {rpc_code!r}{ctx}"
    assert canon["ruleId"] is None or isinstance(canon["ruleId"], str), ctx
    validate_against(canon, "structured-error.schema.json", "_meta['mcp-errnorm/error']")

    # content[0]: compact JSON text in the chosen profile
    assert res.content, f"no content{ctx}"
    first = res.content[0]
    assert first.type == "text", f"content[0] is not text{ctx}"
    try:
        body = json.loads(first.text)
    except json.JSONDecodeError as exc:
        raise AssertionError(f"content[0].text is not JSON ({exc}){ctx}") from None
    assert isinstance(body, dict), ctx
    compact = json.dumps(body, separators=(",", ":"), ensure_ascii=False)
    assert first.text == compact, f"content[0].text is not compact JSON:\n{first.text}{ctx}"
    if profile == "mcp":
        missing = MCP_PROFILE_KEYS - body.keys()
        assert not missing, f"profile mcp body lacks {sorted(missing)}{ctx}"
        for key in MCP_PROFILE_KEYS:
            assert body[key] == canon[key], f"profile mcp body's {key} differs from the canonical{ctx}"
        validate_against(body, "profile-mcp.schema.json", "content[0] JSON (profile mcp)")
    elif profile == "enterprise":
        missing = ENTERPRISE_KEYS - body.keys()
        assert not missing, f"profile enterprise body lacks {sorted(missing)}{ctx}"
        assert body["success"] is False, ctx
        assert body["data"] is None, ctx
        assert body["error_code"] == canon["errorCode"], ctx
        assert isinstance(body["error_message"], str) and body["error_message"], ctx
        assert body["retry_recommended"] == canon["isRetryable"], ctx
        # Without a wait from the server, a recommended retry comes with backoff (seed 000).
        wait = canon["retryAfterSeconds"]
        if wait is None and canon["isRetryable"]:
            wait = 2 ** (min(max(canon["attempts"], 1), 7) - 1)
        assert body["retry_after_seconds"] == wait, ctx
        validate_against(body, "profile-enterprise.schema.json", "content[0] JSON (profile enterprise)")
    else:  # pragma: no cover
        raise ValueError(profile)
    return canon


def assert_same_success(direct: Outcome, proxied: Outcome, normalize=lambda d: d) -> None:
    ctx = f"\n--- through the proxy:\n{proxied.describe()}\n--- directly:\n{direct.describe()}"
    assert not direct.raised and not direct.result.is_error, f"the direct call failed{ctx}"
    assert not proxied.raised, f"the proxied call raised{ctx}"
    assert normalize(dump(proxied.result)) == normalize(dump(direct.result)), (
        f"the proxy changed a successful result{ctx}"
    )
    meta = proxied.result.meta or {}
    assert ERROR_META_KEY not in meta, f"a success carries {ERROR_META_KEY}{ctx}"
