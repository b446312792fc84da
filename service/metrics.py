"""Prometheus metrics, served as text at ``GET /metrics``.

Under gunicorn each worker is its own process, so counters live in prometheus_client's
multiprocess mode: ``hearts serve`` points ``PROMETHEUS_MULTIPROC_DIR`` at a fresh directory
before any worker imports this module, each worker writes its values to files there, and a
scrape (answered by any worker) sums them all. Without that variable (tests, ``flask run``) the
process's own registry is used. Other modules add scrape-time figures (e.g. projection lag) with
``register_collector``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client.core import Metric

REQUESTS = Counter(
    "hearts_http_requests_total", "HTTP requests answered.", ["method", "route", "status"]
)
LATENCY = Histogram(
    "hearts_http_request_duration_seconds",
    "Time to answer an HTTP request.",
    ["method", "route"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
)
EVENTS_APPENDED = Counter("hearts_events_appended_total", "Events appended to game streams.")
CONFLICTS_RETRIED = Counter(
    "hearts_conflicts_retried_total",
    "Appends that lost a race (expected version moved on) and were decided again.",
)
BOT_MOVES = Counter("hearts_bot_moves_total", "Moves made by bots.")
# The archive store (service/store/blob_guard.py): every call, by operation (get, put, size...).
STORE_LATENCY = Histogram(
    "hearts_archive_store_seconds",
    "Time of a call to the archive store (HEARTS_ARCHIVE_URL), failed ones included.",
    ["op"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0),
)
STORE_ERRORS = Counter(
    "hearts_archive_store_errors_total",
    "Calls to the archive store that failed (it could not be reached, or did not answer in time).",
    ["op"],
)
STORE_REFUSED = Counter(
    "hearts_archive_store_refused_total",
    "Calls to the archive store not made because its circuit was open (it failed just before).",
    ["op"],
)
# The newest of the workers' passes (max over the processes in multiprocess mode).
ARCHIVE_LAST_PASS = Gauge(
    "hearts_archive_last_pass_timestamp_seconds",
    "When an archiver's pass last finished without an error (Unix time; 0: none yet).",
    multiprocess_mode="max",
)

_extra: list[Callable[[], Iterable[Metric]]] = []


class _Extra:
    """Adapts the registered scrape-time functions to one prometheus collector."""

    def collect(self) -> Iterable[Metric]:
        for fn in list(_extra):
            yield from fn()


def register_collector(collect: Callable[[], Iterable[Metric]]) -> None:
    """Add metrics computed at scrape time (``collect()`` yields prometheus Metric families)."""
    _extra.append(collect)


def events_appended(count: int) -> None:
    EVENTS_APPENDED.inc(count)


def conflict_retried() -> None:
    CONFLICTS_RETRIED.inc()


def bot_moved() -> None:
    BOT_MOVES.inc()


def store_call(op: str, seconds: float, *, failed: bool) -> None:
    STORE_LATENCY.labels(op).observe(seconds)
    if failed:
        STORE_ERRORS.labels(op).inc()


def store_refused(op: str) -> None:
    STORE_REFUSED.labels(op).inc()


def archive_pass_done() -> None:
    ARCHIVE_LAST_PASS.set(time.time())


def observe_request(method: str, route: str, status: int, started: float) -> None:
    REQUESTS.labels(method, route, str(status)).inc()
    LATENCY.labels(method, route).observe(time.perf_counter() - started)


def exposition(multiprocess_dir: str | None = None) -> tuple[bytes, str]:
    """The metrics text and its content type; summed over the workers' files in
    ``multiprocess_dir`` (``Settings.metrics_dir``) when there is one."""
    if multiprocess_dir:
        from prometheus_client import multiprocess

        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
    else:
        registry = CollectorRegistry()
        registry.register(_Registry(REGISTRY))
    registry.register(_Extra())
    return generate_latest(registry), CONTENT_TYPE_LATEST


class _Registry:
    def __init__(self, inner: CollectorRegistry) -> None:
        self.inner = inner

    def collect(self) -> Iterable[Metric]:
        return self.inner.collect()
