"""Profile one ``http_load`` row's server process with pyinstrument, under concurrent clients.

    pip install pyinstrument   # not a project dependency
    python -m benchmarks.profile_http --row b [--clients 10] [--seconds 8] [--all]

The row's HTTP server (``benchmarks.servers``) runs under ``python -m pyinstrument``; this
process drives it with ``--clients`` SDK client sessions calling in a loop for ``--seconds``,
then stops it with SIGINT, and pyinstrument prints the server's call tree (wall time: the
event loop's idle wait shows as ``select``). What ``http_load`` measures as server CPU per call
is in there: uvicorn and h11, Starlette, the SDK's Streamable HTTP transport, our middleware,
the call.
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
import signal
import sys
import tempfile
from contextlib import AsyncExitStack
from pathlib import Path

import anyio

from benchmarks.call_overhead import CALLS, KIND, _env, prepared, sdk_client
from benchmarks.common import REPO_ROOT
from benchmarks.http_load import ROWS, run_set
from benchmarks.records import DEFAULT_SEED


async def profile(args: argparse.Namespace) -> None:
    if importlib.util.find_spec("pyinstrument") is None:
        raise SystemExit("profile_http needs pyinstrument: pip install pyinstrument")
    with tempfile.TemporaryDirectory(prefix="compozy-bench-") as directory:
        async with prepared(Path(directory), args.seed, quick=True) as setup:
            output = Path(directory) / "profile.txt"
            command = [sys.executable, "-m", "pyinstrument", "-i", "0.0005", "-r", "text"]
            command += ["-o", str(output), *(["--show-all"] if args.all else [])]
            command += ["-m", "benchmarks.servers", KIND[args.row], "--transport", "http"]
            command += ["--world", str(setup.world)]
            errors = (Path(directory) / "server.log").open("w", encoding="utf-8")
            proc = await anyio.open_process(command, cwd=REPO_ROOT, env=_env(), stderr=errors)
            try:
                assert proc.stdout is not None
                buffer = b""
                with anyio.fail_after(120):
                    while b"\n" not in buffer:
                        try:
                            buffer += await proc.stdout.receive()
                        except anyio.EndOfStream:
                            errors.flush()
                            sys.exit((Path(directory) / "server.log").read_text()[-4000:])
                url = f"http://127.0.0.1:{int(buffer.split()[1])}/mcp"
                tool, kind, check = CALLS[args.row]
                tool_input = {
                    "echo": {"text": "hello, compozy"},
                    "compact": {"session_id": setup.session_id},
                    "full": {"session_id": setup.session_id, "result_view": "full"},
                }[kind]
                async with AsyncExitStack() as stack:
                    calls = [
                        (await stack.enter_async_context(sdk_client(url, tool, tool_input, check)))[
                            0
                        ]
                        for _ in range(args.clients)
                    ]
                    done = await run_set(calls, args.seconds)
            finally:
                proc.send_signal(signal.SIGINT)  # pyinstrument writes its report as it exits
                with anyio.move_on_after(30):
                    await proc.wait()
                if proc.returncode is None:
                    proc.kill()
                errors.close()
            print(output.read_text(encoding="utf-8"))
            print(f"{done.calls} calls in {done.seconds:.1f} s ({done.calls_per_s:.0f}/s)")


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING)
    parser = argparse.ArgumentParser(prog="python -m benchmarks.profile_http", description=__doc__)
    parser.add_argument("--row", choices=tuple(ROWS), default="b")
    parser.add_argument("--clients", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--all", action="store_true", help="show the libraries' frames too")
    anyio.run(profile, parser.parse_args(argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
