"""The ``scale`` scenario: many sessions and streams held by one HTTP server, and a fan-out to them.

The server is ``bench/servers/scale_<toolkit|mcp>.py``: Streamable HTTP, one subscribable resource
``bench://counter`` and a tool ``touch`` that bumps it and tells its subscribers. Each phase below
runs in a fresh server process (so one phase's leftovers never count in another's figures); every
phase starts by opening and ending ``WARM`` sessions and streams, unmeasured, so the allocator's
arenas and the interpreter's caches are warm before the first RSS reading. RSS is the server's
VmRSS (``/proc``), CPU its user + system time; "idle CPU" is the server's CPU over
``IDLE_SECONDS`` with nothing sent, as a % of one core.

- **idle** (``scale.idle_1k.*``, ``scale.idle_10k.*``): 1,000, then 9,000 more (10,000) legacy
  sessions, each ``initialize`` + ``notifications/initialized`` and then left alone (no connection
  held: a session is server state). RSS per session = (RSS with N sessions - RSS before) / N;
  CPU per session opened; idle CPU with them held.
- **streams_legacy** (``scale.streams_legacy.*``): 1,000 legacy sessions, each subscribed
  (``resources/subscribe bench://counter``); then each opens its ``GET`` stream (one connection
  each). RSS per stream = (RSS with the streams - RSS with the sessions alone) / 1,000: the stream
  and its connection, not the session. Then the fan-out (``scale.fanout_legacy.*``): ``FANOUTS``
  times, another session calls ``touch``; the time from writing that request until the last of
  the 1,000 streams has read its ``notifications/resources/updated`` (the driver reads them all in
  one process, so this includes its own reading: an upper bound), median; the server's CPU over
  the same span / 1,000 (the ``touch`` call itself included), median.
- **streams_modern** (``scale.streams_modern.*``, ``scale.fanout_modern.*``): 1,000 2026-07-28
  ``subscriptions/listen`` requests whose filter names ``bench://counter``, each its own
  connection, each open once acknowledged (``notifications/subscriptions/acknowledged``). RSS per
  stream = (RSS with them - RSS before) / 1,000; then the same fan-out, ``touch`` sent in that era.
- **soak** (``scale.soak.*``): ``SOAK_CYCLES`` cycles, each opening 1,000 legacy sessions, 100 of
  them with a subscribed ``GET`` stream, and 100 ``subscriptions/listen`` streams; one ``touch``
  reaching all 200; then every stream closed and every session ended (``DELETE``). RSS drift =
  (RSS after the last cycle - RSS after the first) / RSS after the first, in %: the first cycle
  is the start, so that what a first cycle leaves for good (allocator arenas, caches) is not
  counted as growth. ``rss_trend_kib``: the least-squares slope of RSS over the second half of the
  cycles, per cycle (the allocator grows RSS in steps early on; what never comes back keeps a slope).

- **cluster** (``scale.fanout_cluster_{legacy,modern}.*``, toolkit's columns only): the same
  fan-out to 1,000 streams held by three replicas on a Redis store behind HAProxy
  (``bench/scale_cluster.py``; run once its metrics are in ``bench/metrics.py``'s catalogue).

``mcp`` 2.3.0's ``MCPServer`` has no ``resources/subscribe``: its legacy streams are opened
unsubscribed, and its legacy fan-out is ``n/a (unsupported)``; its soak has no legacy subscriber.
The floor, fastmcp and Node columns do not run this group.

The driver holds every socket on raw asyncio streams (no HTTP client library) and raises its
``RLIMIT_NOFILE`` soft limit to the hard one, which the servers it starts inherit.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import resource
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bench import procs
from bench.driver import CLIENT_INFO, LEGACY_VERSION, MODERN_META, MODERN_VERSION, Era, HttpTransport, Session

if TYPE_CHECKING:
    from bench.run import Bench, Framework

URI = "bench://counter"
KINDS = ("toolkit", "mcp")  # the columns with a scale server
IDLE_COUNTS = (1_000, 10_000)
STREAMS = 1_000
# Sessions (and streams) opened and ended before a phase's first reading: few, since the memory
# they free would hold the first measured ones (1,000 sessions fit in what 200 streams leave).
WARM = 20
SETUP_CONNECTIONS = 8  # keep-alive connections the driver opens sessions on, in parallel
FANOUTS = 10  # touch calls per fan-out phase
IDLE_SECONDS = 2.0
SOAK_CYCLES = 20
SOAK_SESSIONS = 1_000
SOAK_STREAMS = 100  # legacy GET streams and subscriptions/listen streams, each, per soak cycle
SETTLE = 0.5  # seconds before an RSS reading, for the server to finish what it was doing
TIMEOUT = 120.0
UPDATED = b"notifications/resources/updated"
ACKNOWLEDGED = b"notifications/subscriptions/acknowledged"

METRIC_KEYS = (
    "scale.idle_1k.rss_per_session_kib",
    "scale.idle_10k.rss_per_session_kib",
    "scale.idle_10k.rss_mib",
    "scale.idle_10k.cpu_per_session_us",
    "scale.idle_10k.idle_cpu_pct",
    "scale.streams_legacy.rss_per_stream_kib",
    "scale.streams_legacy.idle_cpu_pct",
    "scale.fanout_legacy.last_ms",
    "scale.fanout_legacy.cpu_per_notification_us",
    "scale.streams_modern.rss_per_stream_kib",
    "scale.streams_modern.idle_cpu_pct",
    "scale.fanout_modern.last_ms",
    "scale.fanout_modern.cpu_per_notification_us",
    "scale.soak.rss_drift_pct",
    "scale.soak.rss_trend_kib",
)
NO_LEGACY_SUBSCRIBE = "mcp 2.3.0's MCPServer has no resources/subscribe (legacy resource subscriptions)"


def raise_fd_limit() -> int:
    """Raise this process's RLIMIT_NOFILE soft limit to its hard limit (children inherit it); the new soft limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


