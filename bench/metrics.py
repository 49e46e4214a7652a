"""The metrics the benchmark reports, their targets, and the collector of per-round samples."""

import statistics
import traceback
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Literal

from bench.driver import Era

# The columns, in this order (a baseline follows toolkit).
FRAMEWORKS = ("toolkit", "mcp", "fastmcp", "floor", "node", "node2")
ANCHORS = ("mcp", "fastmcp")  # what "best anchor" is picked from
# The frameworkless floor (bench/servers/floor_server.py): the least work any correct Python server
# does per call. A lower bound toolkit is measured against, not a competitor: never an anchor.
FLOOR = "floor"
FLOOR_UNSUPPORTED = "the floor serves get_items and the big workload only (the calls, import and big groups)"
# The Node peers (bench/servers/node/): the TypeScript SDK's McpServer, 1.x (node) and 2.x (node2).
# Not anchors: toolkit / best Node column is its own ratio, with its own target (``node_target``).
NODES = ("node", "node2")
NODE_GROUPS = ("import", "calls", "rss")  # what the Node columns run; every other group says n/a
NODE_UNSUPPORTED = "the Node columns serve get_items and an empty server only (the import, calls and rss groups)"
ERAS: tuple[Era, ...] = ("legacy", "modern")
CALL_MODES = {"stdio": "stdio", "http_seq": "HTTP sequential", "http_c16": "HTTP 16 clients"}
# The auth scenario's two batches: one reusable token on every call, or a new token on every call.
AUTH_VARIANTS = {"same": "same token", "fresh": "fresh token"}
AUTH_TARGET = Fraction(5, 4)  # authenticated / unauthenticated server CPU per call, HTTP sequential
# The middleware scenario: the items server without and with a middleware or tracing (the
# BENCH_MIDDLEWARE variants of bench/servers/toolkit_server.py), stdio and HTTP sequential.
MIDDLEWARE_VARIANTS = {
    "none": "no middleware",
    "passthrough": "pass-through middleware",
    "logging": "RequestLogging",
    "otel": "OpenTelemetry SDK",
}
MIDDLEWARE_MODES = {"stdio": "stdio", "http_seq": "HTTP sequential"}
MIDDLEWARE_METRICS = ("cpu_us", "p50_us")  # the middleware batches' figures (cpu_ratio is derived after the run)
# The store scenario: examples/weather.py's forecast tool over HTTP, one sequential client, with
# the memory store and with --store redis://; its batches, each an era and an Accept header.
STORES = ("memory", "redis")
STORE_VARIANTS = {
    "legacy": "legacy, Accept JSON+SSE",  # what real clients send: with Redis, resumable SSE streams
    "legacy_json": "legacy, Accept JSON only",  # the same session calls answered with plain JSON
    "modern": "modern",
}
STORE_ERAS: dict[str, Era] = {"legacy": "legacy", "legacy_json": "legacy", "modern": "modern"}
STORE_TARGET = Fraction(13, 10)  # redis / memory store: toolkit's server CPU per call
# The scaleout scenario: 1 and 2 replicas (--store redis://) behind HAProxy, concurrent clients.
REPLICA_COUNTS = (1, 2)
SCALEOUT_CPU = {
    "replica_cpu_us": "toolkit replicas summed",
    "haproxy_cpu_us": "HAProxy",
    "redis_cpu_us": "redis-server",
    "client_cpu_us": "load generator (the bench driver)",
}
# The tasks scenario: examples/long_running.py's build_report(topic="t", sections=0), a tool that
# returns at once, over HTTP with one sequential client: a plain call, and the same call as a task.
TASK_VARIANTS = {"plain": "a plain tools/call", "task": "the same call as a task"}
TASK_FLOWS: dict[Era, str] = {  # what one task operation is, per era
    "modern": "task + tasks/get polls",
    "legacy": "task + tasks/result",
}
TASK_METRICS = ("cpu_us", "p50_us", "requests")  # the tasks batches' figures (the ratios are derived)
# The client scenario (bench/clients.py): each framework's MCP client calling get_items on the same
# toolkit server, its own process's CPU per call; and toolkit.testing.Client in process.
CLIENT_TRANSPORTS = {"stdio": "stdio", "http": "HTTP"}
CLIENT_METRICS = ("cpu_us", "p50_us")
CLIENT_TARGET = Fraction(3, 10)  # toolkit.Client / each anchor's Client: client CPU per tools/call
# The openapi scenario (bench/openapi.py). Load: GitHub's REST API document, toolkit's and fastmcp's
# from_openapi, each in a fresh process served over stdio until tools/list is answered, against an
# empty server's figures. Call: list_items through the generated tool and through a direct httpx program.
OPENAPI_LOAD_METRICS = (
    "load_ms",
    "load_gross_ms",
    "rss_mib",
    "peak_rss_mib",
    "baseline_rss_mib",
    "total_ms",
    "import_ms",
    "cpu_ms",
)
OPENAPI_LOAD_TARGET = Fraction(1, 2)  # toolkit / fastmcp: load time (net) and peak RSS (net)
OPENAPI_CALL_VARIANTS = {"tool": "the generated tool", "direct": "a direct httpx program"}
OPENAPI_CALL_METRICS = ("cpu_us", "p50_us", "api_cpu_us")  # each call batch's figures (cpu_ratio is derived)
OPENAPI_CALL_TARGET = Fraction(13, 10)  # generated tool / direct httpx program: the serving process's CPU per call
# The compose scenario (bench/compose.py). Mount: get_items on the server itself ("direct") and the
# same tool in a child server mounted under a namespace ("mounted"), stdio and HTTP sequential.
MOUNT_MODES = {"stdio": "stdio", "http_seq": "HTTP sequential"}
MOUNT_VARIANTS = {"direct": "on the server itself", "mounted": "mounted under a namespace"}
MOUNT_TARGET = Fraction(11, 10)  # mounted / direct: the server's CPU per call
# Gateway: get_items through a gateway served over HTTP (toolkit: Server.proxy under toolkit run;
# fastmcp: create_proxy) in front of toolkit's bench server, reached over HTTP or started over stdio.
GATEWAY_UPSTREAMS = {"http": "HTTP upstream", "stdio": "stdio upstream"}
GATEWAY_TARGET = Fraction(3, 2)  # the gateway process's CPU per call / a direct call's server CPU
PROXY_TARGET = Fraction(3, 10)  # toolkit's gateway / fastmcp's proxy: the gateway process's CPU per call
COMPOSE_METRICS = ("cpu_us", "p50_us")  # each compose batch's figures (the ratios are derived)
# The depends scenario (bench/depends.py): get_items_for taking a user and a tenant as arguments
# ("plain") or from two async def dependencies ("injected": toolkit.Depends), stdio and HTTP sequential.
DEPENDS_VARIANTS = {"plain": "the two values as arguments", "injected": "the two values from Depends"}
DEPENDS_MODES = {"stdio": "stdio", "http_seq": "HTTP sequential"}
DEPENDS_METRICS = ("cpu_us", "p50_us")  # each depends batch's figures (cpu_ratio is derived)
DEPENDS_TARGET = Fraction(23, 20)  # injected / plain: toolkit's server CPU per call
# The plain def batches of the calls group (bench/hop.py): get_items_hop as an async def or a plain
# def (run in a worker thread), stdio and HTTP sequential; def less async is the thread hop.
HOP_VARIANTS = {"async": "async def", "def": "plain def"}
HOP_MODES = {"stdio": "stdio", "http_seq": "HTTP sequential"}
HOP_METRICS = ("cpu_us", "p50_us")  # each hop batch's figures (cpu_ratio is derived)
# The big scenario (bench/bigresults.py): a tool returning ~1 MB and ~10 MB of models, stdio, both eras.
BIG_SIZES = {"1mb": "~1 MB", "10mb": "~10 MB"}
BIG_METRICS = ("cpu_ms", "p50_ms", "peak_rss_mib", "peak_x", "result_mib")
BIG_FLOOR_TARGET = Fraction(3, 2)  # toolkit / floor: server CPU per 10 MB call
BIG_PEAK_TARGET = Fraction(3)  # peak RSS added by the calls / the result's size (toolkit's own)
# The authserver scenario (bench/authserver.py): toolkit's OAuthProxy in front of oidc-provider: the
# authorization code flow end to end, the token endpoint's grants, and get_items called with a
# toolkit-issued token ("issued") against the same call through JWTVerifier ("jwt", the auth scenario's path).
AUTHSERVER_GRANTS = {"code": "authorization_code", "refresh": "refresh_token"}
AUTHSERVER_SOURCES = {"issued": "toolkit-issued token (OAuthProxy)", "jwt": "JWTVerifier token"}
AUTHSERVER_TOKENS = {"same": "same token", "fresh": "fresh token"}
AUTHSERVER_CALL_METRICS = ("cpu_us", "p50_us")  # each call batch's figures (cpu_ratio is derived)
AUTHSERVER_TARGET = Fraction(11, 10)  # toolkit-issued / JWT path: the server's CPU per call


