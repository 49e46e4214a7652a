"""The ``scale`` group's cluster fan-out: one resource update told to 1,000 streams held by three
replicas on a Redis store behind HAProxy (issue #38; ``bench/README.md``, "Many sessions and streams").

``Cluster`` starts redis-server, ``CLUSTER_REPLICAS`` scale servers (``bench/servers/scale_toolkit.py``
with ``BENCH_SCALE_STORE`` = the Redis URL and one ``TOOLKIT_STATE_SECRET``) and HAProxy round-robin
in front of them (``bench/cluster.py``, as the ``scaleout`` scenario runs it), and always stops them.
``cluster_fanout`` opens ``STREAMS`` streams of one era through HAProxy, so spread over the replicas
(legacy: sessions, ``resources/subscribe`` and ``GET`` streams, each request balanced on its own;
modern: ``subscriptions/listen``), then runs ``bench/scale.py``'s ``fanout``: ``touch`` reaches one
replica, which publishes the update on the store's bus, and every replica tells its own streams.
Figures: the time until the last stream has it; the three replicas' CPU per delivered notification;
HAProxy's (every event passes through it) over the same span. A fresh cluster per era.

``python -m bench.scale_cluster [--era legacy|modern|both]`` runs it alone and prints the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import statistics
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from bench import procs
from bench.cluster import Balancer, RedisServer
from bench.driver import Era
from bench.scale import STREAMS, Streams, fanout, open_sessions, raise_fd_limit

if TYPE_CHECKING:
    from bench.run import Bench, Framework


CLUSTER_REPLICAS = 3
CLUSTER_KEYS = tuple(
    f"scale.fanout_cluster_{era}.{metric}"
    for era in ("legacy", "modern")
    for metric in ("last_ms", "cpu_per_notification_us", "haproxy_cpu_per_notification_us")
)


@dataclass
class Cluster:
    """redis-server, ``CLUSTER_REPLICAS`` scale servers on it (``BENCH_SCALE_STORE``, one
    ``TOOLKIT_STATE_SECRET``) and HAProxy round-robin in front (``bench/cluster.py``); all stopped."""

    python: str
    env: dict[str, str]
    logs: Path
    redis: RedisServer | None = None
    balancer: Balancer | None = None
    replicas: list[asyncio.subprocess.Process] = field(default_factory=list)

    async def start(self) -> None:
        self.redis = RedisServer(self.logs / "cluster-redis.log")
        await self.redis.start()
        env = {**self.env, "BENCH_SCALE_STORE": self.redis.url, "TOOLKIT_STATE_SECRET": secrets.token_urlsafe(32)}
        backends: list[tuple[str, int]] = []
        server = Path(__file__).resolve().parent / "servers" / "scale_toolkit.py"
        for index in range(CLUSTER_REPLICAS):
            port = procs.free_port()
            argv = [self.python, str(server), "--port", str(port)]
            process, _ = await procs.start(argv, env, self.logs / f"cluster-replica{index}.log", stdio=False)
            self.replicas.append(process)
            backends.append((f"r{index}", port))
        for process, (_, port) in zip(self.replicas, backends, strict=True):
            await procs.wait_for_port(process, port, 60)
        self.balancer = Balancer(backends, self.logs / "cluster-haproxy.log")
        await self.balancer.start()

    @property
    def port(self) -> int:
        assert self.balancer is not None
        return self.balancer.port

    async def stop(self) -> None:
        try:
            if self.balancer is not None:
                await self.balancer.stop()
        finally:
            for process in self.replicas:
                await procs.stop(process)
            if self.redis is not None:
                await self.redis.stop()


async def cluster_fanout(cluster: Cluster, era: Era) -> dict[str, tuple[float, list[float]]]:
    """``STREAMS`` streams of ``era`` opened through HAProxy (so spread over the replicas), then the
    fan-out: ``touch`` (to whichever replica HAProxy picks) publishes the update on the store's bus
    and every replica tells its own streams. Medians (and the samples) by metric key."""
    port = cluster.port
    streams = Streams(port)
    try:
        if era == "legacy":
            ids = await open_sessions(port, STREAMS, subscribe=True)
            await streams.open_many([streams.open_get(i) for i in ids])
        else:
            await streams.open_many([streams.open_listen() for _ in range(STREAMS)])
        assert cluster.balancer is not None
        replicas = [process.pid for process in cluster.replicas]
        last_ms, cpu_us, haproxy_us = await fanout(
            replicas, port, streams, era, STREAMS, others=(cluster.balancer.pid,)
        )
    finally:
        await streams.close()
    prefix = f"scale.fanout_cluster_{era}"
    return {
        f"{prefix}.last_ms": (statistics.median(last_ms), [round(v, 2) for v in last_ms]),
        f"{prefix}.cpu_per_notification_us": (statistics.median(cpu_us), [round(v, 2) for v in cpu_us]),
        f"{prefix}.haproxy_cpu_per_notification_us": (statistics.median(haproxy_us), [round(v, 2) for v in haproxy_us]),
    }


async def cluster_phase(bench: Bench, fw: Framework) -> None:
    """The cluster fan-out for toolkit's columns, in a fresh cluster per era; see ``cluster_fanout``."""
    keys = list(CLUSTER_KEYS)
    if fw.kind != "toolkit":
        bench.collector.unsupported(keys, fw.name, "the cluster fan-out measures toolkit's Redis store")
        return
    eras: tuple[Era, ...] = ("legacy", "modern")
    for era in eras:
        era_keys = [k for k in keys if f"_{era}." in k]

        async def run(era: Era = era) -> None:
            cluster = Cluster(str(fw.python), dict(bench.envs[fw.name]), bench._log(fw, f"scale-cluster-{era}").parent)
            try:
                await cluster.start()
                for key, (value, raw) in (await cluster_fanout(cluster, era)).items():
                    bench.collector.add(key, fw.name, value, raw)
            finally:
                await cluster.stop()

        await bench._guard(fw, era_keys, run)


async def _main(eras: list[Era]) -> None:
    """``python -m bench.scale_cluster``: the cluster fan-out alone, printed (no results file)."""
    raise_fd_limit()
    logs = Path(tempfile.mkdtemp(prefix="scale-cluster-"))
    python = str(Path(__file__).resolve().parent.parent / ".venv" / "bin" / "python")
    for era in eras:
        cluster = Cluster(python, dict(os.environ), logs)
        try:
            await cluster.start()
            for key, (value, raw) in (await cluster_fanout(cluster, era)).items():
                print(f"{key:60} {value:9.2f}  {raw}", flush=True)
        finally:
            await cluster.stop()
    print(f"(logs in {logs})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="The scale group's cluster fan-out, alone (see the module docstring).")
    parser.add_argument("--era", choices=["legacy", "modern", "both"], default="both")
    args = parser.parse_args()
    asyncio.run(_main(["legacy", "modern"] if args.era == "both" else [args.era]))
