"""Three more real MCP servers through mcp-errnorm, driven by the Python SDK's ClientSession.

- @modelcontextprotocol/server-memory (npm), on a fresh knowledge-graph file per session
- mcp-server-git (PyPI), on a temporary git repository made here
- mcp-server-fetch (PyPI), pointed only at loopback: a closed port and a small
  http.server started here on 127.0.0.1

For each server the same calls are made directly and through the proxy, in one
session each way (servers are started once per direction, not once per call):
every answer must be accepted by the client, successes must be equal both ways,
and each provoked failure must arrive rewritten with the errorCategory and
isRetryable that the failure *means*. The expectations below were set from the
meaning of each failure, not from what the proxy answers; a case the proxy gets
wrong is marked xfail(strict=True) with its upstream text, never re-labelled.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from dataclasses import dataclass
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import pytest

from e2e_support import (
    ERROR_META_KEY,
    NODE,
    NODE_MODULES,
    TEST_TIMEOUT_SECONDS,
    Expect,
    Outcome,
    assert_closed_promptly,
    assert_same_success,
    check_rewritten,
    connect,
    pretty,
    proxy_cmd,
    tools_as_json,
)

MEMORY_SERVER_JS = NODE_MODULES / "@modelcontextprotocol" / "server-memory" / "dist" / "index.js"
MODE = "legacy"  # ClientSession + stdio_client + initialize


# --------------------------------------------------------------- what failures mean

@dataclass(frozen=True)
class Means:
    """What a failure means: the category and retryability an agent must be told."""

    category: str
    retryable: bool


TRANSIENT = Means("transient", True)  # the other end is down/unreachable now: retry can help
INVALID = Means("validation", False)  # not found / bad revision / bad arguments: fix the call
FORBIDDEN = Means("permission", False)  # refused by the server's policy: retrying cannot help


@dataclass(frozen=True)
class Case:
    tool: str
    arguments: dict[str, Any]
    means: Means
    marker: str  # a substring the upstream's own failure text must have (the failure is the one intended)
    xfail: str | None = None  # reason, with the exact upstream text, when the proxy misclassifies it


def _params(cases: dict[str, Case]) -> list[Any]:
    out = []
    for name, case in cases.items():
        marks = [pytest.mark.xfail(strict=True, reason=case.xfail)] if case.xfail else []
        out.append(pytest.param(name, id=name, marks=marks))
    return out


# --------------------------------------------------------------------- running

@dataclass
class Run:
    """Everything one session saw: the tool list and each call's outcome, by key."""

    tools: list[Any]
    outcomes: dict[str, Outcome]
    conn: Any


def _run_both(cmd: list[str], calls: dict[str, tuple[str, dict[str, Any]]], fresh_state=None) -> tuple[Run, Run]:
    """Make `calls` (in order) directly and then through the proxy, one session each.

    `fresh_state(which)` is called before each session and returns the server command to use
    (so a stateful server starts from the same state both ways); otherwise `cmd` is used.
    """

    async def one(server: list[str], label: str) -> Run:
        async with connect(server, MODE, label) as conn:
            tools = await conn.list_tools()
            outcomes = {}
            for key, (tool, args) in calls.items():
                outcomes[key] = await conn.call(tool, args)
        return Run(tools, outcomes, conn)

    async def both() -> tuple[Run, Run]:
        with anyio.fail_after(TEST_TIMEOUT_SECONDS):
            direct = await one(fresh_state("direct") if fresh_state else cmd, "direct")
            proxied = await one(proxy_cmd(fresh_state("proxy") if fresh_state else cmd), "proxy")
        return direct, proxied

    return anyio.run(both)


def _check_success(direct: Run, proxied: Run, key: str) -> None:
    d, p = direct.outcomes[key], proxied.outcomes[key]
    assert not p.raised, f"the client did not accept the proxied answer to {key}: {p.describe()}"
    assert_same_success(d, p)