@dataclass(frozen=True)
class Metric:
    key: str
    label: str
    unit: str
    better: Literal["lower", "higher"] = "lower"
    target: Fraction | None = None  # toolkit / best anchor (or toolkit's own value, below) must be <= this
    # "best_anchor": the target bounds toolkit / best anchor; "value": it bounds toolkit's own
    # figure (a ratio computed within one framework's column, such as auth / unauthenticated).
    target_of: Literal["best_anchor", "value"] = "best_anchor"
    # A derived metric: per framework and round, the sample of key [0] divided by that of key [1].
    ratio_of: tuple[str, str] | None = None
    floor_target: Fraction | None = None  # toolkit / floor must be <= this (when the floor is in the run)
    node_target: Fraction | None = None  # toolkit / best Node column must be <= this (when one is in the run)


def _catalogue() -> list[Metric]:
    metrics: list[Metric] = []
    for mode, mode_label in CALL_MODES.items():
        target = Fraction(1, 4) if mode == "stdio" else Fraction(1, 3)
        floor = Fraction(2) if mode == "stdio" else Fraction(13, 10)
        for era in ERAS:
            where = f"{mode_label}, {era}"
            metrics += [
                Metric(
                    f"call.{mode}.{era}.cpu_us",
                    f"get_items server CPU/call ({where})",
                    "µs",
                    target=target,
                    floor_target=floor,
                    node_target=Fraction(1),
                ),
                Metric(f"call.{mode}.{era}.calls_per_s", f"get_items calls/s ({where})", "1/s", "higher"),
                Metric(f"call.{mode}.{era}.p50_us", f"get_items p50 latency ({where})", "µs"),
                Metric(f"call.{mode}.{era}.p99_us", f"get_items p99 latency ({where})", "µs"),
            ]
    for era in ERAS:
        metrics += [
            Metric(f"list500.{era}.first_ms", f"tools/list 500 tools, first call ({era})", "ms"),
            Metric(f"list500.{era}.steady_ms", f"tools/list 500 tools, steady ({era})", "ms", target=Fraction(1, 25)),
            Metric(f"list500.{era}.steady_cpu_ms", f"tools/list 500 tools, steady, server CPU ({era})", "ms"),
            Metric(
                f"list500.{era}.spawn_ms",
                f"spawn -> first tools/list response, 500 tools (stdio, {era})",
                "ms",
                target=Fraction(1, 4),
            ),
        ]
    for era in ERAS:
        for variant, variant_label in AUTH_VARIANTS.items():
            prefix = f"auth.http_seq.{era}.{variant}"
            where = f"HTTP sequential, {era}, {variant_label}"
            metrics += [
                Metric(f"{prefix}.cpu_us", f"authenticated get_items server CPU/call ({where})", "µs"),
                Metric(f"{prefix}.p50_us", f"authenticated get_items p50 latency ({where})", "µs"),
                Metric(
                    f"{prefix}.cpu_ratio",
                    f"authenticated / unauthenticated server CPU/call ({where})",
                    "x",
                    target=AUTH_TARGET,
                    target_of="value",
                    ratio_of=(f"{prefix}.cpu_us", f"call.http_seq.{era}.cpu_us"),
                ),
            ]
    for mode, mode_label in MIDDLEWARE_MODES.items():
        for era in ERAS:
            where = f"{mode_label}, {era}"
            for variant, variant_label in MIDDLEWARE_VARIANTS.items():
                prefix = f"middleware.{mode}.{era}.{variant}"
                metrics += [
                    Metric(f"{prefix}.cpu_us", f"get_items server CPU/call, {variant_label} ({where})", "µs"),
                    Metric(f"{prefix}.p50_us", f"get_items p50 latency, {variant_label} ({where})", "µs"),
                ]
                if variant != "none":
                    metrics.append(
                        Metric(
                            f"{prefix}.cpu_ratio",
                            f"server CPU/call, {variant_label} / no middleware ({where})",
                            "x",
                            ratio_of=(f"{prefix}.cpu_us", f"middleware.{mode}.{era}.none.cpu_us"),
                        )
                    )
    metrics.append(Metric("register500_ms", "register 500 tools (in-process)", "ms", target=Fraction(1, 4)))
    first = {"legacy": "initialize", "modern": "server/discover"}
    for era in ERAS:
        metrics += [
            Metric(
                f"spawn.{era}.first_response_ms",
                f"spawn -> first {first[era]} response (stdio)",
                "ms",
                target=Fraction(1, 3),
                floor_target=Fraction(5, 4),
                node_target=Fraction(1),
            ),
            Metric(f"spawn.{era}.first_tool_ms", f"spawn -> first tool result (stdio, {era})", "ms"),
        ]
    metrics += [
        Metric("rss.tools0_mib", "idle RSS, 0 tools", "MiB", target=Fraction(2, 3)),
        Metric("rss.tools500_mib", "idle RSS, 500 tools", "MiB"),
        Metric("import_ms", "import time (fresh interpreter)", "ms"),
    ]
    for variant, variant_label in STORE_VARIANTS.items():
        where = f"HTTP sequential, {variant_label}"
        for store in STORES:
            prefix = f"store.{variant}.{store}"
            metrics += [
                Metric(f"{prefix}.cpu_us", f"forecast toolkit server CPU/call ({where}, {store} store)", "µs"),
                Metric(f"{prefix}.p50_us", f"forecast p50 latency ({where}, {store} store)", "µs"),
            ]
        metrics += [
            Metric(
                f"store.{variant}.redis.redis_cpu_us",
                f"forecast redis-server's own CPU/call, not toolkit's ({where}, redis store)",
                "µs",
            ),
            Metric(
                f"store.{variant}.cpu_ratio",
                f"forecast toolkit server CPU/call, redis / memory store ({where})",
                "x",
                target=STORE_TARGET,
                target_of="value",
                ratio_of=(f"store.{variant}.redis.cpu_us", f"store.{variant}.memory.cpu_us"),
            ),
        ]
    for era in ERAS:
        where = f"HTTP sequential, {era}"
        for variant in TASK_VARIANTS:
            what = f"{where}, {'plain' if variant == 'plain' else TASK_FLOWS[era]}"
            prefix = f"tasks.{era}.{variant}"
            metrics += [
                Metric(f"{prefix}.cpu_us", f"build_report server CPU/op ({what})", "µs"),
                Metric(f"{prefix}.p50_us", f"build_report wall-clock/op, median ({what})", "µs"),
                Metric(f"{prefix}.requests", f"build_report requests/op ({what})", "req"),
            ]
        for metric, metric_label in (("cpu_us", "server CPU/op"), ("p50_us", "median wall-clock/op")):
            metrics.append(
                Metric(
                    f"tasks.{era}.{metric.removesuffix('_us')}_ratio",
                    f"build_report {metric_label}, task / plain ({where})",
                    "x",
                    ratio_of=(f"tasks.{era}.task.{metric}", f"tasks.{era}.plain.{metric}"),
                )
            )
    for transport, transport_label in CLIENT_TRANSPORTS.items():
        for era in ERAS:
            where = f"{transport_label}, {era}"
            metrics += [
                Metric(
                    f"client.{transport}.{era}.cpu_us",
                    f"get_items client CPU/call, the client's process ({where})",
                    "µs",
                    target=CLIENT_TARGET,
                ),
                Metric(f"client.{transport}.{era}.p50_us", f"get_items p50 latency seen by the client ({where})", "µs"),
            ]
    for era in ERAS:
        metrics.append(
            Metric(
                f"client.testing.{era}.cpu_us",
                f"toolkit.testing.Client call_tool CPU/call, in process, server included ({era})",
                "µs",
            )
        )
    metrics += _openapi_catalogue()
    metrics += _compose_catalogue()
    metrics += _depends_catalogue()
    metrics += _scale_catalogue()
    metrics += _hop_catalogue()
    metrics += _big_catalogue()
    metrics += _authserver_catalogue()
    for era in ERAS:
        for count in REPLICA_COUNTS:
            prefix = f"scaleout.{era}.r{count}"
            where = f"{count} replica{'s' if count > 1 else ''}, {era}"
            metrics.append(Metric(f"{prefix}.calls_per_s", f"forecast calls/s via HAProxy ({where})", "1/s", "higher"))
            for metric, whose in SCALEOUT_CPU.items():
                metrics.append(Metric(f"{prefix}.{metric}", f"scale-out CPU/call, {whose} ({where})", "µs"))
            metrics += [
                Metric(f"{prefix}.busy_pct", f"scale-out CPU busy, those four, % of all cores ({where})", "%"),
                Metric(f"{prefix}.others_pct", f"CPU busy meanwhile, other processes, % of all cores ({where})", "%"),
            ]
        metrics.append(
            Metric(
                f"scaleout.{era}.scaling",
                f"calls/s, {REPLICA_COUNTS[-1]} replicas / {REPLICA_COUNTS[0]} replica ({era})",
                "x",
                "higher",
                ratio_of=(
                    f"scaleout.{era}.r{REPLICA_COUNTS[-1]}.calls_per_s",
                    f"scaleout.{era}.r{REPLICA_COUNTS[0]}.calls_per_s",
                ),
            )
        )
    return metrics


