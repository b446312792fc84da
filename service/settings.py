"""Settings of the service, read once from the environment (every variable is optional)."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from pathlib import Path

import platformdirs


class ConfigError(ValueError):
    """An environment variable with a value the service cannot use."""


@dataclass(frozen=True, slots=True)
class Settings:
    # Where the event store lives. None: the embedded default (see service/store/redis_server.py).
    redis_url: str | None = None
    # Every Redis key starts with this (several deployments can share one Redis).
    key_prefix: str = "hearts"
    # The public log of games (docs/verify.md): its name (the origin of its checkpoints and the
    # name of its signing key: a schema-less URL, no spaces or '+'), the Ed25519 key file (PEM;
    # None: log-key.pem in the data directory, made on first start) and the witnesses whose
    # cosignatures it keeps (their verifier keys, comma-separated).
    log_origin: str = "hearts.localhost/log"
    log_key_file: str | None = None
    log_witnesses: str = ""
    # GET /log/checkpoint serves a checkpoint published at most this often (seconds; 0: the
    # tree at each request). None: the caller's default (10 for hearts serve, 0 for an app
    # handed its Redis, as in the tests).
    checkpoint_interval: float | None = None
    # Partitions of the games and their logs; part of the data layout, recorded with the data
    # on first use (service/store/layout.py): a process with another count refuses to start.
    partitions: int = 16
    # An append is acknowledged once this many replicas have it (WAIT); 0: once the primary has.
    min_replicas: int = 0
    # How long an append waits for those replicas (ms) before answering 503 not-replicated.
    replica_timeout_ms: int = 1000
    # Whether arranged games (the creator chose a seed or the deals) count in the leaderboard
    # and player statistics; the projector and `hearts projections rebuild` must agree.
    count_arranged_games: bool = False
    # Request bodies above this many bytes get 413.
    max_body_bytes: int = 64 * 1024
    # How long an Idempotency-Key is remembered (seconds).
    idempotency_ttl: int = 24 * 60 * 60
    # How many times a command is decided again after losing a race with another append.
    conflict_retries: int = 8
    # The bot moves a human's request makes itself before answering (so a client playing cheap
    # bots sees their replies in the answer); the rest are played in the background.
    bot_moves_per_request: int = 8
    # Rate limits (docs/configuration.md: each limit beside its reason), in limits' notation
    # ("10/minute;100/hour") or "off". On unless rate_limits is False: ``hearts serve``, an app
    # built by hand and the test suite all get the same limits (issue 34: a limit the suite
    # turns off is one nobody tested). A legitimate client playing at full speed against bots
    # meets none of the per-path ones: `python -m bench.client_rate` measured the client's
    # README loop at 5 games created and joined a second (240 a minute) with one-hand games,
    # and 49 to 65 commands a second per token (a whole game in 7 to 10 s); each limit is at
    # least twice. That loop stores ~20 MB of Redis a minute, though: the storage budget
    # (rate_limit_storage, issue 42) holds it to ~22 one-hand games a minute.
    rate_limits: bool = True
    rate_limit_create: str = "10/second;600/minute"
    rate_limit_join: str = "20/second;1200/minute"
    rate_limit_import: str = "10/minute;50/hour"
    rate_limit_stream: str = "10/second;600/minute"
    rate_limit_command: str = "200/second;3000/minute"
    # Per client address: players registered (a name is held for good), requests made with a
    # player's key (each checks a key), analyses asked for (seconds of CPU each when not kept).
    rate_limit_register: str = "5/minute;30/hour"
    rate_limit_account: str = "10/second;600/minute"
    rate_limit_analysis: str = "10/minute;60/hour"
    # Per client address: audits, exports and group standings asked for (issue 42: each may be
    # seconds of a worker's long-work slot; an ended game's audit is kept, but each request
    # still counts). A person browsing replays opens an audit a page: 20 a minute was met by
    # the web table's own monkey test, so 60.
    rate_limit_long_reads: str = "60/minute;600/hour"
    # Per client address: games created with every seat a bot (issue 33: each is a whole game
    # of moves and log that nobody plays), counted on top of rate_limit_create.
    rate_limit_bot_games: str = "3/minute;20/hour"
    # Per client address and per player key: preset deals given to games created, one hit a
    # deal (issue 42: ~26 KB of Redis a hundred, kept until the game is over or expires).
    rate_limit_preset_deals: str = "1000/minute;6000/hour"
    # Games created with a bot in a seat: dealt as soon as the one open seat is taken (~17 KB).
    rate_limit_bot_seats: str = "200/minute"
    # Per player key: tournaments created (each seats its players in many games).
    rate_limit_tournament: str = "5/hour;20/day"
    # Per player key (issue 44): challenges sent, on top of rate_limit_account (per address).
    rate_limit_challenge: str = "10/minute;60/hour"
    # Per client address and per player key (issue 42): KiB of Redis stored, every write path
    # spending what it stores (service/api/storage_costs.py), on top of each path's own limit.
    # Counted in a sliding window (STRATEGY): 2.5 MB a minute at a steady rate, and a client
    # timing its requests to a window's edge passes at most twice that in any 60 s: the 5 MB
    # bound. A person playing never comes near (a whole game against bots is ~1.1 MB over its
    # 10 to 20 minutes).
    rate_limit_storage: str = "2500/minute"
    # How many proxies in front of the service append to X-Forwarded-For: the client address is
    # the one they saw. 0: the TCP peer's address (the header is ignored, so nobody can spoof it).
    trusted_proxies: int = 0
    # An IPv6 client counts (rate limits, open streams) as its network of this many bits: one
    # client usually holds a whole /64. IPv4 clients count by address.
    ipv6_prefix: int = 64
    # A game with an open seat expires this long after it was created (seconds); 0: never.
    waiting_game_ttl: int = 24 * 60 * 60
    # ... and this soon when its creator sent no player's key (seconds; at most the above):
    # a stranger's waiting games, preset deals and all, are not kept a day (issue 42). 0: the
    # waiting_game_ttl.
    anonymous_waiting_game_ttl: int = 60 * 60
    # A game in play without a turn clock whose awaited player has been silent this long
    # (seconds) ends as abandoned (GameAbandoned: service/app/abandonment.py); 0: never.
    abandon_after: int = 10 * 60
    # A tournament table without a turn clock that has waited this long (seconds) on a player
    # has a house bot stand in for them: they missed the round (service/app/tournaments.py).
    tournament_miss_after: int = 2 * 60
    # A game in play that no one has moved in for this long (seconds) leaves the lobby's list
    # (GET /games?active=true): its players left. 0: every game stays listed.
    lobby_idle_seconds: int = 60 * 60
    # Carry on games left on a bot's turn (by a crash) when the app starts. None: the caller's
    # default (``hearts serve`` sweeps, an app built in a test or by hand does not).
    sweep_on_start: bool | None = None
    # Where the embedded redis-server keeps its append-only file. None: the user's data directory
    # (platformdirs; see data_directory), the same whatever the working directory.
    data_dir: str | None = None
    # Where immutable objects go (the public log's tiles; archived games): ``file:///path`` or a
    # path, or ``s3://bucket/prefix?endpoint=...&region=...`` (service/store/blobs.py). None:
    # ``archive/`` in the data directory.
    archive_url: str | None = None
    # Folded games kept in memory per process (never served stale: see StateCache).
    cache_games: int = 1024
    # ...and no bot move is begun after this many milliseconds of a request.
    bot_request_ms: float = 25.0
    # Games with every seat a bot in play at once, in the whole deployment (beyond: 503
    # bot-games-full); 0: no cap. Each counts until it ends, or for bot_game_seconds at most
    # (what a crash leaves in the count drops out then).
    max_bot_games: int = 50
    bot_game_seconds: float = 1800.0
    # Run the background bot runner in this process (a thread; a greenlet under gevent).
    bot_runner: bool = True
    # A runner holds a game for this long (seconds) per turn of bot moves; a runner that dies
    # holding it delays the game by at most this much.
    bot_lease_seconds: float = 10.0
    # How often a runner looks for games handed over by other processes (seconds).
    bot_poll_seconds: float = 1.0
    # In a game with a turn clock where every person's seat is played by a bot (away, or handed
    # over), the bots move once per this many seconds, at a person's pace (bot_runner.table_pace).
    bot_away_pace: float = 2.0
    # At a table where a person plays, each bot waits this many seconds before it acts (a
    # human-like moment: the cards come one by one); 0, no wait. Never where only bots play
    # (bot_runner.table_pace).
    bot_think: float = 0.0
    # The most entries of a game's log one request reads in its worker: a read of more (an
    # events page far into a game, a hand, a state at a seq, a stream's start, a head's check)
    # is a long-work job, as an audit is (issue 33). Also the most events a page holds.
    log_page: int = 1000
    # Long requests (audit, export, import) a worker runs at once; the others wait their turn.
    long_requests_per_worker: int = 1
    # Long requests that may wait for a slot in a worker, beyond those running (issue 42): one
    # more is refused with 503 long-work-busy and Retry-After, not queued without bound.
    long_work_queue: int = 8
    # A client's long requests in flight (running or waiting) in one worker: past it, 503
    # long-work-busy. With the queue bound this is what keeps one client from making another
    # wait: at most this many of its jobs are ahead of anyone's (docs/budget.md).
    long_work_per_client: int = 2
    # Where they run: "process" (a child of the worker at nice 19, service/offload.py; only when
    # the app reaches Redis by URL itself) or "inline" (in the worker, paced).
    long_work: str = "process"
    # Who runs the analyses of hands (docs/analysis.md): "in-process" (a thread of the worker
    # that took the POST) or "external" (queued in Redis for `hearts analyst` processes).
    analysis_worker: str = "in-process"
    # Sampled deals per decision of an analysis (bots/analysis.py AnalysisBudget): its accuracy
    # against its CPU. Results are kept under it, so an API and its analysts must agree.
    analysis_samples: int = 200
    # Who times out seats whose turn clock ran out (service/app/timekeeper.py): "in-process" (a
    # thread of every worker; the appends' version checks keep each timeout single) or
    # "external" (`hearts timekeeper` processes, sharing the partitions by leases).
    timekeeper: str = "in-process"
    # How often the timekeeper looks for deadlines that passed (seconds).
    timekeeper_interval: float = 1.0
    # A seek (matchmaking) not paired within this many seconds expires.
    seek_ttl: int = 600
    # Seeks one client address (its rate-limit key) may have waiting at once (issue 32: a pool
    # jammed with seeks nobody can accept).
    seeks_per_address: int = 8
    # A challenge to a named player not answered within this many seconds expires (issue 44).
    challenge_ttl: int = 600
    # Challenges one player may have waiting for an answer at once.
    challenges_open: int = 5
    # A live event stream (SSE) sends a keep-alive comment this often (seconds).
    sse_keepalive_seconds: float = 15.0
    # A live event stream ends after this long; the client reconnects with Last-Event-ID.
    sse_max_seconds: float = 3600.0
    # Live event streams open at once in one worker (beyond: 503 streams-full); ``hearts serve``
    # gives each gevent worker this many connections more than ordinary requests need.
    sse_max_streams: int = 1000
    # Live event streams one client address may hold open in one worker (beyond: 429).
    sse_max_streams_per_client: int = 16
    # Run the projector in a thread of the app (only when no other process can reach the data).
    projector_in_process: bool = False
    # An ended game stays in Redis this long (seconds) before it moves to the archive.
    archive_after: float = 300.0
    # Run the archiver in this process (a background thread). None: the caller's default
    # (``hearts serve``'s processes archive; an app built in a test or by hand does not).
    archiver: bool | None = None
    # ``hearts serve``: where it listens, its gunicorn workers, threads and worker class (None:
    # gevent if installed, see service/cli/replay.py).
    host: str = "127.0.0.1"
    port: int = 8000
    workers: int = 2
    threads: int = 8
    worker_class: str | None = None
    # prometheus_client's multiprocess directory (set by ``hearts serve`` for its workers).
    metrics_dir: str | None = None
    # NO_COLOR (https://no-color.org): any non-empty value turns colour off in the CLI's output.
    no_color: bool = False

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: object) -> Settings:
        env = os.environ if env is None else env
        values: dict[str, object] = {}
        for name, var, parse in _VARIABLES:
            raw = env.get(var)
            if raw is None or raw == "":
                continue
            try:
                values[name] = parse(raw)
            except ValueError:
                raise ConfigError(f"{var}={raw!r} is not a valid {parse.__name__}") from None
        values.update(overrides)
        known = {f.name for f in fields(cls)}
        unknown = set(values) - known
        if unknown:
            raise ConfigError(f"unknown settings: {sorted(unknown)}")
        return cls(**values)  # type: ignore[arg-type]

    def child_env(self) -> dict[str, str]:
        """The environment for a child process (gunicorn's, a projector) that should read these
        same settings: this process's environment with every set field written back."""
        env = dict(os.environ)
        for name, var, _ in _VARIABLES:
            value = getattr(self, name)
            if value is None:
                env.pop(var, None)
            elif isinstance(value, bool):
                env[var] = "1" if value else ("" if var == "NO_COLOR" else "0")
            else:
                env[var] = str(value)
        return env


# Where data lived before the per-user default: the working directory's .hearts (issue 18).
LEGACY_DATA_DIR = ".hearts"


def default_data_dir() -> Path:
    """The user's data directory for hearts (platformdirs: ``~/.local/share/hearts`` on Linux,
    or under ``$XDG_DATA_HOME``; ``~/Library/Application Support/hearts`` on macOS)."""
    return Path(platformdirs.user_data_dir("hearts", appauthor=False))


def data_directory(configured: str | None) -> tuple[Path, str | None]:
    """The data directory to use and, when the choice may surprise, a note saying why.

    ``configured`` (``--data-dir`` or HEARTS_DATA_DIR) wins. Otherwise the per-user default;
    but a ``./.hearts`` left by an earlier version, holding data while the default holds none, is
    used instead (nothing is moved behind the user's back) with a note saying how to move it.
    """
    if configured:
        return Path(configured).expanduser().resolve(), None
    default = default_data_dir()
    legacy = Path(LEGACY_DATA_DIR).resolve()
    if legacy == default or not _holds_data(legacy):
        return default, None
    if not _holds_data(default):
        return legacy, (
            f"using {legacy}: an earlier version kept the data in ./.hearts of the working "
            f"directory; the default is now {default}, the same from any directory. To move it "
            f"there, stop the server and run: mv {legacy} {default}  "
            "(or keep it where it is with --data-dir / HEARTS_DATA_DIR)"
        )
    return default, (
        f"not using {legacy} (an earlier version's data directory, in the working directory): "
        f"the data is in {default}; pass --data-dir {legacy} to use the old one"
    )


def archive_url(settings: Settings) -> str:
    """Where ended games go: ``archive_url``, else ``archive/`` in the data directory."""
    if settings.archive_url:
        return settings.archive_url
    return (data_directory(settings.data_dir)[0] / "archive").as_uri()


def _holds_data(directory: Path) -> bool:
    """Whether a redis-server has kept data there (an append-only file or a snapshot)."""
    if not directory.is_dir():
        return False
    return any(directory.glob("appendonly*")) or (directory / "dump.rdb").exists()


def publish_data_dir(directory: str) -> None:
    """``--data-dir``: what HEARTS_DATA_DIR would say, for this process and its children."""
    os.environ["HEARTS_DATA_DIR"] = directory


def publish_metrics_dir(directory: str) -> None:
    """prometheus_client reads its multiprocess directory from the environment when a metric is
    created, so ``hearts serve`` must put it there before any worker imports service.metrics."""
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = directory


def boolean(raw: str) -> bool:
    value = raw.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise ValueError(raw)


def seconds(raw: str) -> float:
    value = float(raw)
    if not value > 0:
        raise ValueError(raw)
    return value


def milliseconds(raw: str) -> float:
    value = float(raw)
    if not value >= 0:
        raise ValueError(raw)
    return value


def flag(raw: str) -> bool:
    """Set to anything non-empty: on (the NO_COLOR convention)."""
    return bool(raw)


def non_negative_seconds(raw: str) -> float:
    value = float(raw)
    if not 0 <= value < float("inf"):
        raise ValueError(raw)
    return value


def at_least(minimum: int) -> Callable[[str], int]:
    """A parser of a whole number of at least ``minimum``."""

    def parse(raw: str) -> int:
        value = int(raw)
        if value < minimum:
            raise ValueError(raw)
        return value

    return parse


non_negative = at_least(0)


def one_of(*choices: str) -> Callable[[str], str]:
    """A parser of a setting that takes one of ``choices`` (any case, spaces around ignored)."""

    def parse(raw: str) -> str:
        value = raw.strip().lower()
        if value not in choices:
            raise ValueError(raw)
        return value

    return parse


long_work = one_of("process", "inline")


def blob_url(raw: str) -> str:
    """A blob store's URL: a path, ``file://`` or ``s3://`` (checked whole when it is opened)."""
    from urllib.parse import urlparse

    value = raw.strip()
    if urlparse(value).scheme not in ("", "file", "s3"):
        raise ValueError(raw)
    return value


analysis_worker = one_of("in-process", "external")
timekeeper = one_of("in-process", "external")


positive = at_least(1)


def ipv6_prefix_length(raw: str) -> int:
    """An IPv6 network's prefix length: 1 to 128 bits."""
    value = int(raw)
    if not 1 <= value <= 128:
        raise ValueError(raw)
    return value


RATE_OFF = "off"


def rate(raw: str) -> str:
    """A rate limit: limits' notation ("10/minute;100/hour"), or "off"."""
    from limits import parse_many  # Flask-Limiter's own parser: what it accepts, nothing else

    value = raw.strip()
    if value.lower() == RATE_OFF:
        return RATE_OFF
    parse_many(value)  # ValueError if it is not one
    return value


# (setting, environment variable, parser): docs/configuration.md's table lists the same.
_VARIABLES = (
    ("redis_url", "REDIS_URL", str),
    ("key_prefix", "HEARTS_KEY_PREFIX", str),
    ("log_origin", "HEARTS_LOG_ORIGIN", str),
    ("log_key_file", "HEARTS_LOG_KEY_FILE", str),
    ("log_witnesses", "HEARTS_LOG_WITNESSES", str),
    ("checkpoint_interval", "HEARTS_CHECKPOINT_INTERVAL", non_negative_seconds),
    ("partitions", "HEARTS_PARTITIONS", positive),
    ("min_replicas", "HEARTS_MIN_REPLICAS", non_negative),
    ("replica_timeout_ms", "HEARTS_REPLICA_TIMEOUT_MS", positive),
    ("count_arranged_games", "HEARTS_COUNT_ARRANGED_GAMES", boolean),
    ("max_body_bytes", "HEARTS_MAX_BODY_BYTES", positive),
    ("idempotency_ttl", "HEARTS_IDEMPOTENCY_TTL", positive),
    ("conflict_retries", "HEARTS_CONFLICT_RETRIES", positive),
    ("bot_moves_per_request", "HEARTS_BOT_MOVES_PER_REQUEST", non_negative),
    ("rate_limits", "HEARTS_RATE_LIMITS", boolean),
    ("rate_limit_create", "HEARTS_RATE_LIMIT_CREATE", rate),
    ("rate_limit_join", "HEARTS_RATE_LIMIT_JOIN", rate),
    ("rate_limit_import", "HEARTS_RATE_LIMIT_IMPORT", rate),
    ("rate_limit_stream", "HEARTS_RATE_LIMIT_STREAM", rate),
    ("rate_limit_command", "HEARTS_RATE_LIMIT_COMMAND", rate),
    ("rate_limit_register", "HEARTS_RATE_LIMIT_REGISTER", rate),
    ("rate_limit_account", "HEARTS_RATE_LIMIT_ACCOUNT", rate),
    ("rate_limit_analysis", "HEARTS_RATE_LIMIT_ANALYSIS", rate),
    ("rate_limit_bot_games", "HEARTS_RATE_LIMIT_BOT_GAMES", rate),
    ("rate_limit_preset_deals", "HEARTS_RATE_LIMIT_PRESET_DEALS", rate),
    ("rate_limit_bot_seats", "HEARTS_RATE_LIMIT_BOT_SEATS", rate),
    ("rate_limit_long_reads", "HEARTS_RATE_LIMIT_LONG_READS", rate),
    ("rate_limit_tournament", "HEARTS_RATE_LIMIT_TOURNAMENT", rate),
    ("rate_limit_challenge", "HEARTS_RATE_LIMIT_CHALLENGE", rate),
    ("rate_limit_storage", "HEARTS_RATE_LIMIT_STORAGE", rate),
    ("trusted_proxies", "HEARTS_TRUSTED_PROXIES", non_negative),
    ("ipv6_prefix", "HEARTS_IPV6_PREFIX", ipv6_prefix_length),
    ("waiting_game_ttl", "HEARTS_WAITING_GAME_TTL", non_negative),
    ("anonymous_waiting_game_ttl", "HEARTS_ANONYMOUS_WAITING_GAME_TTL", non_negative),
    ("abandon_after", "HEARTS_ABANDON_AFTER", non_negative),
    ("tournament_miss_after", "HEARTS_TOURNAMENT_MISS_AFTER", non_negative),
    ("lobby_idle_seconds", "HEARTS_LOBBY_IDLE", non_negative),
    ("sweep_on_start", "HEARTS_SWEEP_ON_START", boolean),
    ("data_dir", "HEARTS_DATA_DIR", str),
    ("archive_url", "HEARTS_ARCHIVE_URL", blob_url),
    ("cache_games", "HEARTS_CACHE_GAMES", positive),
    ("bot_request_ms", "HEARTS_BOT_REQUEST_MS", milliseconds),
    ("bot_runner", "HEARTS_BOT_RUNNER", boolean),
    ("max_bot_games", "HEARTS_MAX_BOT_GAMES", non_negative),
    ("bot_game_seconds", "HEARTS_BOT_GAME_SECONDS", seconds),
    ("bot_lease_seconds", "HEARTS_BOT_LEASE_SECONDS", seconds),
    ("bot_poll_seconds", "HEARTS_BOT_POLL_SECONDS", seconds),
    ("bot_away_pace", "HEARTS_BOT_AWAY_PACE", seconds),
    ("bot_think", "HEARTS_BOT_THINK", non_negative_seconds),
    ("log_page", "HEARTS_LOG_PAGE", positive),
    ("long_requests_per_worker", "HEARTS_LONG_REQUESTS_PER_WORKER", positive),
    ("long_work_queue", "HEARTS_LONG_WORK_QUEUE", non_negative),
    ("long_work_per_client", "HEARTS_LONG_WORK_PER_CLIENT", positive),
    ("long_work", "HEARTS_LONG_WORK", long_work),
    ("analysis_worker", "HEARTS_ANALYSIS_WORKER", analysis_worker),
    ("analysis_samples", "HEARTS_ANALYSIS_SAMPLES", at_least(2)),
    ("timekeeper", "HEARTS_TIMEKEEPER", timekeeper),
    ("timekeeper_interval", "HEARTS_TIMEKEEPER_INTERVAL", seconds),
    ("seek_ttl", "HEARTS_SEEK_TTL", positive),
    ("seeks_per_address", "HEARTS_SEEKS_PER_ADDRESS", positive),
    ("challenge_ttl", "HEARTS_CHALLENGE_TTL", positive),
    ("challenges_open", "HEARTS_CHALLENGES_OPEN", positive),
    ("sse_keepalive_seconds", "HEARTS_SSE_KEEPALIVE", seconds),
    ("sse_max_seconds", "HEARTS_SSE_MAX_SECONDS", seconds),
    ("sse_max_streams", "HEARTS_SSE_MAX_STREAMS", positive),
    ("sse_max_streams_per_client", "HEARTS_SSE_MAX_STREAMS_PER_CLIENT", positive),
    ("projector_in_process", "HEARTS_PROJECTOR_IN_PROCESS", boolean),
    ("archive_after", "HEARTS_ARCHIVE_AFTER", non_negative_seconds),
    ("archiver", "HEARTS_ARCHIVER", boolean),
    ("host", "HEARTS_HOST", str),
    ("port", "HEARTS_PORT", positive),
    ("workers", "HEARTS_WORKERS", positive),
    ("threads", "HEARTS_THREADS", positive),
    ("worker_class", "HEARTS_WORKER_CLASS", str),
    ("metrics_dir", "PROMETHEUS_MULTIPROC_DIR", str),
    ("no_color", "NO_COLOR", flag),
)