def _check_failure(direct: Run, proxied: Run, key: str, case: Case) -> None:
    d, p = direct.outcomes[key], proxied.outcomes[key]
    # The upstream really failed, and in the way this case is about.
    assert d.raised or d.result.is_error, f"{key}: the call did not fail directly: {d.describe()}"
    assert case.marker in d.upstream_text(), f"{key}: unexpected upstream failure: {d.describe()}"
    assert not p.raised, f"{key}: the proxy let the failure through as a JSON-RPC error: {p.describe()}"
    assert p.result.is_error is True, f"{key}: not isError through the proxy: {p.describe()}"
    canon = (p.result.meta or {}).get(ERROR_META_KEY)
    assert isinstance(canon, dict), f"{key}: no _meta[{ERROR_META_KEY!r}]: {p.describe()}"
    got = (canon.get("errorCategory"), canon.get("isRetryable"))
    want = (case.means.category, case.means.retryable)
    assert got == want, (
        f"{key}: classified {got}, but the failure means {want}\n"
        f"upstream text: {d.upstream_text()!r}\nthrough the proxy:\n{pretty(canon)}"
    )
    assert not (canon["isRetryable"] and canon["errorCategory"] != "transient"), pretty(canon)
    # The rest of the contract (shape, attempted_query, originalError, content[0] profile):
    spec = next((t for t in proxied.tools if t.name == case.tool), None)
    check_rewritten(
        p,
        expect=Expect(case.means.category, case.means.retryable, canon["errorCode"]),
        upstream=d,
        source="rpc" if d.raised else "result",
        rpc_code=d.error.code if d.raised else None,
        has_output_schema=bool(spec is not None and spec.output_schema),
    )
    assert isinstance(canon["errorCode"], str) and canon["errorCode"], pretty(canon)


def _check_session(direct: Run, proxied: Run) -> None:
    assert_closed_promptly(proxied.conn)
    assert proxied.conn.protocol == direct.conn.protocol
    assert tools_as_json(proxied.tools) == tools_as_json(direct.tools), (
        f"tools/list differs through the proxy:\n{pretty(tools_as_json(proxied.tools))}"
    )
    for key, p in proxied.outcomes.items():
        assert not p.raised, f"the client did not accept the proxied answer to {key}: {p.describe()}"


# ===================================================================== memory

MEMORY_SEED = "\n".join(
    [
        '{"type":"entity","name":"Ada","entityType":"person","observations":["wrote the first program"]}',
        '{"type":"entity","name":"Analytical Engine","entityType":"machine","observations":["never finished"]}',
        '{"type":"relation","from":"Ada","to":"Analytical Engine","relationType":"programmed"}',
    ]
)

MEMORY_SUCCESSES = {
    "read_graph": ("read_graph", {}),
    "search_nodes": ("search_nodes", {"query": "program"}),
    "open_nodes": ("open_nodes", {"names": ["Ada"]}),
    # Missing entities are not failures for this server: an empty graph / a no-op.
    "open_nodes-missing": ("open_nodes", {"names": ["Nobody"]}),
    "delete_entities-missing": ("delete_entities", {"entityNames": ["Nobody"]}),
    "create_entities": (
        "create_entities",
        {"entities": [{"name": "Charles", "entityType": "person", "observations": ["designed the engine"]}]},
    ),
    "create_relations": (
        "create_relations",
        {"relations": [{"from": "Charles", "to": "Analytical Engine", "relationType": "designed"}]},
    ),
    "add_observations": ("add_observations", {"observations": [{"entityName": "Ada", "contents": ["Countess"]}]}),
    "read_graph-after": ("read_graph", {}),
}

MEMORY_FAILURES = {
    "add_observations-missing-entity": Case(
        "add_observations",
        {"observations": [{"entityName": "Nobody", "contents": ["x"]}]},
        INVALID,
        "Entity with name Nobody not found",
    ),
    "create_entities-not-a-list": Case(
        "create_entities", {"entities": "Ada"}, INVALID, "validation"
    ),
    "open_nodes-missing-argument": Case("open_nodes", {}, INVALID, "validation"),
    "create_relations-bad-item": Case(
        "create_relations", {"relations": [{"from": "Ada"}]}, INVALID, "validation"
    ),
}