def _openapi_catalogue() -> list[Metric]:
    where = "GitHub's REST API document, 1,223 operations, fresh process"
    metrics = [
        Metric(
            "openapi.load.load_ms",
            f"OpenAPI load: after imports -> tools/list answered, minus an empty server's ({where})",
            "ms",
            target=OPENAPI_LOAD_TARGET,
        ),
        Metric("openapi.load.load_gross_ms", f"OpenAPI load: after imports -> tools/list answered ({where})", "ms"),
        Metric(
            "openapi.load.rss_mib",
            f"OpenAPI load: peak RSS minus an empty server's ({where})",
            "MiB",
            target=OPENAPI_LOAD_TARGET,
        ),
        Metric("openapi.load.peak_rss_mib", f"OpenAPI load: peak RSS ({where})", "MiB"),
        Metric("openapi.load.baseline_rss_mib", "OpenAPI load: peak RSS of the empty server (the baseline)", "MiB"),
        Metric("openapi.load.total_ms", f"OpenAPI load: spawn -> tools/list answered, with imports ({where})", "ms"),
        Metric("openapi.load.import_ms", f"OpenAPI load: spawn -> imports done ({where})", "ms"),
        Metric(
            "openapi.load.cpu_ms",
            f"OpenAPI load: CPU after imports -> tools/list answered, minus an empty server's ({where})",
            "ms",
        ),
    ]
    for era in ERAS:
        where = f"stdio, {era}"
        for variant, variant_label in OPENAPI_CALL_VARIANTS.items():
            prefix = f"openapi.call.{era}.{variant}"
            metrics += [
                Metric(f"{prefix}.cpu_us", f"list_items server CPU/call, {variant_label} ({where})", "µs"),
                Metric(f"{prefix}.p50_us", f"list_items p50 latency, {variant_label} ({where})", "µs"),
                Metric(f"{prefix}.api_cpu_us", f"list_items HTTP API's CPU/call, {variant_label} ({where})", "µs"),
            ]
        metrics.append(
            Metric(
                f"openapi.call.{era}.cpu_ratio",
                f"list_items server CPU/call, generated tool / direct httpx program ({where})",
                "x",
                target=OPENAPI_CALL_TARGET,
                target_of="value",
                ratio_of=(f"openapi.call.{era}.tool.cpu_us", f"openapi.call.{era}.direct.cpu_us"),
            )
        )
    return metrics


