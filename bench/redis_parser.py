"""redis_parser: redis-py's reply parsers (hiredis, pure-Python RESP2 and RESP3) on log reads.

On a throwaway redis-server, ``--entries`` partition-log-sized entries (game_id, seq and a
300-byte envelope) are read back with XRANGE in batches of 1,000, and ``--xadds`` small XADDs are
made (the one-XADD endpoint's command), by one client per parser, in alternating rounds; the
median round is reported. hiredis is what redis-py uses when it is installed (a dependency of
the project since issue 13); the ratios say what it is worth on each kind of reply.
"""

from __future__ import annotations

import time

from bench.common import RedisServer, Report, median, parser

ENVELOPE = (
    '{"command_id":"c","game_id":"bench-1","hash":"' + "a" * 64 + '",'
    '"payload":{"card":"QS","seat":2},"prev_hash":"' + "b" * 64 + '",'
    '"schema_version":1,"seq":12,"time":"2026-11-23T08:00:00.000000Z","type":"CardPlayed"}'
)


def main(argv: list[str] | None = None) -> None:
    p = parser(__doc__.split("\n")[0])
    p.add_argument("--entries", type=int, default=20_000)
    p.add_argument("--xadds", type=int, default=3_000)
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args(argv)

    import redis
    from redis._parsers import _HiredisParser, _RESP2Parser, _RESP3Parser
    from redis.utils import HIREDIS_AVAILABLE

    if not HIREDIS_AVAILABLE:
        raise SystemExit("hiredis is not installed: pip install hiredis")
    parsers = {
        "hiredis": (_HiredisParser, 2),
        "resp2": (_RESP2Parser, 2),
        "resp3": (_RESP3Parser, 3),
    }
    reads: dict[str, list[float]] = {name: [] for name in parsers}
    writes: dict[str, list[float]] = {name: [] for name in parsers}
    with RedisServer() as server:
        setup = redis.Redis.from_url(server.url)
        pipe = setup.pipeline(transaction=False)
        for i in range(args.entries):
            pipe.xadd("log", {"game_id": "bench-1", "seq": i, "event": ENVELOPE})
        pipe.execute()
        for _ in range(args.rounds):
            for name, (parser_class, protocol) in parsers.items():
                client = redis.Redis.from_url(
                    server.url, parser_class=parser_class, protocol=protocol
                )
                start = time.perf_counter()
                after, read = "-", 0
                while chunk := client.xrange("log", after, "+", count=1000):
                    read += len(chunk)
                    after = "(" + chunk[-1][0].decode()
                reads[name].append(read / (time.perf_counter() - start))
                start = time.perf_counter()
                for _ in range(args.xadds):
                    client.xadd("bench", {"body": b'{"card":"QS"}'}, maxlen=1000, approximate=True)
                writes[name].append((time.perf_counter() - start) / args.xadds * 1e6)
                client.close()
        setup.close()

    report = Report("redis_parser")
    for name in parsers:
        report.add(f"{name}_xrange_entries_per_second", median(reads[name]), "entries/s")
        report.add(f"{name}_xadd_round_trip_us", median(writes[name]), "us")
    for name in ("resp2", "resp3"):
        ratio = median(reads["hiredis"]) / median(reads[name])
        report.add(f"ratio_xrange_hiredis_to_{name}", ratio)
    report.note("wall clock; one client per parser in turn; the server is the same")
    report.emit(args.json)


if __name__ == "__main__":
    main()
