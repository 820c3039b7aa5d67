"""pytest fixtures for the end-to-end tests (see e2e_support.py for the helpers)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from e2e_support import BIG_TEXT, EV_SERVER_JS, FS_SERVER_JS, PROXY, SCHEMA_DIR


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@dataclass(frozen=True)
class Sandbox:
    root: Path
    allowed: Path
    outside: Path


@pytest.fixture(scope="session")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Sandbox:
    """allowed/{hello.txt, big.txt, empty_dir/, sub/file.txt} and outside/secret.txt, once per session."""
    root = tmp_path_factory.mktemp("sandbox").resolve()
    allowed = root / "allowed"
    outside = root / "outside"
    (allowed / "empty_dir").mkdir(parents=True)
    (allowed / "sub").mkdir()
    outside.mkdir()
    (allowed / "hello.txt").write_text("hello world\n")
    (allowed / "big.txt").write_text(BIG_TEXT, encoding="utf-8")
    (allowed / "sub" / "file.txt").write_text("a file in a subdirectory\n")
    (outside / "secret.txt").write_text("not for you\n")
    return Sandbox(root, allowed, outside)


@pytest.fixture(scope="session", autouse=True)
def _prerequisites() -> None:
    problems = []
    if not (PROXY.is_file() and os.access(PROXY, os.X_OK)):
        problems.append(f"proxy binary {PROXY} is missing (build it, or set MCP_ERRNORM_BIN)")
    for js in (FS_SERVER_JS, EV_SERVER_JS):
        if not js.is_file():
            problems.append(f"{js} is missing (run scripts/e2e-setup.sh)")
    if problems:
        pytest.fail("; ".join(problems), pytrace=False)


def pytest_report_header(config: pytest.Config) -> list[str]:
    present = [p.name for p in (SCHEMA_DIR / "structured-error.schema.json", SCHEMA_DIR / "profile-mcp.schema.json",
                                SCHEMA_DIR / "profile-enterprise.schema.json") if p.is_file()]
    return [f"mcp-errnorm e2e: proxy={PROXY}", f"schemas present: {present or 'none (schema checks skipped)'}"]