def _compose_catalogue() -> list[Metric]:
    metrics: list[Metric] = []
    for mode, mode_label in MOUNT_MODES.items():
        for era in ERAS:
            where = f"{mode_label}, {era}"
            for variant, variant_label in MOUNT_VARIANTS.items():
                prefix = f"compose.mount.{mode}.{era}.{variant}"
                metrics += [
                    Metric(f"{prefix}.cpu_us", f"get_items server CPU/call, {variant_label} ({where})", "µs"),
                    Metric(f"{prefix}.p50_us", f"get_items p50 latency, {variant_label} ({where})", "µs"),
                ]
            metrics.append(
                Metric(
                    f"compose.mount.{mode}.{era}.cpu_ratio",
                    f"server CPU/call, mounted / on the server itself ({where})",
                    "x",
                    target=MOUNT_TARGET,
                    target_of="value",
                    ratio_of=(
                        f"compose.mount.{mode}.{era}.mounted.cpu_us",
                        f"compose.mount.{mode}.{era}.direct.cpu_us",
                    ),
                )
            )
    for era in ERAS:
        metrics += [
            Metric(
                f"compose.gateway.direct.{era}.cpu_us",
                f"get_items upstream CPU/call, called directly (toolkit server, HTTP sequential, {era})",
                "µs",
            ),
            Metric(
                f"compose.gateway.direct.{era}.p50_us",
                f"get_items p50 latency, called directly (toolkit server, HTTP sequential, {era})",
                "µs",
            ),
        ]
        for upstream, upstream_label in GATEWAY_UPSTREAMS.items():
            prefix = f"compose.gateway.{upstream}.{era}"
            where = f"HTTP sequential, {upstream_label}, {era}"
            metrics += [
                Metric(
                    f"{prefix}.cpu_us",
                    f"get_items gateway process CPU/call, via the gateway ({where})",
                    "µs",
                    target=PROXY_TARGET,
                ),
                Metric(f"{prefix}.upstream_cpu_us", f"get_items upstream CPU/call, via the gateway ({where})", "µs"),
                Metric(f"{prefix}.p50_us", f"get_items p50 latency, via the gateway ({where})", "µs"),
                Metric(
                    f"{prefix}.added_p50_us",
                    f"get_items p50 latency added by the gateway, via - direct ({where})",
                    "µs",
                ),
                Metric(
                    f"{prefix}.cpu_ratio",
                    f"gateway process CPU/call / a direct call's server CPU ({where})",
                    "x",
                    target=GATEWAY_TARGET,
                    target_of="value",
                    ratio_of=(f"{prefix}.cpu_us", f"compose.gateway.direct.{era}.cpu_us"),
                ),
            ]
    return metrics