@pytest.fixture(scope="module")
def memory_runs(tmp_path_factory) -> tuple[Run, Run]:
    assert MEMORY_SERVER_JS.is_file(), f"{MEMORY_SERVER_JS} is missing (run scripts/e2e-setup.sh)"
    root = tmp_path_factory.mktemp("memory").resolve()

    def fresh(which: str) -> list[str]:
        path = root / f"{which}.jsonl"
        path.write_text(MEMORY_SEED)
        # The SDK passes the server only a default environment: set the file with env(1).
        return ["env", f"MEMORY_FILE_PATH={path}", NODE, str(MEMORY_SERVER_JS)]

    calls = dict(MEMORY_SUCCESSES)
    calls.update({k: (c.tool, c.arguments) for k, c in MEMORY_FAILURES.items()})
    return _run_both([], calls, fresh_state=fresh)


def test_memory_session(memory_runs):
    _check_session(*memory_runs)
    direct, _ = memory_runs
    assert direct.outcomes["open_nodes-missing"].result.structured_content == {"entities": [], "relations": []}
    after = direct.outcomes["read_graph-after"].result.structured_content
    assert {e["name"] for e in after["entities"]} == {"Ada", "Analytical Engine", "Charles"}, pretty(after)


@pytest.mark.parametrize("key", list(MEMORY_SUCCESSES))
def test_memory_success_unchanged(memory_runs, key):
    _check_success(*memory_runs, key)


@pytest.mark.parametrize("key", _params(MEMORY_FAILURES))
def test_memory_failure_classified(memory_runs, key):
    _check_failure(*memory_runs, key, MEMORY_FAILURES[key])


# ======================================================================== git

