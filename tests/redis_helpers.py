"""Throwaway redis-server processes for tests.

``start_redis_server(tmpdir)`` starts a private redis-server on a free loopback
port with its data in ``tmpdir`` and returns ``(process, url)``. Tests that need
persistence (crash tests) pass ``appendonly=True`` and may restart a server on
the same ``port`` and ``tmpdir`` to see what survived.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import redis
import redis.cluster

from tests import children

REDIS_SERVER_ENV = "HEARTS_REDIS_SERVER"


class RedisServerMissing(RuntimeError):
    pass


def redis_server_binary() -> str:
    """Path of the redis-server binary ($HEARTS_REDIS_SERVER, PATH, /usr/bin)."""
    candidates = [os.environ.get(REDIS_SERVER_ENV), shutil.which("redis-server")]
    candidates.append("/usr/bin/redis-server")
    for candidate in candidates:
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    raise RedisServerMissing(
        "redis-server not found (looked at $HEARTS_REDIS_SERVER, PATH and /usr/bin). "
        "Install it, e.g. `apt-get install -y redis-server` (.ci/run does this)."
    )


def free_port(cluster: bool = False) -> int:
    """A free loopback port; with ``cluster``, one whose cluster bus port (+10000) is free too
    (and below 65536)."""
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        if not cluster:
            return port
        if port + 10000 < 65536:
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as bus:
                try:
                    bus.bind(("127.0.0.1", port + 10000))
                except OSError:
                    continue
            return port


def start_redis_server(
    tmpdir: str | os.PathLike,
    appendonly: bool = False,
    *,
    port: int | None = None,
    extra_args: tuple[str, ...] | list[str] = (),
    timeout: float = 10.0,
) -> tuple[subprocess.Popen, str]:
    """Start redis-server with its files in ``tmpdir``; return ``(process, url)``.

    The server listens on 127.0.0.1 only, saves no RDB snapshots, and keeps an
    append-only file (fsync every second unless ``extra_args`` say otherwise)
    only if ``appendonly``. Without ``port`` a free one is picked (retried if
    another process takes it first). Stop it with :func:`stop_redis_server`.
    """
    binary = redis_server_binary()
    directory = Path(tmpdir)
    directory.mkdir(parents=True, exist_ok=True)
    attempts = 1 if port is not None else 5
    last_error = ""
    for _ in range(attempts):
        chosen = port if port is not None else free_port("--cluster-enabled" in extra_args)
        log_path = directory / f"redis-{chosen}.log"
        args = [
            binary,
            "--port",
            str(chosen),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(directory),
            "--save",
            "",
            "--appendonly",
            "yes" if appendonly else "no",
            "--daemonize",
            "no",
            "--logfile",
            str(log_path),
            *extra_args,
        ]
        out_path = directory / f"redis-{chosen}.out"
        with open(out_path, "ab") as out:
            process = children.start(
                args, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT
            )
        url = f"redis://127.0.0.1:{chosen}/0"
        if _wait_until_ready(process, url, timeout):
            return process, url
        stop_redis_server(process)
        last_error = "".join(
            path.read_text(errors="replace")[-1000:]
            for path in (out_path, log_path)
            if path.exists()
        )
    raise RuntimeError(f"redis-server did not start: {last_error}")


def _wait_until_ready(process: subprocess.Popen, url: str, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    client = redis.Redis.from_url(url, socket_connect_timeout=0.5, socket_timeout=0.5)
    try:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                return False
            try:
                if client.ping():
                    return True
            except (redis.ConnectionError, redis.TimeoutError, redis.ResponseError):
                # ResponseError: "LOADING" while an AOF is replayed.
                pass
            time.sleep(0.02)
        return False
    finally:
        client.close()


def stop_redis_server(process: subprocess.Popen, timeout: float = 10.0) -> None:
    """Stop a server started by :func:`start_redis_server` (SIGTERM, then SIGKILL)."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def redis_cli_binary() -> str:
    """Path of redis-cli (beside redis-server: Debian's redis-server package depends on it)."""
    beside = Path(redis_server_binary()).with_name("redis-cli")
    for candidate in (str(beside), shutil.which("redis-cli")):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    raise RedisServerMissing("redis-cli not found beside redis-server or on PATH")