def _depends_catalogue() -> list[Metric]:
    metrics: list[Metric] = []
    for mode, mode_label in DEPENDS_MODES.items():
        for era in ERAS:
            where = f"{mode_label}, {era}"
            for variant, variant_label in DEPENDS_VARIANTS.items():
                prefix = f"depends.{mode}.{era}.{variant}"
                metrics += [
                    Metric(f"{prefix}.cpu_us", f"get_items_for server CPU/call, {variant_label} ({where})", "µs"),
                    Metric(f"{prefix}.p50_us", f"get_items_for p50 latency, {variant_label} ({where})", "µs"),
                ]
            metrics.append(
                Metric(
                    f"depends.{mode}.{era}.cpu_ratio",
                    f"get_items_for server CPU/call, two dependencies / two arguments ({where})",
                    "x",
                    target=DEPENDS_TARGET,
                    target_of="value",
                    ratio_of=(f"depends.{mode}.{era}.injected.cpu_us", f"depends.{mode}.{era}.plain.cpu_us"),
                )
            )
    return metrics


def _hop_catalogue() -> list[Metric]:
    metrics: list[Metric] = []
    for mode, mode_label in HOP_MODES.items():
        for era in ERAS:
            where = f"{mode_label}, {era}"
            for variant, variant_label in HOP_VARIANTS.items():
                prefix = f"hop.{mode}.{era}.{variant}"
                metrics += [
                    Metric(f"{prefix}.cpu_us", f"get_items_hop server CPU/call, {variant_label} ({where})", "µs"),
                    Metric(f"{prefix}.p50_us", f"get_items_hop p50 latency, {variant_label} ({where})", "µs"),
                ]
            metrics.append(
                Metric(
                    f"hop.{mode}.{era}.cpu_ratio",
                    f"get_items_hop server CPU/call, plain def / async def ({where})",
                    "x",
                    ratio_of=(f"hop.{mode}.{era}.def.cpu_us", f"hop.{mode}.{era}.async.cpu_us"),
                )
            )
    return metrics


