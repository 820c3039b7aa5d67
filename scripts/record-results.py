#!/usr/bin/env python3
"""Record real MCP tool-call results for tests/corpus/recorded/.

Drives real MCP servers (installed from PyPI and npm) over stdio with the official
Python SDK client (PyPI `mcp==2.3.0`) and writes the verbatim JSON `result` of every
tools/call, taken from the raw JSON-RPC line the server printed (not re-serialised
from the SDK's models).

Two outputs:
  successes.jsonl                 calls that genuinely succeeded (ordinary results,
                                  including empty ones and ones that mention failure
                                  words in passing)
  success-shaped-failures.jsonl   calls that failed although the server answered
                                  with isError false/absent; each carries the label
                                  (category, also, code, retryable) decided from
                                  docs/labelling.md when the case was written, before
                                  any classifier saw it.

A case that comes back otherwise than planned (a planned success with isError true, a
planned failure answered with isError true or a JSON-RPC error) is not written; the
run prints it so the case can be fixed.

Setup (what the recorded data was made with; run from a scratch directory):

  # client
  uv venv -p 3.11 VENVS/client && VIRTUAL_ENV=VENVS/client uv pip install mcp==2.3.0
  # one venv per Python server (python 3.11 unless noted); servers written against
  # the 1.x SDK are pinned to mcp<2 (1.30.0 was served), the others keep mcp 2.3.0
  mcp-server-sqlite==2025.4.25  (venv sqlite,   + mcp<2)
  mcp-server-duckdb==1.1.0      (venv duckdb,   + mcp<2)
  mysql-mcp-server==0.4.4       (venv mysql,    + mcp<2)
  redis-mcp-server==0.5.1       (venv redis,    + mcp<2)
  terminal-controller==0.1.9    (venv terminal, + mcp<2)
  mcp-shell-server==1.1.14      (venv shell,    + mcp<2)
  mcp-server-calculator==0.2.1  (venv calc,     + mcp<2)
  mcp-sqlite==0.3.2             (venv mcpsqlite, python 3.13, + mcp<2)
  mcp-text-editor==1.2.2        (venv texteditor, python 3.13, + mcp<2)
  mcp-server-office==0.2.0      (venv office, python 3.13, + mcp<2)
  mcp-alchemy==2026.10.15.202659 (venv alchemy, mcp 2.3.0)
  csv-mcp-server==1.0.0         (venv csv,      mcp 2.3.0)
  mcp-server-git==2026.10.19    (venv git,      mcp 2.3.0)
  mcp-server-time==2026.10.19   (venv time,     mcp 2.3.0)
  mcp-server-fetch==2026.10.24  (venv fetch,    mcp 2.3.0)
  # npm (node 20), in NODE/:
  npm install --ignore-scripts @modelcontextprotocol/server-filesystem@2026.8.31 \
      @modelcontextprotocol/server-memory@2026.8.31 @modelcontextprotocol/server-everything@2026.8.31 \
      @wonderwhy-er/desktop-commander@0.2.52
  # local services (Debian packages redis-server, mariadb-server, git):
  redis-server --port 6379 --bind 127.0.0.1 --save ''
  redis-server --port 6380 --bind 127.0.0.1 --save '' --requirepass s3cret
  redis-server --port 6381 --bind 127.0.0.1 --save '' --maxmemory 1          # always "OOM"
  redis-server --port 6382 --bind 127.0.0.1 --save '' --replicaof 127.0.0.1 6379   # read-only replica
  (nothing listens on 6391 and 3399: the connection-refused cases)
  mysqld_safe --bind-address=127.0.0.1   # then, as root:
    CREATE DATABASE shop;
    CREATE USER 'app'@'127.0.0.1' IDENTIFIED BY 'apppw'; GRANT ALL ON shop.* TO 'app'@'127.0.0.1';
    CREATE USER 'reader'@'127.0.0.1' IDENTIFIED BY 'readpw'; GRANT SELECT ON shop.* TO 'reader'@'127.0.0.1';
    (MariaDB resolves the client as 'localhost'; the same users exist @'localhost'.)
  The script itself (as root, through the `mysql` client) creates the trigger, foreign-key
  tables and the quota-limited user, sets innodb_lock_wait_timeout=1, and flips
  read_only on and off around one case; it runs `redis-cli FLUSHALL` on 6379 first.
  Files under --work are made immutable with chattr +i (the EPERM cases), so run as root
  on a file system that supports it.

Run:
  VENVS/client/bin/python scripts/record-results.py --venvs VENVS --node NODE/node_modules \
      --work /tmp/recording-work --out tests/corpus/recorded [--only server,server]

Only 127.0.0.1 is contacted (local redis, MariaDB, and an HTTP server this script starts).
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import os
import shutil
import subprocess
import sys
import threading
import traceback
from pathlib import Path

import anyio
import mcp.client.stdio as mcp_stdio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

# --------------------------------------------------------------------------------------
# Raw capture: keep the verbatim `result` object of every JSON-RPC response line.
# --------------------------------------------------------------------------------------
RAW: dict = {}
_orig_parse_line = mcp_stdio._parse_line


def _capturing_parse_line(line: str):
    try:
        obj = json.loads(line)
        if isinstance(obj, dict) and "id" in obj and ("result" in obj or "error" in obj):
            RAW[obj["id"]] = obj
    except Exception:
        pass
    return _orig_parse_line(line)


mcp_stdio._parse_line = _capturing_parse_line

# --------------------------------------------------------------------------------------
# Labels (docs/labelling.md): (category, also, code, retryable)
# --------------------------------------------------------------------------------------
NF = ("validation", None, "NOT_FOUND", False)
VAL = ("validation", None, "VALIDATION_ERROR", False)
EXISTS = ("validation", None, "ALREADY_EXISTS", False)
PERM = ("permission", None, "PERMISSION_DENIED", False)
UNAVAIL = ("transient", None, "SYSTEM_UNAVAILABLE", True)
CONFLICT = ("business", None, "CONFLICT", False)
RULE = ("business", None, "BUSINESS_RULE", False)


def S(tool, args, situation, capture=None):
    """capture: name under which the `session_id` of this result is kept; later
    arguments may refer to it as "$name"."""
    return {"kind": "success", "tool": tool, "arguments": args, "situation": situation, "capture": capture}


def substitute(value, names):
    if isinstance(value, str) and value.startswith("$") and value[1:] in names:
        return names[value[1:]]
    if isinstance(value, list):
        return [substitute(v, names) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, names) for k, v in value.items()}
    return value


def F(tool, args, situation, label, before=None, after=None):
    """before/after: callables run around the call (to hold a lock, flip a setting)."""
    cat, also, code, retry = label
    return {"kind": "failure", "tool": tool, "arguments": args, "situation": situation,
            "category": cat, "also": also, "code": code, "retryable": retry,
            "before": before, "after": after}


def mysql_root(sql):
    subprocess.run(["mysql", "-uroot"], input=sql.encode(), check=True, capture_output=True)


class Holder:
    """Holds a lock from another client while one case runs."""

    def __init__(self):
        self.proc = None
        self.conn = None

    def sqlite_exclusive(self, path):
        import sqlite3

        def start():
            self.conn = sqlite3.connect(path, isolation_level=None)
            self.conn.execute("BEGIN EXCLUSIVE")

        def stop():
            self.conn.execute("ROLLBACK")
            self.conn.close()
        return start, stop

    def mysql_row_lock(self, sql, seconds=4):
        import time

        def start():
            self.proc = subprocess.Popen(["mysql", "-uroot", "shop", "-e", f"BEGIN; {sql}; SELECT SLEEP({seconds}); ROLLBACK;"],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(1)

        def stop():
            self.proc.wait()
        return start, stop


# --------------------------------------------------------------------------------------
# Fixtures
# --------------------------------------------------------------------------------------
LOG_LINES = """2026-11-30T10:00:01Z INFO  api started on :8080
2026-11-30T10:00:05Z ERROR db: connection refused (will retry)
2026-11-30T10:00:06Z WARN  retrying in 2s
2026-11-30T10:00:08Z INFO  db: connected
2026-11-30T10:02:11Z ERROR handler /orders: permission denied for user guest
2026-11-30T10:03:00Z ERROR Traceback (most recent call last): worker crashed, restarted
2026-11-30T10:04:00Z INFO  all workers healthy
"""

ERROR_DOC = """Error: this line is the first line of the troubleshooting guide, not a failure.
Common messages and what they mean:
- "permission denied": the service account lacks the role.
- "connection refused": the database is not up yet.
- "404 Not Found": the path is wrong.
"""

SITE = {
    "index.html": "<html><head><title>Status</title></head><body><h1>All systems operational</h1><p>No incidents reported today.</p></body></html>",
    "http500.html": "<html><head><title>What is HTTP 500?</title></head><body><h1>HTTP 500 Internal Server Error</h1><p>A 500 status means the server hit an unexpected condition. This article explains how to debug it: check the logs for a stack trace, look for timeouts and permission denied errors.</p></body></html>",
    "errors.json": json.dumps({"error": None, "errors": [], "status": "ok", "items": [{"id": 1, "error_rate": 0.02}]}),
    "error-codes.txt": "Error: E1001 means the disk is full.\nError: E1002 means the token expired.\nThis is a reference list of error codes.\n",
    "empty.txt": "",
    "incident.md": "# Postmortem: outage of 2026-11-03\n\nTimeline: 10:02 rate limit exceeded on the upstream API; 10:05 failover; 10:40 resolved.\nRoot cause: quota exhausted on a test account.\n",
    "robots.txt": "User-agent: *\nAllow: /\n",
    "forbidden.html": "<html><head><title>403 Forbidden explained</title></head><body><h1>403 Forbidden</h1><p>The server understood the request but refuses to authorize it. Access denied errors like this usually mean a missing role.</p></body></html>",
    "rate-limits.html": "<html><body><h1>Rate limits</h1><p>If you exceed 100 requests per minute you get 429 Too Many Requests. Retry after the Retry-After header.</p></body></html>",
    "no-results.txt": "No results found\n",
    "traceback.txt": "Traceback (most recent call last):\n  File \"app.py\", line 3, in <module>\nZeroDivisionError: division by zero\n(This file is an example used in a Python tutorial.)\n",
}


GIT_ENV = {"GIT_AUTHOR_NAME": "Dev", "GIT_AUTHOR_EMAIL": "dev@example.com",
           "GIT_COMMITTER_NAME": "Dev", "GIT_COMMITTER_EMAIL": "dev@example.com"}


def prepare(work: Path):
    if work.exists():
        subprocess.run(["chattr", "-R", "-i", str(work)], capture_output=True)
        shutil.rmtree(work)
    ws = work / "ws"
    (ws / "notes").mkdir(parents=True)
    (ws / "logs").mkdir()
    (ws / "data").mkdir()
    (ws / "empty-dir").mkdir()
    (ws / "notes" / "troubleshooting.md").write_text(ERROR_DOC)
    (ws / "notes" / "todo.txt").write_text("fix error handling in parser\nreview PR about permission denied on upload\n")
    (ws / "notes" / "one-line.txt").write_text("No results found\n")
    (ws / "logs" / "app.log").write_text(LOG_LINES)
    (ws / "data" / "status.json").write_text(json.dumps({"ok": True, "error": None, "errors": 0, "last_error": "timeout at 03:00 (resolved)"}, indent=2))
    (ws / "data" / "result.json").write_text(json.dumps({"ok": False, "error": "quota exceeded"}) + "\n")
    (ws / "data" / "sales.csv").write_text("region,month,amount,status\nnorth,2026-01,1200,ok\nsouth,2026-01,800,error\nnorth,2026-02,1500,ok\nsouth,2026-02,0,failed\neast,2026-02,950,ok\n")
    (ws / "data" / "empty.csv").write_text("id,name\n")
    (ws / "data" / "bad.json").write_text("{not json at all")
    (ws / "README.md").write_text("# Demo workspace\nThis folder is used to record MCP results.\n")
    (ws / "src").mkdir()
    (ws / "src" / "errors.py").write_text('class PermissionDenied(Exception):\n    """Raised when access is denied."""\n\n\ndef raise_error():\n    raise RuntimeError("Error: something went wrong")\n')
    # a file and a directory made immutable (chattr +i): even root gets EPERM on writes
    (ws / "locked.txt").write_text("locked content\nsecond line\n")
    (ws / "locked-dir").mkdir()
    subprocess.run(["chattr", "+i", str(ws / "locked.txt"), str(ws / "locked-dir")], check=True)
    site = work / "site"
    site.mkdir()
    for k, v in SITE.items():
        (site / k).write_text(v)
    # git repository
    repo = work / "repo"
    repo.mkdir()
    env = dict(os.environ, GIT_AUTHOR_NAME="Dev", GIT_AUTHOR_EMAIL="dev@example.com",
               GIT_COMMITTER_NAME="Dev", GIT_COMMITTER_EMAIL="dev@example.com",
               GIT_AUTHOR_DATE="2026-11-30T10:00:00Z", GIT_COMMITTER_DATE="2026-11-30T10:00:00Z")

    def git(*a):
        subprocess.run(["git", "-C", str(repo), *a], check=True, env=env, capture_output=True)

    git("init", "-q", "-b", "main")
    (repo / "parser.py").write_text("def parse(s):\n    return s.split(',')\n")
    git("add", ".")
    git("commit", "-q", "-m", "initial parser")
    (repo / "parser.py").write_text("def parse(s):\n    if not s:\n        raise ValueError('Error: empty input')\n    return s.split(',')\n")
    git("commit", "-q", "-am", "fix error when input is empty")
    (repo / "CHANGELOG.md").write_text("## 1.0.1\n- Fixed: permission denied when writing the cache\n- Fixed: timeout in upload\n")
    git("add", ".")
    git("commit", "-q", "-m", "changelog: permission denied and timeout fixes")
    git("branch", "feature/error-pages")
    (repo / "notes.txt").write_text("Error: draft, not committed yet\n")
    (work / "text").mkdir()
    (work / "text" / "config.ini").write_text("[server]\nport = 8080\nlog_level = error\n")
    (work / "text" / "errors.txt").write_text("ERROR 1: disk full\nERROR 2: timeout\n")
    return ws


def serve_site(directory: Path) -> int:
    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *a):
            pass

    handler = functools.partial(Handler, directory=str(directory))
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv.server_address[1]


HOLD = Holder()

# --------------------------------------------------------------------------------------
# Servers and cases
# --------------------------------------------------------------------------------------

def build(venvs: Path, node: Path, work: Path, ws: Path, port: int):
    V = lambda n, exe: str(venvs / n / "bin" / exe)  # noqa: E731
    NODE = shutil.which("node") or "node"
    sessions = []  # (server, package, version, command, args, env, cwd, cases)

    # ---------------- mcp-server-sqlite ----------------
    db = str(work / "sqlite.db")
    c = [
        S("create_table", {"query": "CREATE TABLE orders (id INTEGER PRIMARY KEY, customer TEXT NOT NULL, status TEXT, amount REAL CHECK (amount >= 0))"}, "create a table"),
        S("create_table", {"query": "CREATE TABLE events (id INTEGER PRIMARY KEY, level TEXT, message TEXT)"}, "create a second table"),
        S("write_query", {"query": "INSERT INTO orders (customer, status, amount) VALUES ('acme', 'paid', 120.5), ('globex', 'failed', 0), ('initech', 'error', 33)"}, "insert rows whose status values are 'failed' and 'error'"),
        S("write_query", {"query": "INSERT INTO events (level, message) VALUES ('ERROR', 'Error: disk full on /var'), ('ERROR', 'permission denied for user guest'), ('INFO', 'started')"}, "insert log rows with error messages as data"),
        S("read_query", {"query": "SELECT * FROM orders WHERE amount > 1000"}, "query with zero rows"),
        S("read_query", {"query": "SELECT * FROM orders"}, "all rows"),
        S("read_query", {"query": "SELECT message FROM events WHERE level = 'ERROR'"}, "rows of ERROR log messages"),
        S("read_query", {"query": "SELECT message FROM events WHERE level = 'ERROR' LIMIT 1"}, "single row whose text starts with 'Error:'"),
        S("read_query", {"query": "SELECT count(*) AS n FROM orders WHERE status = 'error'"}, "count of rows with status error"),
        S("read_query", {"query": "SELECT 'Error: not a failure, just a string' AS note"}, "literal string starting with Error"),
        S("read_query", {"query": "SELECT NULL AS error"}, "a column named error holding NULL"),
        S("read_query", {"query": "SELECT json_object('ok', json('false'), 'error', 'quota exceeded') AS payload"}, "JSON payload with ok:false as data"),
        S("list_tables", {}, "list tables"),
        S("describe_table", {"table_name": "orders"}, "describe a table"),
        S("describe_table", {"table_name": "events"}, "describe a second table"),
        S("write_query", {"query": "UPDATE orders SET status = 'refunded' WHERE customer = 'nobody'"}, "update that matches zero rows"),
        S("write_query", {"query": "DELETE FROM events WHERE level = 'DEBUG'"}, "delete matching zero rows"),
        S("append_insight", {"insight": "Error rate among orders is 33%; the failed orders all come from globex."}, "append a business insight mentioning errors"),
        S("read_query", {"query": "SELECT customer, amount FROM orders ORDER BY amount DESC"}, "ordered rows"),
        S("read_query", {"query": "SELECT sqlite_version() AS v"}, "sqlite version"),
        S("read_query", {"query": "SELECT * FROM events WHERE message LIKE '%timeout%'"}, "search with no hit"),
        F("read_query", {"query": "SELECT * FROM invoices"}, "table does not exist", NF),
        F("read_query", {"query": "SELEC * FROM orders"}, "misspelt SELECT refused by the read_query statement check", VAL),
        F("read_query", {"query": "SELECT total FROM orders"}, "unknown column", NF),
        F("write_query", {"query": "INSERT INTO orders (id, customer, amount) VALUES (1, 'dup', 5)"}, "duplicate primary key", EXISTS),
        F("write_query", {"query": "INSERT INTO orders (customer, amount) VALUES (NULL, 5)"}, "NOT NULL constraint", VAL),
        F("write_query", {"query": "INSERT INTO orders (customer, amount) VALUES ('neg', -5)"}, "CHECK constraint", VAL),
        F("create_table", {"query": "CREATE TABLE orders (id INTEGER)"}, "table already exists", EXISTS),
        F("read_query", {"query": "DELETE FROM orders"}, "non-SELECT sent to read_query", VAL),
        F("write_query", {"query": "SELECT * FROM orders"}, "SELECT sent to write_query", VAL),
        F("create_table", {"query": "DROP TABLE events"}, "non-CREATE sent to create_table", VAL),
        F("write_query", {"query": "INSERT INTO orders (customer, amount, nope) VALUES ('x', 1, 2)"}, "insert into unknown column", NF),
        F("read_query", {"query": "SELECT * FROM orders; SELECT 1"}, "two statements at once", VAL),
        F("read_query", {"query": "SELECT abs(1,2)"}, "wrong number of arguments to a function", VAL),
        S("write_query", {"query": "CREATE TRIGGER orders_archived BEFORE UPDATE ON orders WHEN OLD.status = 'archived' BEGIN SELECT RAISE(ABORT, 'order is archived and cannot be modified'); END"}, "create a trigger guarding archived orders"),
        S("write_query", {"query": "CREATE TRIGGER orders_limit BEFORE INSERT ON orders WHEN NEW.amount > 10000 BEGIN SELECT RAISE(ABORT, 'amount exceeds the credit limit of 10000 for this customer'); END"}, "create a trigger enforcing a credit limit"),
        S("write_query", {"query": "INSERT INTO orders (customer, status, amount) VALUES ('umbrella', 'archived', 10)"}, "insert an archived order"),
        F("write_query", {"query": "UPDATE orders SET amount = 11 WHERE customer = 'umbrella'"}, "update refused by a trigger: the order is archived", RULE),
        F("write_query", {"query": "INSERT INTO orders (customer, status, amount) VALUES ('acme', 'new', 25000)"}, "insert refused by a trigger: credit limit", RULE),
        F("write_query", {"query": "INSERT INTO events (level, message) VALUES ('INFO', 'x')"}, "database locked by another connection (exclusive transaction)", ("transient", None, "SYSTEM_UNAVAILABLE", True),
          *HOLD.sqlite_exclusive(db)),
    ]
    sessions.append(("mcp-server-sqlite", "mcp-server-sqlite", "2025.4.25", V("sqlite", "mcp-server-sqlite"), ["--db-path", db], {}, None, c))

    # ---------------- mcp-server-duckdb ----------------
    ddb = str(work / "duck.duckdb")
    c = [
        S("query", {"query": "CREATE TABLE jobs (id INTEGER PRIMARY KEY, name VARCHAR NOT NULL, state VARCHAR, retries INTEGER)"}, "create a table"),
        S("query", {"query": "INSERT INTO jobs VALUES (1, 'backup', 'failed', 3), (2, 'report', 'ok', 0), (3, 'sync', 'error', 1)"}, "insert rows with failure states as data"),
        S("query", {"query": "SELECT * FROM jobs WHERE retries > 10"}, "zero rows"),
        S("query", {"query": "SELECT * FROM jobs ORDER BY id"}, "all rows"),
        S("query", {"query": "SELECT name FROM jobs WHERE state IN ('failed','error')"}, "rows in failure states"),
        S("query", {"query": "SELECT 'Error: this is a value' AS msg"}, "literal starting with Error"),
        S("query", {"query": "SELECT 'Database error: simulated text in data' AS msg"}, "literal that looks like the server's own failure prefix"),
        S("query", {"query": "SELECT count(*) AS errors FROM jobs WHERE state = 'error'"}, "aggregate named errors"),
        S("query", {"query": "SELECT 1/0 AS x"}, "division by zero gives NULL in DuckDB"),
        S("query", {"query": "SELECT * FROM range(3)"}, "table function"),
        S("query", {"query": "SELECT state, count(*) FROM jobs GROUP BY state ORDER BY state"}, "group by"),
        S("query", {"query": "DESCRIBE jobs"}, "describe table"),
        S("query", {"query": "SHOW TABLES"}, "show tables"),
        S("query", {"query": "UPDATE jobs SET retries = 0 WHERE name = 'nothing'"}, "update of zero rows"),
        S("query", {"query": "SELECT {'error': NULL, 'ok': true} AS s"}, "struct with an error field"),
        S("query", {"query": "SELECT list_value('timeout', 'permission denied', 'not found') AS words"}, "list of failure words as data"),
        S("query", {"query": "SELECT current_date IS NOT NULL AS ok"}, "boolean result"),
        S("query", {"query": f"SELECT * FROM read_csv_auto('{ws}/data/sales.csv') WHERE status <> 'ok'"}, "read a CSV whose rows have status error/failed"),
        S("query", {"query": f"SELECT count(*) FROM read_csv_auto('{ws}/data/empty.csv')"}, "count of an empty CSV"),
        S("query", {"query": "SELECT version()"}, "version"),
        F("query", {"query": "SELECT * FROM missing_table"}, "table does not exist", NF),
        F("query", {"query": "SELEKT 1"}, "parser error", VAL),
        F("query", {"query": "SELECT nope FROM jobs"}, "column not found (binder error)", NF),
        F("query", {"query": "INSERT INTO jobs VALUES (1, 'dup', 'ok', 0)"}, "duplicate primary key", EXISTS),
        F("query", {"query": "INSERT INTO jobs VALUES (9, NULL, 'ok', 0)"}, "NOT NULL constraint", VAL),
        F("query", {"query": "SELECT CAST('abc' AS INTEGER)"}, "conversion error", VAL),
        F("query", {"query": "CREATE TABLE jobs (id INTEGER)"}, "table already exists", EXISTS),
        F("query", {"query": f"SELECT * FROM read_csv_auto('{ws}/data/nope.csv')"}, "file does not exist", NF),
        F("query", {"query": "SELECT no_such_function(1)"}, "unknown function", NF),
        F("query", {"query": "SELECT 2147483647::INTEGER + 1::INTEGER"}, "integer overflow", VAL),
        S("query", {"query": "CREATE TABLE owners (id INTEGER PRIMARY KEY, name VARCHAR)"}, "create a parent table"),
        S("query", {"query": "CREATE TABLE pets (id INTEGER, owner_id INTEGER REFERENCES owners(id))"}, "create a child table"),
        S("query", {"query": "INSERT INTO owners VALUES (1, 'ann')"}, "insert parent"),
        S("query", {"query": "INSERT INTO pets VALUES (1, 1)"}, "insert child"),
        F("query", {"query": "INSERT INTO pets VALUES (2, 99)"}, "child row referencing a missing parent", NF),
        F("query", {"query": "DELETE FROM owners WHERE id = 1"}, "delete a parent row that is still referenced", ("business", "validation", "BUSINESS_RULE", False)),
    ]
    sessions.append(("mcp-server-duckdb", "mcp-server-duckdb", "1.1.0", V("duckdb", "mcp-server-duckdb"), ["--db-path", ddb], {}, None, c))
    c = [
        S("query", {"query": "SELECT count(*) AS n FROM jobs"}, "read in a read-only session"),
        F("query", {"query": "INSERT INTO jobs VALUES (10, 'x', 'ok', 0)"}, "write refused: server started with --readonly", PERM),
        F("query", {"query": "CREATE TABLE t2 (a INTEGER)"}, "DDL refused: server started with --readonly", PERM),
    ]
    sessions.append(("mcp-server-duckdb", "mcp-server-duckdb", "1.1.0", V("duckdb", "mcp-server-duckdb"), ["--db-path", ddb, "--readonly"], {}, None, c))

    # ---------------- mysql-mcp-server (MariaDB on 127.0.0.1) ----------------
    myenv = {"MYSQL_HOST": "127.0.0.1", "MYSQL_PORT": "3306", "MYSQL_USER": "app", "MYSQL_PASSWORD": "apppw", "MYSQL_DATABASE": "shop"}
    c = [
        S("execute_sql", {"query": "DROP TABLE IF EXISTS tickets"}, "drop if exists"),
        S("execute_sql", {"query": "CREATE TABLE tickets (id INT PRIMARY KEY, title VARCHAR(40) NOT NULL, state VARCHAR(10), customer_id INT)"}, "create table"),
        S("execute_sql", {"query": "INSERT INTO tickets VALUES (1, 'Error: login fails with 500', 'open', 7), (2, 'Permission denied on export', 'closed', 8), (3, 'Timeout in search', 'open', 7)"}, "insert tickets whose titles describe errors"),
        S("execute_sql", {"query": "SELECT * FROM tickets WHERE state = 'archived'"}, "zero rows"),
        S("execute_sql", {"query": "SELECT * FROM tickets"}, "all rows"),
        S("execute_sql", {"query": "SELECT title FROM tickets WHERE id = 1"}, "single value starting with Error:"),
        S("execute_sql", {"query": "SELECT title FROM tickets WHERE title LIKE '%denied%'"}, "search hit about permission denied"),
        S("execute_sql", {"query": "SHOW TABLES"}, "show tables"),
        S("execute_sql", {"query": "DESCRIBE tickets"}, "describe"),
        S("execute_sql", {"query": "UPDATE tickets SET state='closed' WHERE id=99"}, "update of zero rows"),
        S("execute_sql", {"query": "SELECT COUNT(*) AS errors FROM tickets WHERE title LIKE 'Error%'"}, "count column named errors"),
        S("execute_sql", {"query": "SELECT JSON_OBJECT('ok', false, 'error', 'quota exceeded') AS payload"}, "JSON with ok:false as data"),
        S("execute_sql", {"query": "SELECT 1/0 AS x"}, "division by zero gives NULL in MariaDB"),
        S("execute_sql", {"query": "SELECT VERSION() LIKE '%MariaDB%' AS is_mariadb"}, "version check"),
        S("execute_sql", {"query": "DELETE FROM tickets WHERE id = 3"}, "delete one row"),
        S("get_schema_info", {}, "schema overview"),
        S("get_schema_info", {"table_name": "tickets"}, "schema of a table"),
        S("get_table_sample", {"table_name": "tickets"}, "sample rows"),
        S("execute_sql", {"query": "SELECT 'No results found' AS message"}, "short single value 'No results found'"),
        S("execute_sql", {"query": "SHOW WARNINGS"}, "show warnings (empty)"),
        F("execute_sql", {"query": "SELECT * FROM invoices"}, "table does not exist", NF),
        F("execute_sql", {"query": "SELEC * FROM tickets"}, "syntax error", VAL),
        F("execute_sql", {"query": "INSERT INTO tickets VALUES (1, 'dup', 'open', 1)"}, "duplicate primary key", EXISTS),
        F("execute_sql", {"query": "INSERT INTO tickets (id, title) VALUES (5, NULL)"}, "NOT NULL column", VAL),
        F("execute_sql", {"query": "SELECT nope FROM tickets"}, "unknown column", NF),
        F("execute_sql", {"query": "CREATE TABLE tickets (id INT)"}, "table already exists", EXISTS),
        F("execute_sql", {"query": "USE nosuchdb"}, "USE of a database the user has no grant on (does not exist)", PERM),
        F("execute_sql", {"query": "CREATE DATABASE other"}, "no privilege to create a database", PERM),
        F("get_table_sample", {"table_name": "missing"}, "sample of a missing table", NF),
        F("execute_sql", {"query": "INSERT INTO refunds VALUES (1, 900)"}, "insert refused by a trigger (SIGNAL 45000): approval limit", RULE),
        F("execute_sql", {"query": "INSERT INTO line_items VALUES (1, 999)"}, "child row referencing a missing parent (foreign key)", NF),
        F("execute_sql", {"query": "DELETE FROM customers WHERE id = 1"}, "delete a parent row that is still referenced (foreign key)", ("business", "validation", "BUSINESS_RULE", False)),
        F("execute_sql", {"query": "INSERT INTO tickets VALUES (9, 'this title is far too long for the forty character column', 'open', 1)"}, "value too long for the column", VAL),
        F("execute_sql", {"query": "UPDATE tickets SET state = 'held' WHERE id = 1"}, "row locked by another transaction: lock wait timeout", ("transient", None, "TIMEOUT", True),
          *HOLD.mysql_row_lock("SELECT * FROM tickets WHERE id = 1 FOR UPDATE")),
        F("execute_sql", {"query": "INSERT INTO tickets VALUES (10, 'ro', 'open', 1)"}, "server switched to read-only (SET GLOBAL read_only=1)", PERM,
          lambda: mysql_root("SET GLOBAL read_only = 1"), lambda: mysql_root("SET GLOBAL read_only = 0")),
    ]
    sessions.append(("mysql-mcp-server", "mysql-mcp-server", "0.4.4", V("mysql", "mysql_mcp_server"), [], myenv, None, c))
    c = [
        S("execute_sql", {"query": "SELECT COUNT(*) FROM tickets"}, "read as a SELECT-only user"),
        F("execute_sql", {"query": "INSERT INTO tickets VALUES (20, 't', 'open', 1)"}, "INSERT denied to a SELECT-only user", PERM),
        F("execute_sql", {"query": "DROP TABLE tickets"}, "DROP denied to a SELECT-only user", PERM),
    ]
    sessions.append(("mysql-mcp-server", "mysql-mcp-server", "0.4.4", V("mysql", "mysql_mcp_server"), [], dict(myenv, MYSQL_USER="reader", MYSQL_PASSWORD="readpw"), None, c))
    c = [         F("execute_sql", {"query": "SELECT 2 AS two"}, "account exceeded MAX_QUERIES_PER_HOUR", ("business", "transient", "QUOTA_EXCEEDED", False)),
         F("get_schema_info", {}, "schema lookup after the hourly query quota is used up", ("business", "transient", "QUOTA_EXCEEDED", False))]
    sessions.append(("mysql-mcp-server", "mysql-mcp-server", "0.4.4", V("mysql", "mysql_mcp_server"), [], dict(myenv, MYSQL_USER="limited", MYSQL_PASSWORD="limpw"), None, c))
    c = [F("execute_sql", {"query": "SELECT 1"}, "wrong password", PERM),
         F("get_schema_info", {}, "wrong password (schema tool)", PERM)]
    sessions.append(("mysql-mcp-server", "mysql-mcp-server", "0.4.4", V("mysql", "mysql_mcp_server"), [], dict(myenv, MYSQL_PASSWORD="wrong"), None, c))
    c = [F("execute_sql", {"query": "SELECT 1"}, "nothing listens on the port: connection refused", UNAVAIL)]
    sessions.append(("mysql-mcp-server", "mysql-mcp-server", "0.4.4", V("mysql", "mysql_mcp_server"), [], dict(myenv, MYSQL_PORT="3399"), None, c))
    c = [F("execute_sql", {"query": "SELECT 1"}, "configured database does not exist; MariaDB answers access denied", PERM)]
    sessions.append(("mysql-mcp-server", "mysql-mcp-server", "0.4.4", V("mysql", "mysql_mcp_server"), [], dict(myenv, MYSQL_DATABASE="nosuchdb"), None, c))

    # ---------------- redis-mcp-server ----------------
    renv = {"REDIS_HOST": "127.0.0.1", "REDIS_PORT": "6379"}
    c = [
        S("set", {"key": "greeting", "value": "hello"}, "set a string"),
        S("set", {"key": "last_error", "value": "Error: disk full on node-3 (resolved)"}, "store a value that starts with Error"),
        S("get", {"key": "last_error"}, "read a value that starts with Error"),
        S("get", {"key": "greeting"}, "read a value"),
        S("hset", {"name": "user:1", "key": "status", "value": "failed_login"}, "hash field"),
        S("hset", {"name": "user:1", "key": "error", "value": "none"}, "hash field named error"),
        S("hgetall", {"name": "user:1"}, "hash with an error field"),
        S("hexists", {"name": "user:1", "key": "error"}, "field exists"),
        S("lpush", {"name": "logs", "value": "ERROR timeout talking to payments"}, "push a log line"),
        S("lpush", {"name": "logs", "value": "ERROR permission denied for bucket reports"}, "push another log line"),
        S("lrange", {"name": "logs", "start": 0, "stop": -1}, "list of ERROR log lines"),
        S("llen", {"name": "logs"}, "list length"),
        S("sadd", {"name": "tags", "value": "error"}, "set member named error"),
        S("smembers", {"name": "tags"}, "set members"),
        S("zadd", {"key": "scores", "score": 5, "member": "timeout"}, "sorted set"),
        S("zrange", {"key": "scores", "start": 0, "end": -1, "with_scores": True}, "sorted set range"),
        S("type", {"key": "logs"}, "type of a key"),
        S("type", {"key": "nothing-here"}, "type of a missing key"),
        S("dbsize", {}, "dbsize"),
        S("scan_keys", {"pattern": "user:*"}, "scan keys"),
        S("scan_all_keys", {"pattern": "nomatch:*"}, "scan with no match"),
        S("expire", {"name": "greeting", "expire_seconds": 600}, "set a TTL"),
        S("publish", {"channel": "alerts", "message": "Error budget at 80%"}, "publish to a channel with no subscriber"),
        S("xadd", {"key": "events", "fields": {"level": "error", "msg": "rate limit exceeded upstream"}}, "stream entry about a rate limit"),
        S("xrange", {"key": "events", "count": 5}, "stream range"),
        S("info", {"section": "server"}, "info"),
        F("hget", {"name": "greeting", "key": "x"}, "hash command on a string key (WRONGTYPE)", VAL),
        F("lrange", {"name": "greeting", "start": 0, "stop": -1}, "list command on a string key (WRONGTYPE)", VAL),
        F("llen", {"name": "user:1"}, "list command on a hash key (WRONGTYPE)", VAL),
        F("smembers", {"name": "logs"}, "set command on a list key (WRONGTYPE)", VAL),
        F("zrange", {"key": "tags", "start": 0, "end": -1}, "sorted-set command on a set key (WRONGTYPE)", VAL),
        F("rename", {"old_key": "no-such-key", "new_key": "x"}, "rename a key that does not exist", NF),
        F("get", {"key": "does-not-exist"}, "read a key that does not exist (judgement: answered as 'Key ... does not exist')", NF),
        F("hget", {"name": "user:1", "key": "missing"}, "read a hash field that does not exist", NF),
        F("delete", {"key": "nothing-here"}, "delete a key that does not exist", NF),
        F("json_set", {"name": "doc", "path": "$", "value": "{\"a\": 1}"}, "JSON command without the RedisJSON module (set)", ("business", "validation", "UNSUPPORTED", False)),
        F("json_get", {"name": "greeting"}, "JSON command without the RedisJSON module", ("business", "validation", "UNSUPPORTED", False)),
    ]
    sessions.append(("redis-mcp-server", "redis-mcp-server", "0.5.1", V("redis", "redis-mcp-server"), [], renv, None, c))
    c = [F("get", {"key": "greeting"}, "server requires a password, none given (NOAUTH)", PERM),
         F("set", {"key": "k", "value": "v"}, "write without authentication (NOAUTH)", PERM),
         F("dbsize", {}, "dbsize without authentication", PERM)]
    sessions.append(("redis-mcp-server", "redis-mcp-server", "0.5.1", V("redis", "redis-mcp-server"), ["--port", "6380"], renv, None, c))
    c = [F("set", {"key": "k1", "value": "v"}, "write to a redis at its maxmemory limit (OOM)", ("transient", "business", "NO_SPACE", False)),
         F("lpush", {"name": "q", "value": "job-1"}, "list push to a redis at its maxmemory limit (OOM)", ("transient", "business", "NO_SPACE", False)),
         S("get", {"key": "k1"}, "read still works on a full redis (key absent)") if False else S("dbsize", {}, "dbsize on a full redis")]
    sessions.append(("redis-mcp-server", "redis-mcp-server", "0.5.1", V("redis", "redis-mcp-server"), ["--port", "6381"], renv, None, c))
    c = [F("set", {"key": "k2", "value": "v"}, "write to a read-only replica", PERM),
         F("hset", {"name": "h", "key": "f", "value": "v"}, "hash write to a read-only replica", PERM),
         S("get", {"key": "greeting"}, "read from the replica")]
    sessions.append(("redis-mcp-server", "redis-mcp-server", "0.5.1", V("redis", "redis-mcp-server"), ["--port", "6382"], renv, None, c))
    c = [F("get", {"key": "greeting"}, "wrong password", PERM)]
    sessions.append(("redis-mcp-server", "redis-mcp-server", "0.5.1", V("redis", "redis-mcp-server"), ["--port", "6380", "--password", "wrong"], renv, None, c))
    c = [F("get", {"key": "greeting"}, "nothing listens on the port: connection refused", UNAVAIL),
         F("dbsize", {}, "dbsize, connection refused", UNAVAIL)]
    sessions.append(("redis-mcp-server", "redis-mcp-server", "0.5.1", V("redis", "redis-mcp-server"), ["--port", "6391"], renv, None, c))

    # ---------------- terminal-controller ----------------
    c = [
        S("get_current_directory", {}, "current directory"),
        S("list_directory", {"path": str(ws)}, "list a directory"),
        S("list_directory", {"path": str(ws / "empty-dir")}, "empty directory"),
        S("read_file", {"path": str(ws / "notes" / "troubleshooting.md")}, "file whose first line starts with 'Error:'"),
        S("read_file", {"path": str(ws / "logs" / "app.log")}, "log file with ERROR lines"),
        S("read_file", {"path": str(ws / "notes" / "one-line.txt")}, "file whose only line is 'No results found'"),
        S("read_file", {"path": str(ws / "data" / "result.json")}, "file holding {\"ok\": false, \"error\": ...} as content"),
        S("read_file", {"path": str(ws / "logs" / "app.log"), "start_row": 1, "end_row": 2}, "two log lines, the first an ERROR"),
        S("execute_command", {"command": f"grep -n ERROR {ws}/logs/app.log"}, "grep for ERROR lines"),
        S("execute_command", {"command": "echo 'Error: this is just echoed text'"}, "command output starting with Error:"),
        S("execute_command", {"command": f"ls {ws}/notes"}, "ls"),
        S("execute_command", {"command": "true"}, "command with empty output"),
        S("write_file", {"path": str(ws / "scratch.txt"), "content": "Error: placeholder text\n"}, "write a file"),
        S("insert_file_content", {"path": str(ws / "scratch.txt"), "content": "second line", "row": 1}, "insert a line"),
        S("update_file_content", {"path": str(ws / "scratch.txt"), "content": "line one", "row": 0}, "update a line"),
        S("delete_file_content", {"path": str(ws / "scratch.txt"), "substring": "nothing-like-this"}, "delete substring that is not there"),
        S("change_directory", {"path": str(ws / "notes")}, "change directory"),
        S("get_command_history", {"count": 5}, "history"),
        S("read_file", {"path": str(ws / "data" / "status.json"), "as_json": True}, "JSON file with an error key as data"),
        S("execute_command", {"command": f"cat {ws}/notes/todo.txt"}, "file mentioning fix error and permission denied"),
        S("execute_command", {"command": f"cat {ws}/notes/one-line.txt"}, "command output 'No results found'"),
        S("read_file", {"path": str(ws / "src" / "errors.py")}, "source code that raises errors"),
        S("list_directory", {"path": str(ws / "data")}, "list the data directory"),
        S("read_file", {"path": str(ws / "data" / "sales.csv"), "start_row": 2, "end_row": 2}, "one CSV row with status error"),
        F("read_file", {"path": str(ws / "nope.txt")}, "read a file that does not exist", NF),
        F("list_directory", {"path": str(ws / "missing-dir")}, "list a directory that does not exist", NF),
        F("change_directory", {"path": "/no/such/dir"}, "cd into a missing directory", NF),
        F("read_file", {"path": str(ws / "notes")}, "read a directory as a file", VAL),
        F("read_file", {"path": str(ws / "logs" / "app.log"), "start_row": 50}, "start row out of range", VAL),
        F("read_file", {"path": str(ws / "logs" / "app.log"), "start_row": 3, "end_row": 1}, "end row before start row", VAL),
        F("read_file", {"path": str(ws / "data" / "bad.json"), "as_json": True}, "file is not valid JSON", VAL),
        F("delete_file_content", {"path": str(ws / "scratch.txt"), "row": 99}, "delete a row out of range", VAL),
        F("update_file_content", {"path": str(ws / "missing.txt"), "content": "x", "row": 0}, "update a file that does not exist", NF),
        F("execute_command", {"command": "rm -rf /"}, "command refused by the server's deny list", PERM),
        F("execute_command", {"command": f"cat {ws}/missing-file.txt"}, "command fails: file does not exist", NF),
        F("execute_command", {"command": "python3 -c 'import json; json.loads(\"{bad\")'"}, "command fails with a Python traceback (bad input)", VAL),
        F("execute_command", {"command": "sleep 5", "timeout": 1}, "command timed out", ("transient", None, "TIMEOUT", True)),
        F("execute_command", {"command": "curl -sS http://127.0.0.1:9/"}, "command fails: connection refused", UNAVAIL),
        F("execute_command", {"command": "git -C /tmp log"}, "command fails: not a git repository", NF),
        F("write_file", {"path": str(ws / "locked.txt"), "content": "x"}, "overwrite an immutable file (EPERM)", PERM),
        F("write_file", {"path": str(ws / "locked-dir" / "new.txt"), "content": "x"}, "create a file inside an immutable directory (EPERM)", PERM),
        F("insert_file_content", {"path": str(ws / "locked.txt"), "content": "x", "row": 0}, "insert into an immutable file", PERM),
        F("delete_file_content", {"path": str(ws / "locked.txt"), "row": 0}, "delete a row of an immutable file", PERM),
        F("update_file_content", {"path": str(ws / "locked.txt"), "content": "x", "row": 0}, "update a row of an immutable file", PERM),
    ]
    sessions.append(("terminal-controller", "terminal-controller", "0.1.9", V("terminal", "terminal_controller"), [], {}, str(ws), c))

    # ---------------- mcp-alchemy (SQLAlchemy on SQLite) ----------------
    adb = work / "alchemy.db"
    c = [
        S("execute_query", {"query": "CREATE TABLE tasks (id INTEGER PRIMARY KEY, title TEXT NOT NULL UNIQUE, state TEXT)"}, "create table"),
        S("execute_query", {"query": "INSERT INTO tasks (title, state) VALUES ('Error page redesign', 'open'), ('Fix permission denied on upload', 'done'), ('Investigate timeout', 'failed')"}, "insert rows about errors"),
        S("execute_query", {"query": "SELECT * FROM tasks WHERE state = 'archived'"}, "zero rows"),
        S("execute_query", {"query": "SELECT * FROM tasks"}, "all rows"),
        S("execute_query", {"query": "SELECT title FROM tasks WHERE title LIKE 'Error%'"}, "row starting with Error"),
        S("execute_query", {"query": "SELECT 'Error: literal value' AS note"}, "literal starting with Error:"),
        S("execute_query", {"query": "UPDATE tasks SET state = 'x' WHERE id = 42"}, "update of zero rows"),
        S("all_table_names", {}, "table names"),
        S("filter_table_names", {"q": "task"}, "filter table names"),
        S("filter_table_names", {"q": "zzz"}, "filter with no match"),
        S("schema_definitions", {"table_names": ["tasks"]}, "schema"),
        S("execute_query", {"query": "SELECT count(*) AS errors FROM tasks WHERE state='failed'"}, "count named errors"),
        S("execute_query", {"query": "SELECT title FROM tasks WHERE id = :id", "params": {"id": 2}}, "parameterised query"),
        S("execute_query", {"query": "DELETE FROM tasks WHERE id = 99"}, "delete zero rows"),
        S("execute_query", {"query": "SELECT state, count(*) AS n FROM tasks GROUP BY state ORDER BY state"}, "group by state incl. failed"),
        S("execute_query", {"query": "SELECT 'No results found' AS message"}, "single value 'No results found'"),
        S("execute_query", {"query": "SELECT json_object('ok', json('false'), 'error', 'sample') AS j"}, "JSON value with ok:false as data"),
        S("execute_query", {"query": "SELECT title FROM tasks WHERE title LIKE '%denied%'"}, "search hit about permission denied"),
        F("execute_query", {"query": "SELECT * FROM projects"}, "table does not exist", NF),
        F("execute_query", {"query": "SELEC 1"}, "syntax error", VAL),
        F("execute_query", {"query": "INSERT INTO tasks (title) VALUES ('Investigate timeout')"}, "UNIQUE constraint", EXISTS),
        F("execute_query", {"query": "INSERT INTO tasks (title) VALUES (NULL)"}, "NOT NULL constraint", VAL),
        F("execute_query", {"query": "SELECT owner FROM tasks"}, "unknown column", NF),
        F("execute_query", {"query": "SELECT * FROM tasks WHERE id = :id"}, "bind parameter not supplied", VAL),
        F("execute_query", {"query": "CREATE TABLE tasks (id INTEGER)"}, "table already exists", EXISTS),
        S("execute_query", {"query": "CREATE TRIGGER tasks_done BEFORE UPDATE ON tasks WHEN OLD.state = 'done' BEGIN SELECT RAISE(ABORT, 'task is closed; reopen it before editing'); END"}, "create a trigger guarding closed tasks"),
        F("execute_query", {"query": "UPDATE tasks SET title = 'x' WHERE state = 'done'"}, "update refused by a trigger: task is closed", RULE),
        F("execute_query", {"query": "INSERT INTO tasks (title, state) VALUES ('locked out', 'open')"}, "database locked by another connection", ("transient", None, "SYSTEM_UNAVAILABLE", True),
          *HOLD.sqlite_exclusive(str(adb))),
    ]
    sessions.append(("mcp-alchemy", "mcp-alchemy", "2026.10.15.202659", V("alchemy", "mcp-alchemy"), [], {"DB_URL": f"sqlite:///{adb}"}, None, c))

    # ---------------- csv-mcp-server ----------------
    c = [
        S("load_csv", {"file_path": str(ws / "data" / "sales.csv")}, "load a CSV whose rows include status error/failed", capture="s1"),
        S("get_session_info", {"session_id": "$s1"}, "session info"),
        S("filter_rows", {"session_id": "$s1", "conditions": [{"column": "status", "operator": "==", "value": "error"}]}, "filter rows with status error"),
        S("get_value_counts", {"session_id": "$s1", "column": "status"}, "value counts of a status column"),
        S("get_statistics", {"session_id": "$s1"}, "statistics"),
        S("list_sessions", {}, "list sessions"),
        S("health_check", {}, "health check"),
        S("load_csv", {"file_path": str(ws / "data" / "empty.csv")}, "load a header-only CSV", capture="s2"),
        S("get_session_info", {"session_id": "$s2"}, "info of an empty session"),
        S("load_csv_from_content", {"content": "code,message\nE1,Error: disk full\nE2,permission denied\n"}, "load CSV content whose rows are error messages", capture="s3"),
        S("get_column_statistics", {"session_id": "$s1", "column": "amount"}, "column statistics"),
        S("sort_data", {"session_id": "$s1", "columns": ["region"]}, "sort"),
        S("get_history", {"session_id": "$s1"}, "history"),
        S("fill_missing_values", {"session_id": "$s1", "strategy": "fill", "value": 0, "columns": ["amount"]}, "fill missing"),
        S("export_csv", {"session_id": "$s3", "file_path": str(work / "export.csv")}, "export"),
        S("rename_columns", {"session_id": "$s3", "mapping": {"message": "error_message"}}, "rename a column to error_message"),
        S("remove_duplicates", {"session_id": "$s3"}, "remove duplicates (none)"),
        S("get_auto_save_status", {"session_id": "$s1"}, "auto-save status"),
        S("add_column", {"session_id": "$s3", "name": "error_flag", "value": False}, "add a column named error_flag"),
        F("load_csv", {"file_path": str(ws / "data" / "nope.csv")}, "CSV file does not exist", NF),
        F("get_statistics", {"session_id": "no-such-session"}, "unknown session id", NF),
        F("get_column_statistics", {"session_id": "$s1", "column": "revenue"}, "column not found", NF),
        F("get_statistics", {"session_id": "$s1", "columns": ["revenue"]}, "columns not found", NF),
        F("get_correlation_matrix", {"session_id": "$s3"}, "no numeric columns to correlate", VAL),
        F("get_correlation_matrix", {"session_id": "$s1", "method": "magic"}, "correlation on data with a single numeric column", VAL),
        F("group_by_aggregate", {"session_id": "$s1", "group_by": ["country"], "aggregations": {"amount": "sum"}}, "group-by column not found", NF),
        F("get_value_counts", {"session_id": "$s1", "column": "country"}, "value counts of a missing column", NF),
        F("select_columns", {"session_id": "$s1", "columns": ["country"]}, "select a missing column", NF),
        F("undo", {"session_id": "$s2"}, "nothing to undo in a session without operations", ("business", "validation", "BUSINESS_RULE", False)),
        F("export_csv", {"session_id": "$s1", "file_path": str(work / "x.xyz"), "format": "xyz"}, "unsupported export format", VAL),
    ]
    sessions.append(("csv-mcp-server", "csv-mcp-server", "1.0.0", V("csv", "csv-editor"), [], {}, None, c))

    # ---------------- mcp-text-editor ----------------
    tdir = work / "text"
    c = [
        S("get_text_file_contents", {"files": [{"file_path": str(tdir / "config.ini"), "ranges": [{"start": 1}]}]}, "read a config file with log_level = error"),
        S("get_text_file_contents", {"files": [{"file_path": str(tdir / "errors.txt"), "ranges": [{"start": 1}]}]}, "read a file of ERROR lines"),
        S("create_text_file", {"file_path": str(tdir / "new.txt"), "contents": "Error: sample first line\n"}, "create a file"),
        S("get_text_file_contents", {"files": [{"file_path": str(tdir / "config.ini"), "ranges": [{"start": 2, "end": 2}]}]}, "read one line"),
        S("get_text_file_contents", {"files": [{"file_path": str(tdir / "errors.txt"), "ranges": [{"start": 2, "end": 2}]}, {"file_path": str(tdir / "config.ini"), "ranges": [{"start": 3}]}]}, "read lines of two files"),
        S("get_text_file_contents", {"files": [{"file_path": str(tdir / "new.txt"), "ranges": [{"start": 1}]}]}, "read the created file starting with Error:"),
        F("create_text_file", {"file_path": str(tdir / "empty.txt"), "contents": ""}, "create a file with empty contents: refused", VAL),
        F("create_text_file", {"file_path": str(tdir / "config.ini"), "contents": "x\n"}, "create a file that already exists", EXISTS),
        F("patch_text_file_contents", {"file_path": str(tdir / "config.ini"), "file_hash": "0" * 64, "patches": [{"start": 1, "end": 1, "contents": "[srv]\n", "range_hash": "0" * 64}]}, "file hash mismatch: the file changed since it was read", CONFLICT),
        F("append_text_file_contents", {"file_path": str(tdir / "config.ini"), "file_hash": "deadbeef", "contents": "x = 1\n"}, "append with a stale file hash", CONFLICT),
        F("insert_text_file_contents", {"file_path": str(tdir / "errors.txt"), "file_hash": "deadbeef", "after": 1, "contents": "ERROR 3\n"}, "insert with a stale file hash", CONFLICT),
        F("delete_text_file_contents", {"file_path": str(tdir / "errors.txt"), "file_hash": "deadbeef", "ranges": [{"start": 1, "end": 1, "range_hash": "x"}]}, "delete with a stale file hash", CONFLICT),
    ]
    sessions.append(("mcp-text-editor", "mcp-text-editor", "1.2.2", V("texteditor", "mcp-text-editor"), [], {}, None, c))

    # ---------------- desktop-commander ----------------
    dc = node / "@wonderwhy-er" / "desktop-commander" / "dist" / "index.js"
    edit_target = ws / "notes" / "edit-me.txt"
    edit_target.write_text("alpha\nbeta\nalpha\ngamma\n")
    c = [
        S("read_file", {"path": str(ws / "notes" / "troubleshooting.md")}, "file starting with 'Error:'"),
        S("read_file", {"path": str(ws / "logs" / "app.log")}, "log with ERROR lines"),
        S("read_file", {"path": str(ws / "notes" / "one-line.txt")}, "file containing only 'No results found'"),
        S("read_file", {"path": str(ws / "data" / "result.json")}, "file holding {ok:false,error:...} as content"),
        S("read_file", {"path": str(ws / "src" / "errors.py")}, "source file defining PermissionDenied"),
        S("list_directory", {"path": str(ws / "data")}, "list a directory"),
        S("list_directory", {"path": str(ws / "empty-dir")}, "list an empty directory"),
        S("get_file_info", {"path": str(ws / "logs" / "app.log")}, "file info"),
        S("write_file", {"path": str(ws / "dc-out.txt"), "content": "Error: written on purpose\n"}, "write a file"),
        S("create_directory", {"path": str(ws / "dc-dir")}, "create a directory"),
        S("edit_block", {"file_path": str(edit_target), "old_string": "gamma", "new_string": "delta"}, "successful edit"),
        S("start_process", {"command": f"grep -c ERROR {ws}/logs/app.log", "timeout_ms": 5000}, "run grep counting ERROR lines"),
        S("start_process", {"command": "echo 'Error: printed by echo'", "timeout_ms": 5000}, "process prints a line starting with Error:"),
        S("list_sessions", {}, "list sessions"),
        S("get_config", {}, "config"),
        S("list_searches", {}, "list searches (none)"),
        S("read_multiple_files", {"paths": [str(ws / "notes" / "todo.txt"), str(ws / "README.md")]}, "read two files"),
        S("move_file", {"source": str(ws / "dc-out.txt"), "destination": str(ws / "dc-moved.txt")}, "move a file"),
        S("read_file", {"path": str(ws / "logs" / "app.log"), "offset": 4, "length": 2}, "two log lines from an offset, one ERROR"),
        S("list_directory", {"path": str(ws / "notes"), "depth": 1}, "list notes"),
        S("get_file_info", {"path": str(ws / "data")}, "info of a directory"),
        S("write_file", {"path": str(ws / "dc-moved.txt"), "content": "ERROR appended line\n", "mode": "append"}, "append to a file"),
        S("read_file", {"path": str(ws / "data" / "status.json")}, "JSON with an error key that is data"),
        F("edit_block", {"file_path": str(edit_target), "old_string": "alpha", "new_string": "omega"}, "two occurrences found where one was expected", VAL),
        F("edit_block", {"file_path": str(edit_target), "old_string": "this text is not in the file at all", "new_string": "x"}, "search text not found in the file", NF),
        F("edit_block", {"file_path": str(edit_target), "old_string": "", "new_string": "x"}, "empty search string", VAL),
        F("edit_block", {"file_path": str(edit_target), "old_string": "betta", "new_string": "x"}, "no exact match; a similar text was found", NF),
        F("get_more_search_results", {"sessionId": "search_does_not_exist"}, "search session not found", NF),
        F("stop_search", {"sessionId": "search_does_not_exist"}, "stop a search session that does not exist", NF),
        S("edit_block", {"file_path": str(edit_target), "old_string": "alpha", "new_string": "ALPHA", "expected_replacements": 2}, "edit with the right replacement count"),
    ]
    sessions.append(("desktop-commander", "@wonderwhy-er/desktop-commander", "0.2.52", NODE, [str(dc)], {"HOME": str(work / "home")}, None, c))

    # ---------------- filesystem (npm) ----------------
    fs = node / "@modelcontextprotocol" / "server-filesystem" / "dist" / "index.js"
    c = [
        S("list_allowed_directories", {}, "allowed directories"),
        S("list_directory", {"path": str(ws)}, "list the workspace"),
        S("list_directory", {"path": str(ws / "empty-dir")}, "empty directory"),
        S("list_directory_with_sizes", {"path": str(ws / "data")}, "list with sizes"),
        S("directory_tree", {"path": str(ws / "notes")}, "tree"),
        S("read_text_file", {"path": str(ws / "notes" / "troubleshooting.md")}, "file whose first line starts with 'Error:'"),
        S("read_text_file", {"path": str(ws / "logs" / "app.log")}, "log file with ERROR lines"),
        S("read_text_file", {"path": str(ws / "notes" / "one-line.txt")}, "file containing only 'No results found'"),
        S("read_text_file", {"path": str(ws / "data" / "result.json")}, "file with {\"ok\":false,\"error\":...} as content"),
        S("read_text_file", {"path": str(ws / "data" / "status.json")}, "JSON with an error key that is data"),
        S("read_text_file", {"path": str(ws / "src" / "errors.py")}, "source that raises errors"),
        S("read_text_file", {"path": str(ws / "logs" / "app.log"), "head": 2}, "first two log lines"),
        S("read_text_file", {"path": str(ws / "logs" / "app.log"), "tail": 1}, "last log line"),
        S("read_multiple_files", {"paths": [str(ws / "notes" / "todo.txt"), str(ws / "README.md")]}, "read two files"),
        S("search_files", {"path": str(ws), "pattern": "**/*error*"}, "search file names for error"),
        S("search_files", {"path": str(ws), "pattern": "**/*.xlsx"}, "search with no hit"),
        S("get_file_info", {"path": str(ws / "logs" / "app.log")}, "file info"),
        S("write_file", {"path": str(ws / "fs-out.txt"), "content": "Error: example first line\n"}, "write a file"),
        S("edit_file", {"path": str(ws / "fs-out.txt"), "edits": [{"oldText": "example", "newText": "sample"}]}, "edit a file (diff)"),
        S("edit_file", {"path": str(ws / "fs-out.txt"), "edits": [{"oldText": "sample", "newText": "dry"}], "dryRun": True}, "dry-run edit"),
        S("create_directory", {"path": str(ws / "fs-new")}, "create a directory"),
        S("create_directory", {"path": str(ws / "fs-new")}, "create a directory that already exists (idempotent)"),
        S("move_file", {"source": str(ws / "fs-out.txt"), "destination": str(ws / "fs-new" / "fs-out.txt")}, "move a file"),
        S("read_text_file", {"path": str(ws / "site-copy-empty.txt")} if False else {"path": str(ws / "notes" / "todo.txt")}, "todo list mentioning fix error"),
        S("read_media_file", {"path": str(ws / "README.md")}, "read a non-image file as media"),
    ]
    sessions.append(("server-filesystem", "@modelcontextprotocol/server-filesystem", "2026.8.31", NODE, [str(fs), str(ws)], {}, None, c))

    # ---------------- memory (npm) ----------------
    mem = node / "@modelcontextprotocol" / "server-memory" / "dist" / "index.js"
    c = [
        S("read_graph", {}, "empty graph"),
        S("create_entities", {"entities": [{"name": "PaymentsAPI", "entityType": "service", "observations": ["returns HTTP 500 under load", "Error: rate limit exceeded seen in logs"]}, {"name": "Alice", "entityType": "person", "observations": ["on call"]}]}, "create entities with error observations"),
        S("create_relations", {"relations": [{"from": "Alice", "to": "PaymentsAPI", "relationType": "maintains"}]}, "create relation"),
        S("add_observations", {"observations": [{"entityName": "PaymentsAPI", "contents": ["permission denied for service account fixed on 2026-11-02"]}]}, "add observation"),
        S("search_nodes", {"query": "rate limit"}, "search hit about rate limit"),
        S("search_nodes", {"query": "kubernetes"}, "search with no hit"),
        S("open_nodes", {"names": ["PaymentsAPI"]}, "open node"),
        S("open_nodes", {"names": ["Nobody"]}, "open a node that does not exist (empty graph)"),
        S("read_graph", {}, "full graph"),
        S("delete_observations", {"deletions": [{"entityName": "Alice", "observations": ["on call"]}]}, "delete observation"),
        S("delete_relations", {"relations": [{"from": "Alice", "to": "PaymentsAPI", "relationType": "maintains"}]}, "delete relation"),
        S("create_entities", {"entities": [{"name": "PaymentsAPI", "entityType": "service", "observations": []}]}, "create an entity that exists (ignored, empty list)"),
        S("delete_entities", {"entityNames": ["Alice"]}, "delete entity"),
        S("search_nodes", {"query": "500"}, "search hit about HTTP 500"),
        S("create_entities", {"entities": [{"name": "Incident-42", "entityType": "incident", "observations": ["Database error: too many connections (postmortem quote)"]}]}, "entity quoting a database error"),
        S("open_nodes", {"names": ["Incident-42"]}, "open the incident entity"),
        S("search_nodes", {"query": "too many connections"}, "search hit quoting a failure"),
    ]
    sessions.append(("server-memory", "@modelcontextprotocol/server-memory", "2026.8.31", NODE, [str(mem)], {"MEMORY_FILE_PATH": str(work / "memory.jsonl")}, None, c))

    # ---------------- everything (npm) ----------------
    ev = node / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
    c = [
        S("echo", {"message": "Error: this is an echo of user text"}, "echo of text starting with Error:"),
        S("echo", {"message": "No results found"}, "echo of 'No results found'"),
        S("echo", {"message": "{\"ok\":false,\"error\":\"not really\"}"}, "echo of a JSON failure-looking string"),
        S("echo", {"message": "Traceback (most recent call last): quoted by the user"}, "echo of a traceback-looking string"),
        S("echo", {"message": "hello"}, "plain echo"),
        S("get-sum", {"a": 2, "b": 3}, "sum"),
        S("get-sum", {"a": -1, "b": 1}, "sum is zero"),
        S("get-tiny-image", {}, "image content"),
        S("get-annotated-message", {"messageType": "success", "includeImage": False}, "annotated success message"),
        S("get-structured-content", {"location": "New York"}, "structured content"),
        S("get-resource-links", {"count": 2}, "resource links"),
        S("get-resource-reference", {"resourceType": "Text", "resourceId": 1}, "embedded resource"),
        S("echo", {"message": "0 rows"}, "echo of '0 rows'"),
        S("echo", {"message": "Database error: quoted from a log, not a failure"}, "echo of a database-error-looking string"),
        S("echo", {"message": "Security violation: this phrase is the title of a novel"}, "echo of a security-violation-looking string"),
        S("echo", {"message": "ERROR 2026-11-30 worker 3 timed out\nERROR 2026-11-30 worker 4 timed out"}, "echo of ERROR log lines"),
        S("get-sum", {"a": 500, "b": 0}, "sum equal to 500"),
    ]
    sessions.append(("server-everything", "@modelcontextprotocol/server-everything", "2026.8.31", NODE, [str(ev), "stdio"], {}, None, c))

    # ---------------- mcp-server-git ----------------
    repo = str(work / "repo")
    c = [
        S("git_status", {"repo_path": repo}, "status with an untracked file"),
        S("git_log", {"repo_path": repo}, "log with 'fix error' commit messages"),
        S("git_log", {"repo_path": repo, "max_count": 1}, "last commit mentions permission denied"),
        S("git_branch", {"repo_path": repo, "branch_type": "local"}, "branches incl. feature/error-pages"),
        S("git_show", {"repo_path": repo, "revision": "HEAD~1"}, "show a commit whose diff adds 'Error: empty input'"),
        S("git_diff_unstaged", {"repo_path": repo}, "empty unstaged diff"),
        S("git_diff_staged", {"repo_path": repo}, "empty staged diff"),
        S("git_diff", {"repo_path": repo, "target": "HEAD~2"}, "diff against an older commit"),
        S("git_add", {"repo_path": repo, "files": ["notes.txt"]}, "stage a file"),
        S("git_diff_staged", {"repo_path": repo}, "staged diff whose content starts with Error:"),
        S("git_commit", {"repo_path": repo, "message": "docs: note about Error: prefix"}, "commit"),
        S("git_create_branch", {"repo_path": repo, "branch_name": "fix/timeout"}, "create branch"),
        S("git_checkout", {"repo_path": repo, "branch_name": "fix/timeout"}, "checkout"),
        S("git_log", {"repo_path": repo, "max_count": 2}, "log after commit"),
        S("git_status", {"repo_path": repo}, "clean status"),
        S("git_reset", {"repo_path": repo}, "reset with nothing staged"),
        S("git_branch", {"repo_path": repo, "branch_type": "all"}, "all branches"),
        S("git_show", {"repo_path": repo, "revision": "HEAD"}, "show the latest commit"),
        S("git_checkout", {"repo_path": repo, "branch_name": "feature/error-pages"}, "checkout a branch named error-pages"),
        S("git_diff", {"repo_path": repo, "target": "main"}, "diff against main"),
        S("git_log", {"repo_path": repo, "max_count": 10, "start_timestamp": "2026-11-01"}, "log since a date"),
    ]
    sessions.append(("mcp-server-git", "mcp-server-git", "2026.10.19", V("git", "mcp-server-git"), ["--repository", repo], GIT_ENV, None, c))

    # ---------------- mcp-server-time ----------------
    c = [
        S("get_current_time", {"timezone": "Etc/UTC"}, "current time UTC"),
        S("get_current_time", {"timezone": "Europe/Paris"}, "current time Paris"),
        S("get_current_time", {"timezone": "Asia/Kolkata"}, "half-hour offset zone"),
        S("get_current_time", {"timezone": "America/New_York"}, "New York"),
        S("convert_time", {"source_timezone": "Europe/London", "time": "09:30", "target_timezone": "Asia/Tokyo"}, "convert"),
        S("convert_time", {"source_timezone": "Etc/UTC", "time": "00:00", "target_timezone": "Etc/UTC"}, "zero difference"),
        S("convert_time", {"source_timezone": "America/Los_Angeles", "time": "23:45", "target_timezone": "Australia/Sydney"}, "across date line"),
        S("get_current_time", {"timezone": "Pacific/Chatham"}, "45-minute offset zone"),
        S("get_current_time", {"timezone": "Australia/Lord_Howe"}, "half-hour DST zone"),
        S("convert_time", {"source_timezone": "Asia/Kolkata", "time": "12:00", "target_timezone": "Asia/Kathmandu"}, "15-minute difference"),
        S("convert_time", {"source_timezone": "Europe/Berlin", "time": "02:30", "target_timezone": "America/Sao_Paulo"}, "convert early morning"),
        S("get_current_time", {"timezone": "Africa/Nairobi"}, "Nairobi"),
    ]
    sessions.append(("mcp-server-time", "mcp-server-time", "2026.10.19", V("time", "mcp-server-time"), ["--local-timezone", "Etc/UTC"], {}, None, c))

    # ---------------- mcp-server-fetch (local HTTP server) ----------------
    base = f"http://127.0.0.1:{port}"
    c = [
        S("fetch", {"url": f"{base}/index.html"}, "status page: all systems operational"),
        S("fetch", {"url": f"{base}/http500.html"}, "article about HTTP 500 errors"),
        S("fetch", {"url": f"{base}/errors.json"}, "JSON with an error key that is data"),
        S("fetch", {"url": f"{base}/error-codes.txt"}, "text page whose lines start with 'Error:'"),
        S("fetch", {"url": f"{base}/incident.md"}, "postmortem mentioning rate limit and quota"),
        S("fetch", {"url": f"{base}/http500.html", "raw": True}, "raw HTML about HTTP 500"),
        S("fetch", {"url": f"{base}/http500.html", "max_length": 60}, "truncated article"),
        S("fetch", {"url": f"{base}/http500.html", "start_index": 100, "max_length": 80}, "continued from an index"),
        S("fetch", {"url": f"{base}/"}, "directory listing"),
        S("fetch", {"url": f"{base}/robots.txt"}, "robots.txt"),
        S("fetch", {"url": f"{base}/forbidden.html"}, "article explaining 403 Forbidden"),
        S("fetch", {"url": f"{base}/rate-limits.html"}, "page documenting 429 rate limits"),
        S("fetch", {"url": f"{base}/no-results.txt"}, "page whose only text is 'No results found'"),
        S("fetch", {"url": f"{base}/traceback.txt"}, "tutorial page with a Python traceback"),
    ]
    sessions.append(("mcp-server-fetch", "mcp-server-fetch", "2026.10.24", V("fetch", "mcp-server-fetch"), ["--ignore-robots-txt", "--allow-private-ips"], {}, None, c))

    # ---------------- mcp-server-calculator ----------------
    exprs = [("2+2", "addition"), ("10/4", "division"), ("2**10", "power"), ("sqrt(144)", "sqrt"), ("-5+3", "negative"),
             ("0*1000", "zero result"), ("pi*2", "pi"), ("log(e)", "log"), ("7 % 3", "modulo"), ("1e308*10", "overflow to inf"),
             ("factorial(10)", "factorial"), ("sin(0)", "sin"), ("500 - 404", "numbers that look like status codes"), ("round(2.5)", "round"),
             ("floor(9.99)", "floor"), ("404", "a bare number 404"), ("1/3", "repeating decimal"), ("gcd(12, 18)", "gcd"),
             ("exp(0)", "exp"), ("2^8", "caret power"), ("100*1.07**5", "compound interest"), ("hypot(3, 4)", "hypot")]
    c = [S("calculate", {"expression": e}, s) for e, s in exprs]
    sessions.append(("mcp-server-calculator", "mcp-server-calculator", "0.2.1", V("calc", "mcp-server-calculator"), [], {}, None, c))

    # ---------------- mcp-shell-server ----------------
    c = [
        S("shell_execute", {"command": ["echo", "Error: just text"]}, "echo starting with Error:"),
        S("shell_execute", {"command": ["cat", str(ws / "logs" / "app.log")]}, "cat a log with ERROR lines"),
        S("shell_execute", {"command": ["grep", "-c", "ERROR", str(ws / "logs" / "app.log")]}, "count ERROR lines"),
        S("shell_execute", {"command": ["ls", str(ws / "empty-dir")]}, "ls of an empty directory (empty stdout)"),
        S("shell_execute", {"command": ["cat", str(ws / "notes" / "one-line.txt")]}, "output is only 'No results found'"),
        S("shell_execute", {"command": ["cat", str(ws / "data" / "result.json")]}, "output is {ok:false,error:...} file content"),
        S("shell_execute", {"command": ["wc", "-l", str(ws / "notes" / "todo.txt")]}, "wc"),
        S("shell_execute", {"command": ["echo", "0 rows"]}, "output '0 rows'"),
        S("shell_execute", {"command": ["cat"], "stdin": "permission denied (quoted from a ticket)"}, "stdin echoed through cat"),
        S("shell_execute", {"command": ["ls", str(ws / "notes")]}, "ls"),
        S("shell_execute", {"command": ["head", "-n", "1", str(ws / "notes" / "troubleshooting.md")]}, "first line of a troubleshooting guide"),
        S("shell_execute", {"command": ["echo", "Traceback (most recent call last):"]}, "echo of a traceback header"),
        S("shell_execute", {"command": ["grep", "-i", "denied", str(ws / "logs" / "app.log")]}, "grep hit about permission denied"),
        S("shell_execute", {"command": ["cat", str(ws / "src" / "errors.py")]}, "source code that raises errors"),
        S("shell_execute", {"command": ["echo", "{\"ok\":false,\"error\":\"sample\"}"]}, "echo of a JSON failure-looking string"),
        S("shell_execute", {"command": ["head", "-n", "2", str(ws / "logs" / "app.log")]}, "first two log lines incl. connection refused"),
        S("shell_execute", {"command": ["ls", "-1", str(ws / "data")]}, "ls -1"),
    ]
    sessions.append(("mcp-shell-server", "mcp-shell-server", "1.1.14", V("shell", "mcp-shell-server"), [], {"ALLOW_COMMANDS": "echo,cat,grep,ls,wc,head"}, str(ws), c))

    # ---------------- mcp-sqlite (datasette-style) ----------------
    c = [
        S("sqlite_get_catalog", {}, "catalog"),
        S("sqlite_execute", {"sql": "SELECT * FROM orders WHERE amount > 1000"}, "zero rows (HTML table)"),
        S("sqlite_execute", {"sql": "SELECT message FROM events WHERE level='ERROR'"}, "ERROR log messages"),
        S("sqlite_execute", {"sql": "SELECT 'Error: literal' AS note"}, "literal starting with Error:"),
        S("sqlite_execute", {"sql": "SELECT count(*) AS n FROM orders"}, "count"),
        S("sqlite_execute", {"sql": "SELECT customer, status FROM orders ORDER BY id"}, "rows with failed/error statuses"),
        S("sqlite_execute", {"sql": "SELECT 'No results found' AS msg"}, "single value 'No results found'"),
        S("sqlite_execute", {"sql": "SELECT NULL AS error"}, "column named error"),
        S("sqlite_execute", {"sql": "SELECT * FROM events WHERE message LIKE '%denied%'"}, "row about permission denied"),
        S("sqlite_execute", {"sql": "SELECT json_object('ok', json('false'), 'error', 'x') AS j"}, "JSON-looking value"),
        S("sqlite_execute", {"sql": "SELECT name FROM sqlite_master WHERE type='index'"}, "list of indexes (may be empty)"),
        S("sqlite_execute", {"sql": "SELECT 0 AS rows"}, "zero as a value"),
    ]
    sessions.append(("mcp-sqlite", "mcp-sqlite", "0.3.2", V("mcpsqlite", "mcp-sqlite"), [db], {}, None, c))

    # ---------------- mcp-server-office (docx) ----------------
    docx = str(ws / "report.docx")
    docx2 = str(ws / "errors-table.docx")
    c = [
        S("write_docx", {"path": docx, "content": "Error budget report\n\nIn November the API returned HTTP 500 on 0.2% of requests.\n\nPermission denied errors dropped after the role fix."}, "write a report about errors"),
        S("read_docx", {"path": docx}, "read a report whose first paragraph starts with 'Error'"),
        S("edit_docx_insert", {"path": docx, "inserts": [{"text": "Action item: alert when the rate limit is exceeded."}]}, "insert a paragraph (diff)"),
        S("read_docx", {"path": docx}, "read the edited report"),
        S("edit_docx_paragraph", {"path": docx, "edits": [{"paragraph_index": 1, "search": "0.2%", "replace": "0.3%"}]}, "edit a paragraph (diff)"),
        S("write_docx", {"path": docx2, "content": "Error codes\n\n[Table]\n|code|meaning|\n|E1|disk full|\n|E2|timeout|"}, "write a doc with a table of error codes"),
        S("read_docx", {"path": docx2}, "read a table of error codes"),
        S("write_docx", {"path": str(ws / "no-results.docx"), "content": "No results found"}, "write a one-line document"),
        S("read_docx", {"path": str(ws / "no-results.docx")}, "read a document whose only text is 'No results found'"),
    ]
    sessions.append(("mcp-server-office", "mcp-server-office", "0.2.0", V("office", "mcp-server-office"), [], {}, str(ws), c))

    return sessions


# --------------------------------------------------------------------------------------
# Runner
# --------------------------------------------------------------------------------------

async def run_session(server, package, version, command, args, env, cwd, cases, out_s, out_f, report):
    params = StdioServerParameters(command=command, args=args, env=env or None, cwd=cwd)
    errlog = open(os.devnull, "w")
    async with stdio_client(params, errlog=errlog) as (r, w):
        async with ClientSession(r, w) as session:
            await session.initialize()
            names = {}
            for case in cases:
                RAW.clear()
                case = dict(case, arguments=substitute(case["arguments"], names))
                if case.get("before"):
                    case["before"]()
                try:
                    with anyio.fail_after(60):
                        await session.call_tool(case["tool"], case["arguments"])
                except Exception as e:  # JSON-RPC error or timeout
                    report.append((server, case["tool"], case["situation"], f"exception: {e!r}"[:200]))
                    continue
                finally:
                    if case.get("after"):
                        case["after"]()
                raws = [v for v in RAW.values() if isinstance(v.get("result"), dict) and "content" in v["result"]]
                if not raws:
                    report.append((server, case["tool"], case["situation"], "no raw result captured"))
                    continue
                result = raws[-1]["result"]
                if case.get("capture"):
                    try:
                        names[case["capture"]] = json.loads(result["content"][0]["text"])["session_id"]
                    except Exception:
                        pass
                is_error = bool(result.get("isError"))
                if is_error:
                    report.append((server, case["tool"], case["situation"], "isError true: not recorded"))
                    continue
                rec = {"server": server, "package": package, "version": version, "tool": case["tool"],
                       "arguments": case["arguments"], "result": result, "situation": case["situation"]}
                if case["kind"] == "success":
                    out_s.write(json.dumps(rec, ensure_ascii=False) + "\n")
                else:
                    rec.update({k: case[k] for k in ("category", "also", "code", "retryable")})
                    out_f.write(json.dumps(rec, ensure_ascii=False) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--venvs", required=True, type=Path)
    ap.add_argument("--node", required=True, type=Path, help="node_modules directory")
    ap.add_argument("--work", required=True, type=Path, help="scratch directory (recreated)")
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    work = a.work.resolve()
    ws = prepare(work)
    (work / "home").mkdir()
    port = serve_site(work / "site")
    # start the local redis from empty so the recorded lists are reproducible
    subprocess.run(["redis-cli", "-p", "6379", "FLUSHALL"], capture_output=True)
    # MariaDB fixtures made as root (a trigger, foreign keys, a user with a query quota)
    mysql_root("SET GLOBAL innodb_lock_wait_timeout = 1; SET GLOBAL read_only = 0;"
               "DROP TABLE IF EXISTS shop.line_items, shop.customers, shop.refunds;"
               "CREATE TABLE shop.refunds (id INT PRIMARY KEY, amount INT);\n"
               "DELIMITER //\n"
               "CREATE TRIGGER shop.refund_limit BEFORE INSERT ON shop.refunds FOR EACH ROW "
               "BEGIN IF NEW.amount > 500 THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'Refund exceeds the approval limit of 500'; END IF; END//\n"
               "\nDELIMITER ;\n"
               "CREATE TABLE shop.customers (id INT PRIMARY KEY, name VARCHAR(20)) ENGINE=InnoDB;"
               "CREATE TABLE shop.line_items (id INT PRIMARY KEY, customer_id INT, FOREIGN KEY (customer_id) REFERENCES shop.customers(id)) ENGINE=InnoDB;"
               "INSERT INTO shop.customers VALUES (1, 'ann'); INSERT INTO shop.line_items VALUES (100, 1);"
               "DROP USER IF EXISTS 'limited'@'127.0.0.1', 'limited'@'localhost';"
               "CREATE USER 'limited'@'127.0.0.1' IDENTIFIED BY 'limpw' WITH MAX_QUERIES_PER_HOUR 2;"
               "CREATE USER 'limited'@'localhost' IDENTIFIED BY 'limpw' WITH MAX_QUERIES_PER_HOUR 2;"
               "GRANT SELECT ON shop.* TO 'limited'@'127.0.0.1'; GRANT SELECT ON shop.* TO 'limited'@'localhost'; FLUSH USER_RESOURCES;")
    sessions = build(a.venvs.resolve(), a.node.resolve(), work, ws, port)
    only = set(filter(None, a.only.split(",")))
    a.out.mkdir(parents=True, exist_ok=True)
    report = []
    with open(a.out / "successes.jsonl", "w") as out_s, open(a.out / "success-shaped-failures.jsonl", "w") as out_f:
        for sess in sessions:
            if only and sess[0] not in only:
                continue
            try:
                anyio.run(run_session, *sess, out_s, out_f, report)
            except BaseException as e:  # noqa: BLE001
                report.append((sess[0], "-", "session", "session failed: " + "".join(traceback.format_exception_only(type(e), e))[:300]))
            out_s.flush()
            out_f.flush()
            print(f"done {sess[0]}", file=sys.stderr)
    for r in report:
        print("NOT RECORDED:", *r, sep=" | ", file=sys.stderr)


if __name__ == "__main__":
    main()
