"""Where the ``scale`` group's RSS per session and per stream goes, line item by line item (toolkit).

``.venv/bin/python -m bench.scale_trace [--count N] [--top K]`` starts ``bench/servers/scale_toolkit.py``
with ``BENCH_SCALE_TRACE`` (``tracemalloc`` started before toolkit is imported; its ``snapshot`` tool
dumps a snapshot after a ``gc.collect()``), warms it as ``bench/scale.py`` does, then takes a
snapshot before and after each step and prints the ``K`` largest differences, in bytes per item,
grouped by the source line that allocated them (``lineno``), and the same grouped by the innermost
frame in toolkit (``--by toolkit``):

1. ``N`` idle legacy sessions (initialize + initialized): bytes per session;
2. a ``GET`` stream opened on each of those sessions: bytes per stream;
3. the streams closed and the sessions ended: what remains per session (should be ~0);
4. ``N`` 2026-07-28 ``subscriptions/listen`` streams: bytes per stream.

tracemalloc sees Python's allocations only (not the C libraries' nor the allocator's slack), and
makes the server slower and bigger: a diagnosis, not a figure; the figures are ``scale``'s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import tracemalloc
from pathlib import Path
from typing import Any

from bench import procs, scale
from bench.driver import HttpTransport, Session

SERVER = Path(__file__).resolve().parent / "servers" / "scale_toolkit.py"
PYTHON = Path(__file__).resolve().parent.parent / ".venv" / "bin" / "python"


def _in_toolkit(trace: tracemalloc.Traceback) -> str:
    """The innermost frame of ``trace`` in toolkit's sources, else the innermost frame."""
    for frame in reversed(trace):  # most recent call first (tracemalloc stores oldest first here)
        if "/toolkit/" in frame.filename:
            return f"{frame.filename.split('/src/')[-1]}:{frame.lineno}"
    frame = trace[-1]
    return f"{frame.filename}:{frame.lineno}"


def diff(before: tracemalloc.Snapshot, after: tracemalloc.Snapshot, per: int, top: int, by: str) -> list[str]:
    lines: list[str] = []
    if by == "lineno":
        stats = after.compare_to(before, "lineno")
        total = sum(s.size_diff for s in stats)
        for stat in stats[:top]:
            frame = stat.traceback[0]
            where = f"{frame.filename.split('site-packages/')[-1].split('/src/')[-1]}:{frame.lineno}"
            lines.append(f"  {stat.size_diff / per:9.1f} B  {stat.count_diff / per:6.2f} blocks  {where}")
    else:
        sizes: dict[str, list[int]] = {}
        for stat in after.compare_to(before, "traceback"):
            entry = sizes.setdefault(_in_toolkit(stat.traceback), [0, 0])
            entry[0] += stat.size_diff
            entry[1] += stat.count_diff
        total = sum(size for size, _ in sizes.values())
        for where, (size, count) in sorted(sizes.items(), key=lambda item: -item[1][0])[:top]:
            lines.append(f"  {size / per:9.1f} B  {count / per:6.2f} blocks  {where}")
    return [f"  total {total / per:.1f} B per item (traced Python allocations)", *lines]


async def main(count: int, top: int, by: str) -> None:
    scale.raise_fd_limit()
    workdir = Path(tempfile.mkdtemp(prefix="scale-trace-"))
    port = procs.free_port()
    env = {**os.environ, "BENCH_SCALE_TRACE": str(workdir / "snap")}
    argv = [str(PYTHON), str(SERVER), "--port", str(port)]
    process, _ = await procs.start(argv, env, workdir / "server.log", stdio=False)

    def check(result: dict[str, Any]) -> None:
        if result.get("isError"):
            raise RuntimeError(json.dumps(result)[:300])

    try:
        await procs.wait_for_port(process, port, 60)
        await scale.warm(port, "toolkit")

        async def snapshot() -> tracemalloc.Snapshot:
            # A connection each time: uvicorn closes one idle for 5 s, and a step can take longer.
            tool = Session(HttpTransport("127.0.0.1", port), "modern").use_tool("snapshot", {}, check)
            await tool.open()
            await tool.call()
            await tool.transport.close()
            return tracemalloc.Snapshot.load(str(workdir / f"snap.{len(sorted(workdir.glob('snap.*')))}"))

        s0 = await snapshot()
        ids = await scale.open_sessions(port, count, subscribe=True)
        s1 = await snapshot()
        streams = scale.Streams(port)
        await streams.open_many([streams.open_get(i) for i in ids])
        s2 = await snapshot()
        await streams.close()
        await scale.end_sessions(port, ids)
        await asyncio.sleep(1.0)
        s3 = await snapshot()
        listens = scale.Streams(port)
        await listens.open_many([listens.open_listen() for _ in range(count)])
        s4 = await snapshot()
        await listens.close()
        for title, before, after in (
            (f"{count} idle legacy sessions, per session", s0, s1),
            ("a GET stream on each, per stream", s1, s2),
            ("streams closed and sessions ended: left per session", s0, s3),
            (f"{count} subscriptions/listen streams, per stream", s3, s4),
        ):
            print(f"\n{title}:")
            print("\n".join(diff(before, after, count, top, by)))
    finally:
        await procs.stop(process)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--by", choices=("lineno", "toolkit"), default="lineno")
    args = parser.parse_args()
    asyncio.run(main(args.count, args.top, args.by))
