"""Recovery through the proxy, seen by the official Python SDK client (`mcp` ClientSession): a
transient failure retried away, a destructive tool left alone, a cancelled call not retried, an
upstream crash survived on the same session, a slow call timed out.

The upstream is tests/fixtures/upstream.py (scriptable faults); it records every line it reads
in FIXTURE_RECORD (set through the config's [env]), so the tests can see what it was sent.

Only the classic ClientSession (2025-11-25): the fixture answers `server/discover` with
2026-07-28, so the default `mcp.Client` adopts that revision, and then rejects the fixture's own
tools/list, which lacks that revision's required resultType / cacheScope / ttlMs.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, AsyncIterator

import anyio
import pytest

from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from e2e_support import ERROR_META_KEY, PROXY, REPO_ROOT, dump, pretty

pytestmark = pytest.mark.anyio

FIXTURE = REPO_ROOT / "tests" / "fixtures" / "upstream.py"
TIMEOUT = 30


@dataclass
class Fixture:
    """A client session to the proxy in front of the fixture upstream."""

    session: ClientSession
    record: Path
    log: Path

    async def call(self, name: str, arguments: dict[str, Any], **kw: Any) -> Any:
        return await self.session.call_tool(name, arguments, **kw)

    async def count(self, key: str) -> int:
        res = await self.call("count", {"key": key})
        assert not res.is_error, pretty(dump(res))
        return int(res.content[0].text)

    def recorded(self) -> list[dict[str, Any]]:
        """Every JSON line the upstream (all its incarnations) received, in order."""
        out = []
        for line in self.record.read_text().splitlines():
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
        return out

    def proxy_log(self) -> str:
        return self.log.read_text() if self.log.exists() else ""


@asynccontextmanager
async def proxied_fixture(tmp_path: Path, config: str = "") -> AsyncIterator[Fixture]:
    record = tmp_path / "record.jsonl"
    log = tmp_path / "proxy.log"
    cfg = tmp_path / "config.toml"
    # Top-level keys first, then the test's own tables, then [env] (a table ends the top level).
    cfg.write_text(f'log_file = "proxy.log"\n{config}\n[env]\nFIXTURE_RECORD = "{record}"\n')
    params = StdioServerParameters(
        command=str(PROXY),
        args=["--config", str(cfg), "--", sys.executable, str(FIXTURE)],
        env={"RUST_BACKTRACE": "1"},
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            await session.list_tools()  # the annotations decide what is retried
            yield Fixture(session, record, log)


class SdkLog(logging.Handler):
    """What the SDK logs: a second answer to one request shows up here as a dropped response for
    an unknown/late id (debug level), a broken message as a warning or an error."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def complaints(self) -> list[str]:
        return [
            f"{r.name} {r.levelname}: {r.getMessage()}"
            for r in self.records
            if r.levelno >= logging.WARNING or "unknown/late" in r.getMessage() or "already gone" in r.getMessage()
        ]


@pytest.fixture
def sdk_log() -> Any:
    handler = SdkLog()
    logger = logging.getLogger("mcp")
    old = logger.level
    logger.setLevel(logging.DEBUG)
    logger.addHandler(handler)
    yield handler
    logger.removeHandler(handler)
    logger.setLevel(old)


def canonical(res: Any) -> dict[str, Any]:
    meta = res.meta or {}
    assert ERROR_META_KEY in meta, f"no _meta[{ERROR_META_KEY!r}]:\n{pretty(dump(res))}"
    return meta[ERROR_META_KEY]


def calls_of(recorded: list[dict[str, Any]], tool: str) -> list[dict[str, Any]]:
    return [m for m in recorded if m.get("method") == "tools/call" and m["params"]["name"] == tool]


def cancels_of(recorded: list[dict[str, Any]], request_id: Any) -> list[dict[str, Any]]:
    return [
        m
        for m in recorded
        if m.get("method") == "notifications/cancelled" and m["params"].get("requestId") == request_id
    ]


