"""The ``scale`` scenario's server on toolkit (``bench/scale.py``).

``python bench/servers/scale_toolkit.py --port PORT``: Streamable HTTP on 127.0.0.1 at ``/mcp``,
with one subscribable resource, ``bench://counter``, and one tool, ``touch``, that bumps the
counter and tells the resource's subscribers (``notify_resource_updated``: legacy sessions that
``resources/subscribe``d and have a ``GET`` stream open, and 2026-07-28 ``subscriptions/listen``
streams whose filter names it). ``max_sessions`` is raised above the 10,000 idle sessions the
scenario holds; everything else is the framework's default.

With ``BENCH_SCALE_TRACE`` set to a path, ``tracemalloc`` is started at import and the tool
``snapshot`` dumps a snapshot to ``<path>.<n>`` (the per-session line items; see bench/README.md).
With ``BENCH_SCALE_STORE`` set to a ``redis://`` URL, the server keeps its sessions in that store
and announces changes on its bus (``bench/scale.py``'s cluster phase: three such replicas behind
HAProxy, with one ``TOOLKIT_STATE_SECRET``).
With ``BENCH_SCALE_PROFILE`` set to a path, the tool ``profile`` starts (``on``) and stops (and
dumps to that path) a ``cProfile`` of the event loop's thread.
"""

import argparse
import os

TRACE = os.environ.get("BENCH_SCALE_TRACE")
if TRACE:
    import tracemalloc

    tracemalloc.start(12)

from toolkit import Server  # noqa: E402 (tracemalloc first, to see toolkit's own allocations)

URI = "bench://counter"
# max_concurrent_requests: 2026-07-28 requests without a session share one in-flight count per
# endpoint, open subscriptions/listen streams included; the default 100 refuses the 101st
# listen, and every other modern request once 100 are open (see bench/README.md, scale).
server = Server(
    "bench-scale", version="1.0.0", max_concurrent_requests=1_000_000, store=os.environ.get("BENCH_SCALE_STORE")
)
counter = [0]


@server.resource(URI, mime_type="text/plain")
def read_counter() -> str:
    """The counter that ``touch`` bumps."""
    return str(counter[0])


@server.tool()
async def touch() -> int:
    """Bump the counter and tell its subscribers."""
    counter[0] += 1
    await server.notify_resource_updated(URI)
    return counter[0]


if TRACE:
    snapshots = [0]

    @server.tool()
    def snapshot() -> str:
        """Dump a tracemalloc snapshot (bench diagnostics only)."""
        import gc

        gc.collect()
        snapshots[0] += 1
        path = f"{TRACE}.{snapshots[0]}"
        tracemalloc.take_snapshot().dump(path)
        return path


PROFILE = os.environ.get("BENCH_SCALE_PROFILE")
if PROFILE:
    import cProfile

    profiler = cProfile.Profile()

    @server.tool()
    async def profile(on: bool) -> str:
        """Start (on) or stop and dump (off) a cProfile of the event loop's thread (bench diagnostics only)."""
        if on:
            profiler.enable()
            return "on"
        profiler.disable()
        profiler.dump_stats(PROFILE)
        return PROFILE


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    server.run(transport="http", host="127.0.0.1", port=args.port, max_sessions=1_000_000)
