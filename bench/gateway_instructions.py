"""Instructions per proxied call in toolkit's gateway process (callgrind): a figure the machine's load does not move.

    .venv/bin/python -m bench.gateway_instructions [--calls N] [--transport http,stdio]
                                                   [--era modern,legacy] [--baseline REF] [--floor]

The ``compose`` scenario's CPU per call moves by 10-20 % from one round to the next on a shared
2-core machine, more than most changes to the proxy's call path. This counts what the gateway
process executes instead: the same gateway as that scenario (``bench/servers/toolkit_gateway.py``
under ``toolkit run``, in front of ``toolkit_server.py --workload items``, an HTTP upstream or
its stdio child) started under ``valgrind --tool=callgrind --instr-atstart=no``; after a
warm-up the driver switches the instrumentation on (``callgrind_control -i on``), makes ``N``
sequential calls (the bench driver's, every answer checked), switches it off and has the
counts written. The upstream is not counted. ``direct`` is the upstream itself, called directly,
counted the same way (the denominator of the ``compose`` ratio).

What it leaves out: the kernel's side (the syscalls, the loopback, the scheduler), and how fast
the instructions run (a process woken for each packet runs with cold caches): a gateway's CPU per
call is not its instruction count over a rate. It says what the code does, change by change.

``--baseline REF`` also counts the gateway of toolkit at commit REF (``git archive`` into a
temporary directory, on ``PYTHONPATH``); ``--floor`` adds a frameworkless gateway
(``bench/servers/floor_gateway.py``: uvicorn, one kept-alive upstream connection, both JSONs parsed).
Needs valgrind (``callgrind_control`` with it); ~1 minute per configuration.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from bench import procs
from bench.driver import HttpTransport, Session

ROOT = Path(__file__).resolve().parent.parent
PYTHON = str(ROOT / ".venv" / "bin" / "python")
UPSTREAM = str(ROOT / "bench" / "servers" / "toolkit_server.py")
GATEWAY = str(ROOT / "bench" / "servers" / "toolkit_gateway.py")
FLOOR = str(ROOT / "bench" / "servers" / "floor_gateway.py")
WARMUP = 150


def _totals(path: Path) -> int:
    for line in path.read_text().splitlines():
        if line.startswith("totals:"):
            return int(line.split()[1])
    return 0


@contextlib.contextmanager
def _tree(ref: str) -> Iterator[str]:
    """The ``src`` of toolkit at ``ref``, for ``PYTHONPATH``."""
    with tempfile.TemporaryDirectory(prefix="gateway-instructions-") as directory:
        archive = subprocess.run(["git", "archive", ref, "src"], cwd=ROOT, check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", directory], input=archive, check=True)
        yield str(Path(directory) / "src")


async def _count(argv: list[str], env: dict[str, str], port: int, era: str, calls: int, out: Path) -> float:
    """Instructions per call of the process ``argv`` serving HTTP on ``port``, under callgrind."""
    valgrind = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}.%p"]
    process = await asyncio.create_subprocess_exec(
        *valgrind, *argv, env=env, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL
    )
    try:
        await procs.wait_for_port(process, port, 600)
        session = Session(HttpTransport("127.0.0.1", port), era)  # type: ignore[arg-type]
        await session.open(300)
        try:
            for _ in range(WARMUP):
                await session.call(300)
            subprocess.run(["callgrind_control", "-i", "on", str(process.pid)], check=True, capture_output=True)
            for _ in range(calls):
                await session.call(300)
            subprocess.run(["callgrind_control", "-i", "off", str(process.pid)], check=True, capture_output=True)
            subprocess.run(["callgrind_control", "-d", str(process.pid)], check=True, capture_output=True)
        finally:
            await session.transport.close()
    finally:
        await procs.stop(process)
    counted = max((_totals(path) for path in out.parent.glob(out.name + ".*")), default=0)
    if not counted:
        raise RuntimeError(f"callgrind counted nothing for {argv}")
    return counted / calls


async def _main(args: argparse.Namespace) -> None:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    trees: dict[str, str | None] = {"toolkit": None}
    with contextlib.ExitStack() as stack:
        if args.baseline:
            trees[f"toolkit@{args.baseline}"] = stack.enter_context(_tree(args.baseline))
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="callgrind-")))
        upstream_port = procs.free_port()
        upstream = await asyncio.create_subprocess_exec(
            PYTHON, UPSTREAM, "--workload", "items", "--transport", "http", "--host", "127.0.0.1",
            "--port", str(upstream_port), env=env, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
        try:
            await procs.wait_for_port(upstream, upstream_port, 60)
            for era in args.era.split(","):
                port = procs.free_port()
                argv = [PYTHON, UPSTREAM, "--workload", "items", "--transport", "http"]
                direct = await _count(
                    [*argv, "--host", "127.0.0.1", "--port", str(port)],
                    env,
                    port,
                    era,
                    args.calls,
                    work / f"direct-{era}",
                )
                print(f"direct (the upstream alone), {era}: {direct / 1000:,.0f}k instructions per call", flush=True)
                for transport in args.transport.split(","):
                    target = f"http://127.0.0.1:{upstream_port}/mcp"
                    if transport == "stdio":
                        target = json.dumps([PYTHON, UPSTREAM, "--workload", "items", "--transport", "stdio"])
                    columns: list[tuple[str, list[str], dict[str, str]]] = []
                    for name, tree in trees.items():
                        port = procs.free_port()
                        gateway = [PYTHON, "-m", "toolkit", "run", GATEWAY, "--transport", "http"]
                        gateway += ["--host", "127.0.0.1", "--port", str(port)]
                        column_env = {**env, "BENCH_UPSTREAM": target, **({"PYTHONPATH": tree} if tree else {})}
                        columns.append((name, gateway, column_env))
                    if args.floor and transport == "http" and era == "modern":  # the floor keeps no sessions
                        port = procs.free_port()
                        columns.append(
                            ("floor", [PYTHON, FLOOR, "--port", str(port)], {**env, "BENCH_UPSTREAM": target})
                        )
                    for name, gateway, column_env in columns:
                        port = int(gateway[-1])
                        count = await _count(
                            gateway, column_env, port, era, args.calls, work / f"{name}-{transport}-{era}"
                        )
                        print(
                            f"{name}, {transport} upstream, {era}: {count / 1000:,.0f}k instructions per call "
                            f"= {count / direct:.2f}x direct",
                            flush=True,
                        )
        finally:
            await procs.stop(upstream)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=400, help="counted calls per configuration (400)")
    parser.add_argument("--transport", default="http,stdio", help="the gateway's upstream: http, stdio or both")
    parser.add_argument("--era", default="modern,legacy", help="the caller's era: modern, legacy or both")
    parser.add_argument("--baseline", help="also count toolkit at this commit")
    parser.add_argument("--floor", action="store_true", help="also count the frameworkless gateway (HTTP upstream)")
    args = parser.parse_args()
    if shutil.which("callgrind_control") is None:
        sys.exit(
            "bench.gateway_instructions needs valgrind (callgrind_control): install it, e.g. apt-get install valgrind"
        )
    asyncio.run(_main(args))


if __name__ == "__main__":
    main()