@dataclass
class LocalCluster:
    """A Redis Cluster of throwaway redis-servers on loopback (see :func:`start_redis_cluster`)."""

    directory: Path
    nodes: dict[int, subprocess.Popen]  # port -> process, masters first
    masters: int
    node_args: dict[int, tuple[str, ...]]  # port -> its redis-server arguments beyond the defaults

    @property
    def url(self) -> str:
        """The service's URL for it (``redis+cluster://``, see service/store/redis_server.py)."""
        return f"redis+cluster://127.0.0.1:{next(iter(self.nodes))}/0"

    def node_url(self, port: int) -> str:
        return f"redis://127.0.0.1:{port}/0"

    def client(self) -> redis.cluster.RedisCluster:
        return redis.cluster.RedisCluster(host="127.0.0.1", port=next(iter(self.nodes)))

    def node(self, port: int) -> redis.Redis:
        return redis.Redis(host="127.0.0.1", port=port)

    def master_of_slot(self, slot: int) -> int:
        """Port of the master serving ``slot`` now (asked of any live node)."""
        for port, process in self.nodes.items():
            if process.poll() is not None:
                continue
            node = self.node(port)
            try:
                for start, end, master, *_ in node.execute_command("CLUSTER", "SLOTS"):
                    if start <= slot <= end:
                        return int(master[1])
            except redis.ConnectionError:
                continue
            finally:
                node.close()
        raise RuntimeError(f"no live node knows slot {slot}")

    def wait_ok(self, timeout: float = 30.0) -> None:
        """Until every live node says cluster_state:ok and agrees on every slot's master, and
        every replica's link to its master is up and its master counts it online (WAIT counts
        only those: a replica back from a full sync is up on its side first)."""
        deadline = time.monotonic() + timeout
        while True:
            views = []
            replicas: dict[int, int] = {}  # replica port -> its master's port
            online: set[int] = set()  # ports of replicas their master counts online
            for port, process in self.nodes.items():
                if process.poll() is not None:
                    continue
                node = self.node(port)
                try:
                    info = node.execute_command("CLUSTER", "INFO")
                    info = info.decode() if isinstance(info, bytes) else str(info)
                    slots = node.execute_command("CLUSTER", "SLOTS")
                    replication = node.info("replication")
                    # A replica counts once its link to the master is up (WAIT needs it).
                    ok = "cluster_state:ok" in info and (
                        replication.get("role") != "slave"
                        or replication.get("master_link_status") == "up"
                    )
                    views.append(
                        (ok, sorted((s, e, int(m[1])) for s, e, m, *_ in slots))
                        if ok
                        else (False, None)
                    )
                    if replication.get("role") == "slave":
                        replicas[port] = int(replication["master_port"])
                    online |= _online_replicas(replication)
                except redis.RedisError:
                    views.append((False, None))
                finally:
                    node.close()
            agreed = views and all(ok for ok, _ in views) and len({str(v) for _, v in views}) == 1
            if agreed and set(replicas) <= online:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"cluster in {self.directory} not ok: {views}; replicas {replicas}, "
                    f"online {online}"
                )
            time.sleep(0.05)

    def restart(self, port: int) -> None:
        """Start a stopped node again on its port with its node config: it rejoins the cluster
        (a master that was failed over comes back as a replica of its replacement)."""
        process, _ = start_redis_server(self.directory, port=port, extra_args=self.node_args[port])
        self.nodes[port] = process

    def stop(self) -> None:
        for process in self.nodes.values():
            stop_redis_server(process)


def _online_replicas(replication: dict) -> set[int]:
    """The ports of the replicas a master's ``INFO replication`` counts online."""
    entries = (v for k, v in replication.items() if k.startswith("slave") and isinstance(v, dict))
    return {int(v["port"]) for v in entries if v.get("state") == "online"}


def start_redis_cluster(
    tmpdir: str | os.PathLike, masters: int = 3, replicas: int = 0, timeout: float = 30.0
) -> LocalCluster:
    """Start ``masters`` cluster-enabled redis-servers (plus ``replicas`` per master) on free
    loopback ports with their files in ``tmpdir``, join them with ``redis-cli --cluster create``,
    and wait until every node says the cluster is ok. Stop it with :meth:`LocalCluster.stop`.

    Failover is made quick (``cluster-node-timeout`` 1 s) so a test can kill a master."""
    directory = Path(tmpdir)
    nodes: dict[int, subprocess.Popen] = {}
    node_args: dict[int, tuple[str, ...]] = {}
    try:
        for _ in range(masters * (1 + replicas)):
            args = (
                "--cluster-enabled",
                "yes",
                "--cluster-node-timeout",
                "1000",
                "--cluster-config-file",
                f"nodes-{len(nodes)}.conf",
                "--cluster-replica-validity-factor",
                "0",
            )
            process, url = start_redis_server(directory, extra_args=args)
            port = int(url.rsplit(":", 1)[1].split("/")[0])
            nodes[port] = process
            node_args[port] = args
        cluster = LocalCluster(directory, nodes, masters, node_args)
        command = [redis_cli_binary(), "--cluster", "create"]
        command += [f"127.0.0.1:{port}" for port in nodes]
        command += ["--cluster-replicas", str(replicas), "--cluster-yes"]
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        if done.returncode != 0:
            raise RuntimeError(f"redis-cli --cluster create failed: {done.stdout}{done.stderr}")
        cluster.wait_ok(timeout)
        return cluster
    except BaseException:
        for process in nodes.values():
            stop_redis_server(process)
        raise
