"""streams: ordinary requests while one client holds 2,000 idle live streams on one game.

Starts a throwaway redis-server and ``hearts serve`` with one gevent worker (so every stream
lands in the worker that answers the requests), bounds raised for the run
(``HEARTS_SSE_MAX_STREAMS`` and ``..._PER_CLIENT`` = ``--streams``). A client on 127.0.0.2 opens
``--streams`` event streams on one game and leaves them idle; another client on 127.0.0.1 times
``--requests`` ordinary requests (``GET /api/v1/games/{id}``, one at a time).

Baseline, in the same run: the same requests with no stream open, before the streams open and
again after they close. Reported: p50/p99 of each, the ratio with streams to without, the Redis
clients connected with and without the streams, and how long one event (a join) takes to reach
every stream.
"""

from __future__ import annotations

import http.client
import json
import selectors
import socket
import time

import redis

from bench.common import HeartsServer, RedisServer, Report, parser, percentile


def timed_requests(port: int, path: str, count: int) -> tuple[list[float], int]:
    """``count`` GETs of ``path`` on one keep-alive connection: the seconds of each one that
    answered 200, sorted, and how many did not."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    times = []
    failed = 0
    try:
        for _ in range(count):
            started = time.perf_counter()
            conn.request("GET", path)
            response = conn.getresponse()
            response.read()
            if response.status == 200:
                times.append(time.perf_counter() - started)
            else:
                failed += 1
    finally:
        conn.close()
    return sorted(times), failed


def call(port: int, method: str, path: str, body: str | None = None) -> bytes:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        headers = {"Content-Type": "application/json"} if body is not None else {}
        conn.request(method, path, body=body, headers=headers)
        response = conn.getresponse()
        data = response.read()
        if response.status >= 300:
            raise RuntimeError(f"{method} {path}: {response.status} {data[:200]!r}")
        return data
    finally:
        conn.close()


def open_stream(port: int, path: str, source: str) -> socket.socket | None:
    """An event stream from ``source``: the socket once its headers (200) have come, None if
    refused."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=60, source_address=(source, 0))
    sock.sendall(
        f"GET {path} HTTP/1.1\r\nHost: bench\r\nAccept: text/event-stream\r\n\r\n".encode()
    )
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(4096)
        if not chunk:
            raise RuntimeError("the stream closed before its headers")
        head += chunk
    if not head.startswith(b"HTTP/1.1 200"):
        sock.close()
        return None
    return sock


def until_all_see(streams: list[socket.socket], marker: bytes, timeout: float) -> int:
    """Read every stream until ``marker`` came on it; how many saw it within ``timeout``."""
    selector = selectors.DefaultSelector()
    seen: dict[socket.socket, bytes] = {}
    for sock in streams:
        sock.setblocking(False)
        selector.register(sock, selectors.EVENT_READ)
        seen[sock] = b""
    done = 0
    deadline = time.monotonic() + timeout
    while done < len(streams) and time.monotonic() < deadline:
        for key, _ in selector.select(timeout=1):
            sock = key.fileobj
            data = sock.recv(65536)  # type: ignore[union-attr]
            seen[sock] += data  # type: ignore[index]
            if marker in seen[sock] or not data:  # type: ignore[index]
                selector.unregister(sock)
                done += marker in seen[sock]  # type: ignore[index]
    selector.close()
    return done


def redis_clients(url: str) -> int:
    probe = redis.Redis.from_url(url)
    try:
        return len(probe.client_list()) - 1  # not this one
    finally:
        probe.close()


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--streams", type=int, default=2000, help="idle streams of one client")
    p.add_argument("--requests", type=int, default=500, help="ordinary requests per round")
    args = p.parse_args()
    report = Report("streams")
    n = args.streams
    env = {
        "HEARTS_SSE_MAX_STREAMS": str(n),
        "HEARTS_SSE_MAX_STREAMS_PER_CLIENT": str(n),
    }
    with RedisServer() as rs, HeartsServer(rs.url, workers=1, env=env) as server:
        port = server.port
        # A seed, so every run streams the same game (an unguessable one: issue 32).
        created = call(port, "POST", "/api/v1/games", '{"seed": "bench-streams-7Kq2xVm9Lp"}')
        game_id = json.loads(created)["id"]
        game = f"/api/v1/games/{game_id}"
        timed_requests(port, game, 50)  # warm-up
        idle_before, failed_before = timed_requests(port, game, args.requests)
        clients_idle = redis_clients(rs.url)

        started = time.perf_counter()
        opened = [open_stream(port, f"{game}/events", "127.0.0.2") for _ in range(n)]
        streams = [sock for sock in opened if sock is not None]
        opened_in = time.perf_counter() - started
        crowded, failed_crowded = timed_requests(port, game, args.requests)
        clients_crowded = redis_clients(rs.url)

        started = time.perf_counter()
        try:
            call(port, "POST", f"{game}/seats", '{"name": "ann"}')
            reached = until_all_see(streams, b'"PlayerJoined"', timeout=60)
        except RuntimeError:  # the join refused (503): as the service was before issue 22
            reached = 0
        fan_out = time.perf_counter() - started
        for sock in streams:
            sock.close()
        idle_after, failed_after = timed_requests(port, game, args.requests)

    report.add("streams asked for", n)
    report.add("streams refused", n - len(streams))
    report.add("streams opened in", opened_in, "s")
    for name, times, failed in (
        ("0 streams (before)", idle_before, failed_before),
        (f"{n} streams", crowded, failed_crowded),
        ("0 streams (after)", idle_after, failed_after),
    ):
        report.add(f"GET game p50, {name}", percentile(times, 50) * 1000, "ms")
        report.add(f"GET game p99, {name}", percentile(times, 99) * 1000, "ms")
        report.add(f"GET game not 200, {name}", failed)
    base = sorted(idle_before + idle_after)
    ratio50 = percentile(crowded, 50) / percentile(base, 50)
    ratio99 = percentile(crowded, 99) / percentile(base, 99)
    report.add(f"p50 ratio {n} streams / 0", ratio50, "x")
    report.add(f"p99 ratio {n} streams / 0", ratio99, "x")
    report.add("redis clients, 0 streams", clients_idle)
    report.add(f"redis clients, {n} streams", clients_crowded)
    report.add("one join reached streams", reached)
    report.add(f"one join reached all {n} streams in", fan_out, "s")
    report.target(
        "every stream and ordinary request answered, p50 within 2x with the streams open",
        ratio50 <= 2 and failed_crowded == 0 and len(streams) == n,
        "<= 2x, nothing refused",
    )
    report.note("one gevent worker, one game; the streams come from 127.0.0.2, requests from .1")
    report.emit(args.json)


if __name__ == "__main__":
    main()