async def test_transient_failure_recovered_by_retry(tmp_path, sdk_log):
    config = "[retry]\nbase_delay_ms = 1\nmax_delay_ms = 20\n"
    with anyio.fail_after(TIMEOUT):
        async with proxied_fixture(tmp_path, config) as f:
            res = await f.call("flaky", {"key": "k", "fails": 2})
            # One more round trip: a second answer to the flaky call would have arrived by now.
            upstream_calls = await f.count("k")
    ctx = f"\n{pretty(dump(res))}\nproxy log:\n{f.proxy_log()}"
    assert res.is_error is not True, f"the retry did not recover the call{ctx}"
    assert [b.text for b in res.content] == ["ok after 3 calls"], ctx
    assert ERROR_META_KEY not in (res.meta or {}), ctx
    assert upstream_calls == 3, f"the upstream saw {upstream_calls} calls, want 1 + 2 retries{ctx}"
    assert len(calls_of(f.recorded(), "flaky")) == 3
    assert sdk_log.complaints() == [], f"the SDK complained (a duplicate or stray answer?){ctx}"
    assert "retried=2 recovered=1" in f.proxy_log(), f.proxy_log()


async def test_destructive_tool_not_retried(tmp_path, sdk_log):
    config = "[retry]\nbase_delay_ms = 1\nmax_delay_ms = 20\n"
    with anyio.fail_after(TIMEOUT):
        async with proxied_fixture(tmp_path, config) as f:
            res = await f.call("flaky_destructive", {"key": "d", "fails": 1})
            upstream_calls = await f.count("d")
    ctx = f"\n{pretty(dump(res))}"
    assert res.is_error is True, ctx
    error = canonical(res)
    assert error["attempts"] == 1, f"a destructive tool was retried{ctx}"
    assert error["isRetryable"] is True, f"the failure itself is transient: the agent may retry{ctx}"
    assert error["errorCategory"] == "transient", ctx
    assert error["attempted_query"] == {"tool": "flaky_destructive", "arguments": {"key": "d", "fails": 1}}, ctx
    assert upstream_calls == 1, f"the upstream saw {upstream_calls} calls{ctx}"
    assert sdk_log.complaints() == []


async def _cancel_by_scope(f: Fixture, args: dict[str, Any]) -> str:
    with anyio.move_on_after(0.3) as scope:
        res = await f.session.call_tool("flaky", args)
        pytest.fail(f"the call was answered before it was cancelled:\n{pretty(dump(res))}")
    assert scope.cancelled_caught
    return "caller cancelled"


async def _cancel_by_read_timeout(f: Fixture, args: dict[str, Any]) -> str:
    with pytest.raises(MCPError) as raised:
        res = await f.session.call_tool("flaky", args, read_timeout_seconds=0.3)
        pytest.fail(f"the call was answered before it timed out:\n{pretty(dump(res))}")
    assert "timed out" in raised.value.message.lower(), raised.value.message
    return "timed out"


@pytest.mark.parametrize(
    "cancel", [pytest.param(_cancel_by_scope, id="cancel-scope"), pytest.param(_cancel_by_read_timeout, id="read-timeout")]
)
async def test_cancelled_call_not_retried(cancel, tmp_path, sdk_log):
    # The first backoff lasts max(jitter * 400 ms, Retry-After 1 s) = 1 s: time to cancel in.
    config = "[retry]\nbase_delay_ms = 400\nmax_delay_ms = 400\n"
    text = "503 Service Unavailable, Retry-After: 1"
    with anyio.fail_after(TIMEOUT):
        async with proxied_fixture(tmp_path, config) as f:
            started = time.monotonic()
            reason = await cancel(f, {"key": "c", "fails": 99, "text": text})
            await anyio.sleep(max(0.0, started + 1.6 - time.monotonic()))  # the retry was due at ~1.0 s
            after_cancel = await f.count("c")
            # Control: the same failure, not cancelled, is retried after the announced second.
            t0 = time.monotonic()
            control = await f.call("flaky", {"key": "c2", "fails": 1, "text": text})
            control_took = time.monotonic() - t0
            control_calls = await f.count("c2")
    recorded = f.recorded()
    assert after_cancel == 1, f"the cancelled call was retried: the upstream saw {after_cancel} calls"
    first = calls_of(recorded, "flaky")[0]
    cancels = cancels_of(recorded, first["id"])
    assert len(cancels) == 1 and reason in cancels[0]["params"].get("reason", ""), (
        f"the SDK's cancellation was not passed on to the upstream once:\n{pretty(recorded)}"
    )
    assert [b.text for b in control.content] == ["ok after 2 calls"], pretty(dump(control))
    assert control_calls == 2 and control_took >= 0.9, (control_calls, control_took)
    # A cancelled request gets no answer (the SDK logs a late one as unknown).
    assert sdk_log.complaints() == [], f"answers after the cancellation?\nproxy log:\n{f.proxy_log()}"


