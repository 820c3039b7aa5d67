"""The end-to-end check of an installed package (scripts/package-test.sh).

    package_check.py [--cwd DIR] -- PROXY_COMMAND...

PROXY_COMMAND is how the package runs mcp-errnorm (`/venv/bin/mcp-errnorm`,
`npx mcp-errnorm`): the official Python SDK client starts
`PROXY_COMMAND -- python -m mcp_server_time` and calls the real server through it. A
`convert_time` with a timezone that does not exist must come back as a structured error
(`_meta["mcp-errnorm/error"]` with its `errorCategory`); a valid one must pass as the
server's own success. Exits 0 when both hold, 1 with the reason otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

ERROR_META_KEY = "mcp-errnorm/error"
TIMEOUT_SECONDS = 120  # npx may resolve the package on its first start


def server_cmd() -> list[str]:
    return [sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC"]


async def check(proxy: list[str], cwd: str | None) -> list[str]:
    cmd = proxy + ["--", *server_cmd()]
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=dict(os.environ), cwd=cwd)
    problems: list[str] = []
    with anyio.fail_after(TIMEOUT_SECONDS):
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                bad = await session.call_tool(
                    "convert_time",
                    {"source_timezone": "Mars/Olympus_Mons", "time": "12:00", "target_timezone": "UTC"},
                )
                good = await session.call_tool(
                    "convert_time",
                    {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"},
                )
    bad_json = bad.model_dump(mode="json", by_alias=True, exclude_none=True)
    good_json = good.model_dump(mode="json", by_alias=True, exclude_none=True)
    error = (bad_json.get("_meta") or {}).get(ERROR_META_KEY)
    if bad_json.get("isError") is not True:
        problems.append(f"the failing call did not come back as an error: {json.dumps(bad_json)}")
    if not isinstance(error, dict) or error.get("errorCategory") != "validation":
        problems.append(
            f"no structured error with errorCategory 'validation' in _meta[{ERROR_META_KEY!r}]: "
            f"{json.dumps(bad_json)}"
        )
    else:
        print(
            f"package_check: failure -> {error['errorCategory']}/{error.get('errorCode')} "
            f"(rule {error.get('ruleId')}): {error.get('message')}"
        )
    if good_json.get("isError") or ERROR_META_KEY in (good_json.get("_meta") or {}):
        problems.append(f"the valid call did not pass as a success: {json.dumps(good_json)}")
    else:
        text = good_json["content"][0].get("text", "")
        if "Asia/Tokyo" not in text:
            problems.append(f"the valid call's answer is not the server's: {text}")
        else:
            print("package_check: success passed through")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cwd", help="run the proxy command in this directory")
    parser.add_argument("proxy", nargs=argparse.REMAINDER, help="-- PROXY_COMMAND...")
    args = parser.parse_args()
    proxy = args.proxy[1:] if args.proxy[:1] == ["--"] else args.proxy
    if not proxy:
        parser.error("no proxy command given")
    problems = anyio.run(check, proxy, args.cwd)
    for p in problems:
        print(f"package_check: {' '.join(proxy)}: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