GIT_ENV = {
    "GIT_AUTHOR_NAME": "E2E",
    "GIT_AUTHOR_EMAIL": "e2e@example.invalid",
    "GIT_COMMITTER_NAME": "E2E",
    "GIT_COMMITTER_EMAIL": "e2e@example.invalid",
    "GIT_AUTHOR_DATE": "2026-01-02T03:04:05+00:00",
    "GIT_COMMITTER_DATE": "2026-01-02T03:04:05+00:00",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def _git(repo: Path, *args: str, home: Path) -> None:
    env = {**os.environ, **GIT_ENV, "HOME": str(home)}
    subprocess.run(["git", "-C", str(repo), *args], check=True, env=env, capture_output=True)


@pytest.fixture(scope="module")
def git_sandbox(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("git").resolve()
    repo, not_repo, home = root / "repo", root / "not-a-repo", root / "home"
    for d in (repo, not_repo, home):
        d.mkdir()
    (not_repo / "plain.txt").write_text("not under version control\n")
    _git(repo, "init", "-q", "-b", "main", home=home)
    (repo / "README.md").write_text("# demo\n")
    _git(repo, "add", "README.md", home=home)
    _git(repo, "commit", "-q", "-m", "first commit", home=home)
    (repo / "README.md").write_text("# demo\n\nsecond line\n")
    (repo / "notes.txt").write_text("notes\n")
    _git(repo, "add", "README.md", "notes.txt", home=home)
    _git(repo, "commit", "-q", "-m", "second commit", home=home)
    _git(repo, "branch", "feature", home=home)
    (repo / "README.md").write_text("# demo\n\nsecond line\nunstaged change\n")
    return repo, not_repo


GIT_SUCCESSES = {
    "git_status": ("git_status", {}),
    "git_log": ("git_log", {"max_count": 5}),
    "git_show-HEAD": ("git_show", {"revision": "HEAD"}),
    "git_diff_unstaged": ("git_diff_unstaged", {}),
    "git_diff-HEAD~1": ("git_diff", {"target": "HEAD~1"}),
    "git_branch": ("git_branch", {"branch_type": "local"}),
}

GIT_FAILURES = {
    "git_diff-bad-target": Case("git_diff", {"target": "no-such-branch"}, INVALID, "no-such-branch"),
    "git_show-bad-revision": Case("git_show", {"revision": "deadbeefdeadbeef"}, INVALID, "deadbeefdeadbeef"),
    "git_add-missing-file": Case("git_add", {"files": ["missing.txt"]}, INVALID, "missing.txt"),
    "not-a-repo": Case("git_status", {}, INVALID, "not-a-repo"),
}


@pytest.fixture(scope="module")
def git_runs(git_sandbox) -> tuple[Run, Run]:
    repo, not_repo = git_sandbox
    calls = {k: (tool, {"repo_path": str(repo), **args}) for k, (tool, args) in GIT_SUCCESSES.items()}
    for k, c in GIT_FAILURES.items():
        path = not_repo if k == "not-a-repo" else repo
        calls[k] = (c.tool, {"repo_path": str(path), **c.arguments})
    # No --repository: the server then opens any path it is given (needed for the not-a-repo case).
    return _run_both([sys.executable, "-m", "mcp_server_git"], calls)


def test_git_session(git_runs):
    _check_session(*git_runs)


@pytest.mark.parametrize("key", list(GIT_SUCCESSES))
def test_git_success_unchanged(git_runs, key):
    _check_success(*git_runs, key)


@pytest.mark.parametrize("key", _params(GIT_FAILURES))
def test_git_failure_classified(git_runs, key):
    _check_failure(*git_runs, key, GIT_FAILURES[key])


# ====================================================================== fetch

class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:  # keep pytest's output clean
        pass


@pytest.fixture(scope="module")
def local_site(tmp_path_factory):
    """A tiny site on 127.0.0.1 (an ephemeral port): /index.html, /plain.txt; anything else is 404."""
    root = tmp_path_factory.mktemp("site")
    (root / "index.html").write_text(
        "<html><head><title>Local page</title></head><body><h1>Hello</h1>"
        "<p>Served by a test on loopback.</p></body></html>"
    )
    (root / "plain.txt").write_text("just text\n")
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_QuietHandler, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _closed_port_url() -> str:
    """http://127.0.0.1:9/ (discard), checked to refuse connections here."""
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", 9)) != 0, "something listens on 127.0.0.1:9"
    return "http://127.0.0.1:9/"


FETCH_FAILURES = {
    "connection-refused": Case("fetch", {"url": "CLOSED"}, TRANSIENT, "ConnectError"),
    "http-404": Case("fetch", {"url": "SITE/missing.html"}, INVALID, "status code 404"),
    "max_length-zero": Case("fetch", {"url": "SITE/index.html", "max_length": 0}, INVALID, "max_length"),
}
FETCH_SUCCESSES = {
    "html-as-markdown": ("fetch", {"url": "SITE/index.html"}),
    "raw-text": ("fetch", {"url": "SITE/plain.txt", "raw": True}),
    "html-start_index": ("fetch", {"url": "SITE/index.html", "start_index": 3, "max_length": 10}),
}


def _fill(args: dict[str, Any], site: str) -> dict[str, Any]:
    url = args["url"].replace("SITE", site).replace("CLOSED", _closed_port_url())
    return {**args, "url": url}


@pytest.fixture(scope="module")
def fetch_runs(local_site) -> tuple[Run, Run]:
    calls = {k: (tool, _fill(args, local_site)) for k, (tool, args) in FETCH_SUCCESSES.items()}
    calls.update({k: (c.tool, _fill(c.arguments, local_site)) for k, c in FETCH_FAILURES.items()})
    cmd = [sys.executable, "-m", "mcp_server_fetch", "--ignore-robots-txt", "--allow-private-ips"]
    return _run_both(cmd, calls)


def test_fetch_session(fetch_runs):
    _check_session(*fetch_runs)
    direct, _ = fetch_runs
    text = direct.outcomes["html-as-markdown"].result.content[0].text
    assert "Hello" in text, text


@pytest.mark.parametrize("key", list(FETCH_SUCCESSES))
def test_fetch_success_unchanged(fetch_runs, key):
    _check_success(*fetch_runs, key)


@pytest.mark.parametrize("key", _params(FETCH_FAILURES))
def test_fetch_failure_classified(fetch_runs, key):
    _check_failure(*fetch_runs, key, FETCH_FAILURES[key])


# The default fetch server refuses loopback addresses: a policy refusal, not worth a retry.
FETCH_POLICY = Case("fetch", {"url": "SITE/index.html"}, FORBIDDEN, "not a public address")


def test_fetch_private_address_refused(local_site):
    cmd = [sys.executable, "-m", "mcp_server_fetch", "--ignore-robots-txt"]
    direct, proxied = _run_both(cmd, {"refused": (FETCH_POLICY.tool, _fill(FETCH_POLICY.arguments, local_site))})
    _check_session(direct, proxied)
    _check_failure(direct, proxied, "refused", FETCH_POLICY)