async def test_crash_survived_on_the_same_session(tmp_path, sdk_log):
    marker = tmp_path / "crashed"
    config = "[restart]\nattempts = 2\nbackoff_ms = 50\n"
    with anyio.fail_after(TIMEOUT):
        async with proxied_fixture(tmp_path, config) as f:
            held: list[Any] = []

            async def hold() -> None:
                held.append(await f.call("hold", {"text": "never released"}))

            async with anyio.create_task_group() as tg:
                tg.start_soon(hold)
                await anyio.sleep(0.1)  # the hold reaches the upstream first
                crashed = await f.call("crash_once", {"marker": str(marker)})
            again = await f.call("crash_once", {"marker": str(marker)})
            echo = await f.call("echo", {"a": 1})
            listed = await f.session.list_tools()
    ctx = f"\n--- the crashed call:\n{pretty(dump(crashed))}\n--- proxy log:\n{f.proxy_log()}"
    assert marker.exists(), "the upstream never ran crash_once"
    assert crashed.is_error is True, ctx
    error = canonical(crashed)
    assert (error["errorCategory"], error["isRetryable"]) == ("transient", True), ctx
    assert "exited with status 3" in error["message"], ctx
    assert error["attempted_query"] == {"tool": "crash_once", "arguments": {"marker": str(marker)}}, ctx
    # The other call in flight when the upstream died is answered too, not left hanging.
    assert len(held) == 1 and held[0].is_error is True, pretty([dump(h) for h in held])
    held_error = canonical(held[0])
    assert (held_error["errorCategory"], held_error["isRetryable"]) == ("transient", True), pretty(dump(held[0]))
    assert [b.text for b in again.content] == ["survived"], f"{pretty(dump(again))}{ctx}"
    assert again.is_error is not True
    assert [b.text for b in echo.content] == ['{"a":1}'], pretty(dump(echo))
    assert "crash_once" in [t.name for t in listed.tools]
    recorded = f.recorded()
    assert len(calls_of(recorded, "crash_once")) == 2, "the crashed call was sent again"
    inits = [m for m in recorded if m.get("method") == "initialize"]
    assert len(inits) == 2, f"initialize was not replayed to the new upstream:\n{pretty(recorded)}"
    assert str(inits[1]["id"]).startswith("mcp-errnorm/replay/")
    assert inits[1]["params"] == inits[0]["params"], "the replay is not the client's own initialize"
    assert sdk_log.complaints() == [], f"the SDK complained{ctx}"


async def test_timeout(tmp_path, sdk_log):
    config = "[timeouts]\ndefault_seconds = 0.5\n"
    with anyio.fail_after(TIMEOUT):
        async with proxied_fixture(tmp_path, config) as f:
            t0 = time.monotonic()
            res = await f.call("sleep", {"seconds": 2})
            took = time.monotonic() - t0
            # The single-threaded upstream is busy until t0 + 2 s; its late 'slept' must be dropped.
            await anyio.sleep(max(0.0, t0 + 2.2 - time.monotonic()))
            echo = await f.call("echo", {"after": "timeout"})
    ctx = f"\n{pretty(dump(res))}\nproxy log:\n{f.proxy_log()}"
    assert took < 1.0, f"the timeout answer took {took:.2f}s{ctx}"
    assert took >= 0.45, f"answered before the limit ({took:.2f}s){ctx}"
    assert res.is_error is True, ctx
    error = canonical(res)
    assert (error["errorCode"], error["errorCategory"], error["isRetryable"]) == ("TIMEOUT", "transient", True), ctx
    assert error["attempted_query"] == {"tool": "sleep", "arguments": {"seconds": 2}}, ctx
    assert [b.text for b in echo.content] == ['{"after":"timeout"}'], pretty(dump(echo))
    recorded = f.recorded()
    sleep_id = calls_of(recorded, "sleep")[0]["id"]
    cancels = cancels_of(recorded, sleep_id)
    assert [c["params"].get("reason") for c in cancels] == ["timeout"], pretty(recorded)
    assert sdk_log.complaints() == [], f"the late answer reached the client?{ctx}"