def _big_catalogue() -> list[Metric]:
    metrics: list[Metric] = []
    for size, size_label in BIG_SIZES.items():
        for era in ERAS:
            where = f"{size_label} of models, stdio, {era}"
            prefix = f"big.{size}.{era}"
            floor = BIG_FLOOR_TARGET if size == "10mb" else None
            metrics += [
                Metric(f"{prefix}.cpu_ms", f"big result: server CPU/call ({where})", "ms", floor_target=floor),
                Metric(f"{prefix}.p50_ms", f"big result: p50 latency ({where})", "ms"),
                Metric(f"{prefix}.peak_rss_mib", f"big result: peak RSS added by the calls ({where})", "MiB"),
                Metric(
                    f"{prefix}.peak_x",
                    f"big result: peak RSS added / the result's size ({where})",
                    "x",
                    target=BIG_PEAK_TARGET,
                    target_of="value",
                ),
                Metric(f"{prefix}.result_mib", f"big result: the result's JSON ({where})", "MiB"),
            ]
    return metrics


def _authserver_catalogue() -> list[Metric]:
    metrics = [
        Metric("authserver.flow.wall_ms", "authorization code flow end to end, client's wall time (median)", "ms"),
        Metric("authserver.flow.cpu_ms", "authorization code flow: toolkit server CPU per flow", "ms"),
        Metric(
            "authserver.flow.upstream_cpu_ms", "authorization code flow: upstream (oidc-provider) CPU per flow", "ms"
        ),
    ]
    for grant, grant_label in AUTHSERVER_GRANTS.items():
        metrics += [
            Metric(f"authserver.token.{grant}.cpu_us", f"/token {grant_label}: server CPU/request", "µs"),
            Metric(f"authserver.token.{grant}.p50_us", f"/token {grant_label}: p50 latency", "µs"),
        ]
    for era in ERAS:
        for token, token_label in AUTHSERVER_TOKENS.items():
            where = f"HTTP sequential, {era}, {token_label}"
            for source, source_label in AUTHSERVER_SOURCES.items():
                prefix = f"authserver.calls.{era}.{source}.{token}"
                metrics += [
                    Metric(f"{prefix}.cpu_us", f"get_items server CPU/call, {source_label} ({where})", "µs"),
                    Metric(f"{prefix}.p50_us", f"get_items p50 latency, {source_label} ({where})", "µs"),
                ]
            metrics.append(
                Metric(
                    f"authserver.calls.{era}.{token}.cpu_ratio",
                    f"server CPU/call, toolkit-issued token / JWTVerifier token ({where})",
                    "x",
                    target=AUTHSERVER_TARGET,
                    target_of="value",
                    ratio_of=(
                        f"authserver.calls.{era}.issued.{token}.cpu_us",
                        f"authserver.calls.{era}.jwt.{token}.cpu_us",
                    ),
                )
            )
    return metrics