# --- raw HTTP -----------------------------------------------------------------------------------


class Http:
    """One keep-alive HTTP/1.1 connection for short exchanges (a whole body read, SSE included)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def request(self, method: str, headers: str, body: bytes = b"") -> tuple[int, dict[str, str], bytes]:
        if self.reader is None or self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        reader, writer = self.reader, self.writer
        length = f"Content-Length: {len(body)}\r\n" if body or method != "GET" else ""
        head = f"{method} /mcp HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n{headers}{length}\r\n"
        writer.write(head.encode() + body)
        status, response_headers = await read_head(reader)
        if "content-length" in response_headers:
            data = await reader.readexactly(int(response_headers["content-length"]))
        elif response_headers.get("transfer-encoding", "").lower() == "chunked":
            data = await read_chunked(reader)
        else:
            data = await reader.read()
        if response_headers.get("connection", "").lower() == "close" or (not data and status >= 400):
            await self.close()
        return status, response_headers, data

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            with contextlib.suppress(OSError):
                await self.writer.wait_closed()
        self.reader = self.writer = None


async def read_head(reader: asyncio.StreamReader) -> tuple[int, dict[str, str]]:
    raw = await reader.readuntil(b"\r\n\r\n")
    lines = raw.decode("latin-1").split("\r\n")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    return int(lines[0].split(" ", 2)[1]), headers


async def read_chunked(reader: asyncio.StreamReader) -> bytes:
    parts: list[bytes] = []
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";", 1)[0], 16)
        if size == 0:
            while (await reader.readuntil(b"\r\n")) != b"\r\n":
                pass
            return b"".join(parts)
        parts.append((await reader.readexactly(size + 2))[:-2])


def _body(request_id: int, method: str, params: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode()


JSON_HEADERS = "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
LEGACY_HEADERS = f"{JSON_HEADERS}MCP-Protocol-Version: {LEGACY_VERSION}\r\n"
INITIALIZE = _body(1, "initialize", {"protocolVersion": LEGACY_VERSION, "capabilities": {}, "clientInfo": CLIENT_INFO})
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
SUBSCRIBE = _body(2, "resources/subscribe", {"uri": URI})
LISTEN = _body(1, "subscriptions/listen", {"notifications": {"resourceSubscriptions": [URI]}, "_meta": MODERN_META})


def _check(status: int, data: bytes, what: str) -> None:
    if status not in (200, 202) or b'"error"' in data:
        raise RuntimeError(f"{what}: HTTP {status} {data[:300]!r}")


async def open_session(http: Http, subscribe: bool) -> str:
    """A legacy session (initialize + initialized, optionally resources/subscribe); its id."""
    status, headers, data = await http.request("POST", JSON_HEADERS, INITIALIZE)
    _check(status, data, "initialize")
    session_id = headers.get("mcp-session-id")
    if not session_id:
        raise RuntimeError(f"initialize: no Mcp-Session-Id in the response ({data[:200]!r})")
    with_id = f"{LEGACY_HEADERS}Mcp-Session-Id: {session_id}\r\n"
    status, _, data = await http.request("POST", with_id, INITIALIZED)
    _check(status, data, "notifications/initialized")
    if subscribe:
        status, _, data = await http.request("POST", with_id, SUBSCRIBE)
        _check(status, data, "resources/subscribe")
    return session_id


async def end_session(http: Http, session_id: str) -> None:
    status, _, data = await http.request(
        "DELETE", f"MCP-Protocol-Version: {LEGACY_VERSION}\r\nMcp-Session-Id: {session_id}\r\n"
    )
    if status not in (200, 202, 204):
        raise RuntimeError(f"DELETE session: HTTP {status} {data[:300]!r}")


async def open_sessions(port: int, count: int, subscribe: bool = False) -> list[str]:
    """``count`` legacy sessions, opened over ``SETUP_CONNECTIONS`` connections in parallel."""
    ids: list[str] = []
    remaining = [count]

    async def worker() -> None:
        http = Http(port)
        try:
            while remaining[0] > 0:
                remaining[0] -= 1
                ids.append(await open_session(http, subscribe))
        finally:
            await http.close()

    async with asyncio.timeout(TIMEOUT + count / 50):
        await asyncio.gather(*(worker() for _ in range(SETUP_CONNECTIONS)))
    return ids


async def end_sessions(port: int, ids: list[str]) -> None:
    queue = list(ids)

    async def worker() -> None:
        http = Http(port)
        try:
            while queue:
                await end_session(http, queue.pop())
        finally:
            await http.close()

    async with asyncio.timeout(TIMEOUT + len(ids) / 50):
        await asyncio.gather(*(worker() for _ in range(SETUP_CONNECTIONS)))


@dataclass
class Streams:
    """Open SSE streams, each read by its own task that counts the resource updates it sees."""

    port: int
    writers: list[asyncio.StreamWriter] = field(default_factory=list)
    readers: list[asyncio.Task[None]] = field(default_factory=list)
    updates: int = 0
    target: int = 0
    reached: asyncio.Event = field(default_factory=asyncio.Event)

    async def _open(self, head: bytes, body: bytes, wait_for: bytes | None) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
        self.writers.append(writer)
        writer.write(head + body)
        status, headers = await read_head(reader)
        if status != 200 or not headers.get("content-type", "").startswith("text/event-stream"):
            raise RuntimeError(f"stream: HTTP {status}, {headers.get('content-type')!r}: {await reader.read(300)!r}")
        tail = b""
        if wait_for is not None:  # the acknowledgement that the subscription is in force
            while wait_for not in tail:
                data = await reader.read(65536)
                if not data:
                    raise RuntimeError(f"stream ended before {wait_for.decode()}")
                tail += data
            tail = tail[tail.index(wait_for) + len(wait_for) :][-(len(UPDATED) - 1) :]
        self.readers.append(asyncio.create_task(self._read(reader, tail)))

    async def _read(self, reader: asyncio.StreamReader, tail: bytes) -> None:
        keep = len(UPDATED) - 1
        while True:
            data = await reader.read(65536)
            if not data:
                return
            tail += data
            found = tail.count(UPDATED)
            tail = tail[-keep:]
            if found:
                self.updates += found
                if self.updates >= self.target:
                    self.reached.set()

    async def open_get(self, session_id: str) -> None:
        head = (
            f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\nAccept: text/event-stream\r\n"
            f"MCP-Protocol-Version: {LEGACY_VERSION}\r\nMcp-Session-Id: {session_id}\r\n\r\n"
        )
        await self._open(head.encode(), b"", None)

    async def open_listen(self) -> None:
        head = (
            f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n{JSON_HEADERS}"
            f"MCP-Protocol-Version: {MODERN_VERSION}\r\nMcp-Method: subscriptions/listen\r\n"
            f"Content-Length: {len(LISTEN)}\r\n\r\n"
        )
        await self._open(head.encode(), LISTEN, ACKNOWLEDGED)

    async def open_many(self, opening: list[Any]) -> None:
        """Await the openings (coroutines), at most ``SETUP_CONNECTIONS * 4`` at a time."""
        gate = asyncio.Semaphore(SETUP_CONNECTIONS * 4)

        async def one(coroutine: Any) -> None:
            async with gate:
                await coroutine

        async with asyncio.timeout(TIMEOUT + len(opening) / 20):
            await asyncio.gather(*(one(c) for c in opening))

    def expect(self, count: int) -> None:
        """Wait (``reached``) until ``count`` more updates have been read, over every stream."""
        self.target = self.updates + count
        self.reached.clear()

    async def close(self) -> None:
        for writer in self.writers:
            writer.close()
        for task in self.readers:
            task.cancel()
        for task in self.readers:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self.writers.clear()
        self.readers.clear()


def _touch_check(result: dict[str, Any]) -> None:
    if result.get("isError"):
        raise RuntimeError(f"touch returned isError: {json.dumps(result)[:300]}")


async def fanout(
    pids: int | list[int], port: int, streams: Streams, era: Era, subscribers: int, others: tuple[int, ...] = ()
) -> tuple[list[float], list[float], list[float]]:
    """``FANOUTS`` times: ``touch``, until every one of ``subscribers`` streams has its update.

    Returns, one each per fan-out: the ms until the last one had it; the CPU µs per delivered
    notification of ``pids`` together (the server, or the replicas); the same of ``others``
    together (the cluster's HAProxy), over the same span.
    """
    group = [pids] if isinstance(pids, int) else pids
    trigger = Session(HttpTransport("127.0.0.1", port), era).use_tool("touch", {}, _touch_check)
    await trigger.open(TIMEOUT)
    last_ms: list[float] = []
    cpu_us: list[float] = []
    other_us: list[float] = []
    try:
        for _ in range(FANOUTS + 1):  # the first is a warm-up
            await asyncio.sleep(0.2)
            streams.expect(subscribers)
            cpu0, other0 = _cpu(group), _cpu(others)
            t0 = time.perf_counter()
            async with asyncio.timeout(TIMEOUT):
                await asyncio.gather(trigger.call(TIMEOUT), streams.reached.wait())
            elapsed, cpu1, other1 = time.perf_counter() - t0, _cpu(group), _cpu(others)
            last_ms.append(elapsed * 1e3)
            cpu_us.append((cpu1 - cpu0) / subscribers * 1e6)
            other_us.append((other1 - other0) / subscribers * 1e6)
    finally:
        await trigger.transport.close()
    return last_ms[1:], cpu_us[1:], other_us[1:]


def _cpu(pids: Sequence[int]) -> float:
    return sum(procs.cpu_seconds(pid) for pid in pids)


async def rss_kib(pid: int) -> float:
    await asyncio.sleep(SETTLE)
    return procs.rss_mib(pid) * 1024


async def idle_cpu_pct(pid: int) -> float:
    cpu0 = procs.cpu_seconds(pid)
    await asyncio.sleep(IDLE_SECONDS)
    return (procs.cpu_seconds(pid) - cpu0) / IDLE_SECONDS * 100


async def warm(port: int, kind: str) -> None:
    """Open and end ``WARM`` sessions, streams of both kinds among them, unmeasured."""
    ids = await open_sessions(port, WARM, subscribe=kind == "toolkit")
    streams = Streams(port)
    await streams.open_many(
        [streams.open_get(i) for i in ids[: WARM // 2]] + [streams.open_listen() for _ in range(WARM // 2)]
    )
    await streams.close()
    await end_sessions(port, ids)


# --- the phases -------------------------------------------------------------------------------


@dataclass
class Phase:
    bench: Bench
    fw: Framework
    name: str
    keys: list[str]

    async def run(self, body: Any) -> None:
        port = procs.free_port()
        argv = [str(self.fw.python), str(_server(self.bench, self.fw)), "--port", str(port)]

        async def guarded() -> None:
            process, _ = await procs.start(
                argv, self.bench.envs[self.fw.name], self.bench._log(self.fw, f"scale-{self.name}"), stdio=False
            )
            try:
                await procs.wait_for_port(process, port, self.bench.s.start_timeout)
                await warm(port, self.fw.kind)
                await body(process.pid, port)
            finally:
                await procs.stop(process)

        await self.bench._guard(self.fw, self.keys, guarded)

    def add(self, key: str, value: float, raw: Any = None) -> None:
        self.bench.collector.add(key, self.fw.name, value, raw)


def _server(bench: Bench, fw: Framework) -> Any:
    from bench.run import SERVERS  # bench.run imports this module

    return SERVERS / f"scale_{fw.kind}.py"


async def sessions_and_streams(bench: Bench, fw: Framework) -> None:
    """The scale group for one column; see the module's docstring."""
    if fw.kind not in KINDS:
        bench.collector.unsupported(list(METRIC_KEYS), fw.name, "the scale group runs toolkit and mcp only")
        return
    raise_fd_limit()
    legacy_subscribe = fw.kind == "toolkit"

    async def idle(pid: int, port: int) -> None:
        base = await rss_kib(pid)
        opened = 0
        cpu = 0.0
        for count in IDLE_COUNTS:
            cpu0 = procs.cpu_seconds(pid)
            await open_sessions(port, count - opened)
            cpu += procs.cpu_seconds(pid) - cpu0
            opened = count
            rss = await rss_kib(pid)
            label = f"{count // 1000}k"
            phase.add(
                f"scale.idle_{label}.rss_per_session_kib", (rss - base) / count, {"base_kib": base, "rss_kib": rss}
            )
        phase.add("scale.idle_10k.rss_mib", rss / 1024)
        phase.add("scale.idle_10k.cpu_per_session_us", cpu / opened * 1e6)
        phase.add("scale.idle_10k.idle_cpu_pct", await idle_cpu_pct(pid))

    phase = Phase(bench, fw, "idle", [k for k in METRIC_KEYS if k.startswith("scale.idle")])
    await phase.run(idle)

    async def legacy(pid: int, port: int) -> None:
        ids = await open_sessions(port, STREAMS, subscribe=legacy_subscribe)
        streams = Streams(port)
        try:
            before = await rss_kib(pid)
            await streams.open_many([streams.open_get(i) for i in ids])
            after = await rss_kib(pid)
            phase.add(
                "scale.streams_legacy.rss_per_stream_kib",
                (after - before) / STREAMS,
                {"before_kib": before, "after_kib": after},
            )
            phase.add("scale.streams_legacy.idle_cpu_pct", await idle_cpu_pct(pid))
            if legacy_subscribe:
                last_ms, cpu_us, _ = await fanout(pid, port, streams, "legacy", STREAMS)
                phase.add("scale.fanout_legacy.last_ms", statistics.median(last_ms), [round(v, 2) for v in last_ms])
                phase.add(
                    "scale.fanout_legacy.cpu_per_notification_us",
                    statistics.median(cpu_us),
                    [round(v, 2) for v in cpu_us],
                )
        finally:
            await streams.close()

    phase = Phase(bench, fw, "streams-legacy", [k for k in METRIC_KEYS if "_legacy." in k])
    if not legacy_subscribe:
        bench.collector.unsupported([k for k in phase.keys if "fanout" in k], fw.name, NO_LEGACY_SUBSCRIBE)
        phase.keys = [k for k in phase.keys if "fanout" not in k]
    await phase.run(legacy)

    async def modern(pid: int, port: int) -> None:
        streams = Streams(port)
        try:
            before = await rss_kib(pid)
            await streams.open_many([streams.open_listen() for _ in range(STREAMS)])
            after = await rss_kib(pid)
            phase.add(
                "scale.streams_modern.rss_per_stream_kib",
                (after - before) / STREAMS,
                {"before_kib": before, "after_kib": after},
            )
            phase.add("scale.streams_modern.idle_cpu_pct", await idle_cpu_pct(pid))
            last_ms, cpu_us, _ = await fanout(pid, port, streams, "modern", STREAMS)
            phase.add("scale.fanout_modern.last_ms", statistics.median(last_ms), [round(v, 2) for v in last_ms])
            phase.add(
                "scale.fanout_modern.cpu_per_notification_us", statistics.median(cpu_us), [round(v, 2) for v in cpu_us]
            )
        finally:
            await streams.close()

    phase = Phase(bench, fw, "streams-modern", [k for k in METRIC_KEYS if "_modern." in k])
    await phase.run(modern)

    async def soak(pid: int, port: int) -> None:
        samples: list[float] = []
        for _ in range(SOAK_CYCLES):
            ids = await open_sessions(port, SOAK_SESSIONS, subscribe=legacy_subscribe)
            streams = Streams(port)
            try:
                opening = [streams.open_get(i) for i in ids[:SOAK_STREAMS]]
                await streams.open_many(opening + [streams.open_listen() for _ in range(SOAK_STREAMS)])
                subscribers = 2 * SOAK_STREAMS if legacy_subscribe else SOAK_STREAMS
                streams.expect(subscribers)
                trigger = Session(HttpTransport("127.0.0.1", port), "modern").use_tool("touch", {}, _touch_check)
                try:
                    await trigger.open(TIMEOUT)
                    async with asyncio.timeout(TIMEOUT):
                        await asyncio.gather(trigger.call(TIMEOUT), streams.reached.wait())
                finally:
                    await trigger.transport.close()
            finally:
                await streams.close()
            await end_sessions(port, ids)
            samples.append(await rss_kib(pid))
        start, end = samples[0], samples[-1]
        phase.add("scale.soak.rss_drift_pct", (end - start) / start * 100, [round(v) for v in samples])
        phase.add("scale.soak.rss_trend_kib", _slope(samples[len(samples) // 2 :]))

    phase = Phase(bench, fw, "soak", [k for k in METRIC_KEYS if k.startswith("scale.soak")])
    await phase.run(soak)

    from bench.scale_cluster import CLUSTER_KEYS, cluster_phase  # it imports this module

    if all(key in bench.collector.cells for key in CLUSTER_KEYS):
        await cluster_phase(bench, fw)
    elif fw.kind == "toolkit":
        print(f"    {fw.name}: the cluster fan-out has no metrics in bench/metrics.py yet: not run", flush=True)


def _slope(values: list[float]) -> float:
    """The least-squares slope of ``values`` over their index."""
    n = len(values)
    if n < 2:
        return 0.0
    mean_x, mean_y = (n - 1) / 2, sum(values) / n
    num = sum((i - mean_x) * (v - mean_y) for i, v in enumerate(values))
    return num / sum((i - mean_x) ** 2 for i in range(n))
