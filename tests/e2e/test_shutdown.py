"""Closing the client ends the proxy and the server promptly, leaving no process behind."""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

import anyio
import pytest

from e2e_support import (
    MODES,
    TEST_TIMEOUT_SECONDS,
    assert_closed_promptly,
    connect,
    ev_cmd,
    fs_cmd,
    proxy_cmd,
    time_cmd,
)

pytestmark = pytest.mark.anyio


def _processes_mentioning(marker: str) -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in cmdline:
            found.append(f"{entry.name}: {cmdline}")
    return found


@pytest.mark.parametrize("mode", MODES)
async def test_close_leaves_no_process(mode, tmp_path):
    """A uniquely named allowed dir marks the filesystem server's command line."""
    allowed = tmp_path / f"allowed-{uuid.uuid4().hex}"
    allowed.mkdir()
    marker = allowed.name
    with anyio.fail_after(TEST_TIMEOUT_SECONDS):
        async with connect(proxy_cmd(fs_cmd(allowed)), mode, "proxy") as p:
            await p.list_tools()
            running = _processes_mentioning(marker)
            await p.call("list_allowed_directories", {})
    assert len(running) >= 2, f"expected the proxy and the server to be running, saw {running}"
    assert_closed_promptly(p)
    deadline = time.monotonic() + 1.0
    while (left := _processes_mentioning(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not left, f"processes still running after the client closed: {left}"


@pytest.mark.parametrize(
    "server",
    [pytest.param(ev_cmd, id="everything"), pytest.param(time_cmd, id="time")],
)
@pytest.mark.parametrize("mode", MODES)
async def test_close_is_prompt(mode, server):
    with anyio.fail_after(TEST_TIMEOUT_SECONDS):
        async with connect(proxy_cmd(server()), mode, "proxy") as p:
            await p.list_tools()
    assert_closed_promptly(p)
    print(f"closed {p.closed_after:.3f}s after the last answer")