# The scale scenario (bench/scale.py): many idle legacy sessions and open streams held by one HTTP
# server, a resource update fanned out to 1,000 of them, and a soak; toolkit's own figures' targets.
SCALE_SESSION_TARGET = Fraction(4)  # KiB of RSS per idle legacy session
SCALE_STREAM_TARGET = Fraction(8)  # KiB of RSS per open stream
SCALE_FANOUT_TARGET = Fraction(50)  # ms until the last of 1,000 subscribers has the update
SCALE_NOTIFY_TARGET = Fraction(20)  # server CPU µs per delivered notification
SCALE_SOAK_TARGET = Fraction(5)  # % RSS drift over the soak


def _scale_catalogue() -> list[Metric]:
    def own(key: str, label: str, unit: str, target: Fraction | None = None) -> Metric:
        return Metric(f"scale.{key}", label, unit, target=target, target_of="value")

    metrics = [
        own("idle_1k.rss_per_session_kib", "RSS per idle legacy session (1,000 held)", "KiB", SCALE_SESSION_TARGET),
        own("idle_10k.rss_per_session_kib", "RSS per idle legacy session (10,000 held)", "KiB", SCALE_SESSION_TARGET),
        own("idle_10k.rss_mib", "RSS holding 10,000 idle legacy sessions", "MiB"),
        own("idle_10k.cpu_per_session_us", "server CPU per legacy session opened (initialize + initialized)", "µs"),
        own("idle_10k.idle_cpu_pct", "server CPU holding 10,000 idle sessions, % of a core", "%"),
    ]
    for era, what in (("legacy", "legacy GET streams"), ("modern", "2026-07-28 subscriptions/listen streams")):
        metrics += [
            own(f"streams_{era}.rss_per_stream_kib", f"RSS per open stream, 1,000 {what}", "KiB", SCALE_STREAM_TARGET),
            own(f"streams_{era}.idle_cpu_pct", f"server CPU holding 1,000 {what}, % of a core", "%"),
            own(
                f"fanout_{era}.last_ms",
                f"one update fanned out to 1,000 {what}: until the last has it",
                "ms",
                SCALE_FANOUT_TARGET,
            ),
            own(
                f"fanout_{era}.cpu_per_notification_us",
                f"one update fanned out to 1,000 {what}: server CPU per delivered notification",
                "µs",
                SCALE_NOTIFY_TARGET,
            ),
        ]
    for era, what in (("legacy", "legacy GET streams"), ("modern", "2026-07-28 subscriptions/listen streams")):
        where = f"1,000 {what} on 3 replicas (Redis store, HAProxy)"
        metrics += [
            own(
                f"fanout_cluster_{era}.last_ms",
                f"one update fanned out to {where}: until the last has it",
                "ms",
                SCALE_FANOUT_TARGET,
            ),
            own(
                f"fanout_cluster_{era}.cpu_per_notification_us",
                f"one update fanned out to {where}: the replicas' CPU per delivered notification",
                "µs",
                SCALE_NOTIFY_TARGET,
            ),
            own(
                f"fanout_cluster_{era}.haproxy_cpu_per_notification_us",
                f"one update fanned out to {where}: HAProxy's CPU per delivered notification",
                "µs",
            ),
        ]
    metrics += [
        own(
            "soak.rss_drift_pct",
            "soak, sessions and streams coming and going: RSS drift, last cycle vs first",
            "%",
            SCALE_SOAK_TARGET,
        ),
        own("soak.rss_trend_kib", "soak: RSS slope over the second half of the cycles, per cycle", "KiB"),
    ]
    return metrics


METRICS = _catalogue()
METRICS_BY_KEY = {m.key: m for m in METRICS}


@dataclass
class Cell:
    """One framework's samples for one metric, one per round, and how it went."""

    samples: list[float] = field(default_factory=list)
    rounds: list[int] = field(default_factory=list)  # the round each sample was taken in
    raw: list[Any] = field(default_factory=list)
    unsupported: str | None = None
    errors: list[str] = field(default_factory=list)

    @property
    def median(self) -> float | None:
        if self.errors or self.unsupported or not self.samples:
            return None
        return statistics.median(self.samples)


class Collector:
    def __init__(self, baseline: str | None = None) -> None:
        self.cells: dict[str, dict[str, Cell]] = {m.key: {} for m in METRICS}
        self.baseline = baseline  # the column of toolkit at an earlier commit (--baseline), if any
        self.errors: list[dict[str, Any]] = []
        self.round = 0  # the round being run, recorded with every sample

    def cell(self, key: str, framework: str) -> Cell:
        return self.cells[key].setdefault(framework, Cell())

    def add(self, key: str, framework: str, value: float, raw: Any = None) -> None:
        cell = self.cell(key, framework)
        cell.samples.append(value)
        cell.rounds.append(self.round)
        if raw is not None:
            cell.raw.append(raw)

    def unsupported(self, keys: list[str], framework: str, reason: str) -> None:
        for key in keys:
            self.cell(key, framework).unsupported = reason

    def fail(self, keys: list[str], framework: str, round_no: int, exc: BaseException) -> None:
        message = f"{type(exc).__name__}: {exc}"
        for key in keys:
            self.cell(key, framework).errors.append(f"round {round_no}: {message}")
        self.errors.append(
            {
                "framework": framework,
                "round": round_no,
                "metrics": keys,
                "error": message,
                "traceback": "".join(traceback.format_exception(exc)),
            }
        )

    def derive(self) -> None:
        """Fill the derived metrics (``Metric.ratio_of``) from the samples taken: per framework,
        one ratio per round in which both figures were measured. A framework whose numerator
        was unsupported or failed gets that state; one without a denominator (its scenario not
        run, or failed) gets no figure for that round."""
        for metric in METRICS:
            if metric.ratio_of is None:
                continue
            top_key, bottom_key = metric.ratio_of
            derived: dict[str, Cell] = {}
            for fw, top in self.cells[top_key].items():
                cell = Cell(unsupported=top.unsupported, errors=list(top.errors))
                bottom = self.cells[bottom_key].get(fw)
                below = dict(zip(bottom.rounds, bottom.samples, strict=True)) if bottom is not None else {}
                for round_no, value in zip(top.rounds, top.samples, strict=True):
                    if below.get(round_no):
                        cell.samples.append(value / below[round_no])
                        cell.rounds.append(round_no)
                        cell.raw.append({top_key: value, bottom_key: below[round_no]})
                if cell.samples or cell.unsupported or cell.errors:
                    derived[fw] = cell
            self.cells[metric.key] = derived

    def summary(self, key: str) -> dict[str, Any]:
        """Medians, best anchor, ratio toolkit/best anchor, the target verdict, ratio toolkit/baseline,
        and ratio toolkit/floor with its own target's verdict."""
        metric = METRICS_BY_KEY[key]
        cells = self.cells[key]
        medians = {fw: cell.median for fw, cell in cells.items()}
        anchors: dict[str, float] = {}
        for fw in ANCHORS:
            value = medians.get(fw)
            if value is not None:
                anchors[fw] = value
        best_anchor = None
        if anchors:
            pick = min if metric.better == "lower" else max
            best_anchor = pick(anchors, key=anchors.__getitem__)
        toolkit = medians.get("toolkit")
        ratios = {fw: toolkit / value for fw, value in anchors.items() if toolkit is not None and value}
        ratio = ratios.get(best_anchor) if best_anchor is not None else None
        target_met = None
        checked = toolkit if metric.target_of == "value" else ratio
        if checked is not None and metric.target is not None:
            target_met = checked <= metric.target
        base = medians.get(self.baseline) if self.baseline is not None else None
        ratio_baseline = toolkit / base if toolkit is not None and base else None
        floor = medians.get(FLOOR)
        ratio_floor = toolkit / floor if toolkit is not None and floor else None
        floor_met = None
        if ratio_floor is not None and metric.floor_target is not None:
            floor_met = ratio_floor <= metric.floor_target
        nodes = {fw: medians[fw] for fw in NODES if medians.get(fw) is not None}
        best_node = (min if metric.better == "lower" else max)(nodes, key=nodes.__getitem__) if nodes else None
        ratios_node = {fw: toolkit / value for fw, value in nodes.items() if toolkit is not None and value}
        ratio_node = ratios_node.get(best_node) if best_node is not None else None
        node_met = None
        if ratio_node is not None and metric.node_target is not None:
            node_met = ratio_node <= metric.node_target
        return {
            "label": metric.label,
            "unit": metric.unit,
            "better": metric.better,
            "target": str(metric.target) if metric.target is not None else None,
            "target_of": metric.target_of if metric.target is not None else None,
            "ratio_of": list(metric.ratio_of) if metric.ratio_of is not None else None,
            "median": medians,
            "best_anchor": best_anchor,
            "ratio_toolkit_best_anchor": ratio,
            "ratio_toolkit_anchor": ratios,
            "target_met": target_met,
            "baseline": self.baseline,
            "ratio_toolkit_baseline": ratio_baseline,
            "floor_target": str(metric.floor_target) if metric.floor_target is not None else None,
            "ratio_toolkit_floor": ratio_floor,
            "floor_target_met": floor_met,
            "node_target": str(metric.node_target) if metric.node_target is not None else None,
            "best_node": best_node,
            "ratio_toolkit_best_node": ratio_node,
            "ratio_toolkit_node": ratios_node,
            "node_target_met": node_met,
            "frameworks": {
                fw: {
                    "samples": cell.samples,
                    "rounds": cell.rounds,
                    "raw": cell.raw,
                    "unsupported": cell.unsupported,
                    "errors": cell.errors,
                }
                for fw, cell in cells.items()
            },
        }
