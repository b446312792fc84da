"""The blob store on an S3-compatible object store (AWS S3, MinIO, Ceph RGW, Cloudflare R2,
Backblaze B2...), through boto3.

``s3://bucket/prefix?endpoint=http://127.0.0.1:9000&region=eu-west-1`` names a bucket (which
must exist: the service never creates one), an optional key prefix, and, for a store other than
AWS, its endpoint (path-style addressing then, which every S3-compatible store accepts;
``addressing=virtual`` to change it). Credentials come from boto3's usual chain: the
``AWS_ACCESS_KEY_ID`` / ``AWS_SECRET_ACCESS_KEY`` environment variables, ``AWS_PROFILE`` and
``~/.aws``, an instance role. Never from the URL, which is printed in logs.

Write-once: ``put`` sends ``If-None-Match: *`` (S3 conditional writes), so of two writers of one
name exactly one creates it and the other gets 412 and compares bytes. A store that does not
implement conditional writes (501) falls back to a check then an unconditional put: two writers
racing with different bytes on such a store may both succeed, the later replacing the earlier.
The service never races on a name with different bytes (tiles and archived games are
deterministic), so the fallback only loses the race detection, not data.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlparse

from service.store.blobs import BlobConflict, BlobStoreError, check_name

# 409 ConditionalRequestConflict: another conditional write of the name is in flight (AWS); it
# is retried after a pause, by when the other write has finished or failed.
_CONFLICT_RETRIES = 5
_CONFLICT_PAUSE = 0.05


# How long a call may wait on the store (issue 43): a store that refuses connections fails a
# call at once, one that accepts and never answers fails it after CONNECT_TIMEOUT (to connect)
# or READ_TIMEOUT (for each answer) per attempt, ATTEMPTS attempts in all. With the defaults a
# call gives up within ~2 x (2 + 5) s plus a back-off under a second; then the store's circuit
# (service/store/blob_guard.py) fails the next calls at once for a while. Each can be set in the
# URL (``connect_timeout=``, ``read_timeout=``, ``attempts=``).
CONNECT_TIMEOUT = 2.0
READ_TIMEOUT = 5.0
ATTEMPTS = 2
# Connections kept per client: boto3's default (10) is fewer than a worker's concurrent readers
# (gevent), and each connection past it is opened, used once and dropped with urllib3's
# "Connection pool is full" warning.
POOL = 64


@dataclass(frozen=True)
class Timeouts:
    connect: float = CONNECT_TIMEOUT
    read: float = READ_TIMEOUT
    attempts: int = ATTEMPTS

    @property
    def longest_call(self) -> float:
        """The longest a call may wait on the store (the back-off between attempts aside)."""
        return self.attempts * (self.connect + self.read)


def _client(endpoint: str | None, region: str | None, addressing: str, timeouts: Timeouts) -> Any:
    import boto3  # the optional `s3` extra: only deployments that use it need it installed
    from botocore.config import Config

    config = Config(
        region_name=region,
        s3={"addressing_style": addressing},
        retries={"mode": "standard", "total_max_attempts": timeouts.attempts},
        connect_timeout=timeouts.connect,
        read_timeout=timeouts.read,
        max_pool_connections=POOL,
        # Checksums only where the operation needs one: several S3-compatible stores refuse
        # the CRC headers newer SDKs add to every upload by default.
        request_checksum_calculation="when_required",
        response_checksum_validation="when_required",
    )
    return boto3.client("s3", endpoint_url=endpoint, config=config)


def _code(error: Exception) -> str:
    response = getattr(error, "response", None) or {}
    return str(response.get("Error", {}).get("Code", ""))


def _status(error: Exception) -> int:
    response = getattr(error, "response", None) or {}
    return int(response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0))


def _number(query: dict[str, str], name: str, default: float, kind: type) -> float:
    raw = query.get(name)
    if raw is None:
        return default
    try:
        value = kind(raw)
    except ValueError:
        raise ValueError(f"{name}= is a number: {raw[:40]!r}") from None
    if not 0 < value <= 300:
        raise ValueError(f"{name}= is above 0 and at most 300")
    return value


class S3BlobStore:
    """Write-once objects under ``prefix/`` of an S3 bucket."""

    def __init__(
        self,
        bucket: str,
        prefix: str = "",
        *,
        endpoint: str | None = None,
        region: str | None = None,
        addressing: str = "auto",
        client: Any = None,
        timeouts: Timeouts | None = None,
    ) -> None:
        if not bucket:
            raise ValueError("an s3:// archive URL names a bucket: s3://bucket/prefix")
        self.bucket = bucket
        self.prefix = prefix.strip("/")
        if self.prefix:
            check_name(self.prefix)
        self.timeouts = timeouts or Timeouts()
        self.client = client or _client(endpoint, region, addressing, self.timeouts)
        self.url = f"s3://{bucket}/{self.prefix}" if self.prefix else f"s3://{bucket}"
        self._conditional = True  # until the store answers 501 to If-None-Match

    @classmethod
    def from_url(cls, url: str) -> S3BlobStore:
        parsed = urlparse(url)
        if parsed.scheme != "s3":
            raise ValueError(f"not an s3:// URL: {url!r}")
        query = {name: values[-1] for name, values in parse_qs(parsed.query).items()}
        unknown = set(query) - {
            "endpoint",
            "region",
            "addressing",
            "connect_timeout",
            "read_timeout",
            "attempts",
        }
        if unknown:
            raise ValueError(f"unknown s3:// URL parameter(s): {', '.join(sorted(unknown))}")
        endpoint = query.get("endpoint")
        addressing = query.get("addressing", "path" if endpoint else "auto")
        if addressing not in ("auto", "path", "virtual"):
            raise ValueError("addressing= is auto, path or virtual")
        return cls(
            parsed.netloc,
            parsed.path,
            endpoint=endpoint,
            region=query.get("region"),
            addressing=addressing,
            timeouts=Timeouts(
                _number(query, "connect_timeout", CONNECT_TIMEOUT, float),
                _number(query, "read_timeout", READ_TIMEOUT, float),
                int(_number(query, "attempts", ATTEMPTS, int)),
            ),
        )

    def _key(self, name: str) -> str:
        check_name(name)
        return f"{self.prefix}/{name}" if self.prefix else name

    def put(self, name: str, data: bytes) -> None:
        key = self._key(name)
        # Already there (a writer redoing its step): compare, never upload it again.
        if self.size(name) is not None:
            self._same_or_conflict(name, data)
            return
        for _ in range(_CONFLICT_RETRIES):
            try:
                if self._conditional:
                    self.client.put_object(Bucket=self.bucket, Key=key, Body=data, IfNoneMatch="*")
                else:
                    self.client.put_object(Bucket=self.bucket, Key=key, Body=data)
                return
            except Exception as error:
                code, status = _code(error), _status(error)
                if status == 412 or code == "PreconditionFailed":
                    self._same_or_conflict(name, data)
                    return
                if status == 409 or code == "ConditionalRequestConflict":
                    time.sleep(_CONFLICT_PAUSE)
                    if self.size(name) is not None:
                        self._same_or_conflict(name, data)
                        return
                    continue
                if self._conditional and (status == 501 or code == "NotImplemented"):
                    self._conditional = False
                    continue
                raise BlobStoreError(f"{self.url}: put {name}: {error}") from error
        raise BlobStoreError(f"{self.url}: put {name}: conflicting writes kept failing")

    def replace(self, name: str, data: bytes) -> None:
        key = self._key(name)
        try:  # one PUT: S3 answers every later GET with the old object or the new one whole
            self.client.put_object(Bucket=self.bucket, Key=key, Body=data)
        except Exception as error:
            raise BlobStoreError(f"{self.url}: replace {name}: {error}") from error

    def delete(self, name: str) -> None:
        key = self._key(name)
        try:  # S3 answers 204 for a key that is not there as for one that was
            self.client.delete_object(Bucket=self.bucket, Key=key)
        except Exception as error:
            raise BlobStoreError(f"{self.url}: delete {name}: {error}") from error

    def _same_or_conflict(self, name: str, data: bytes) -> None:
        if self.get(name) != data:
            raise BlobConflict(name)

    def get(self, name: str) -> bytes | None:
        key = self._key(name)
        try:
            response = self.client.get_object(Bucket=self.bucket, Key=key)
        except Exception as error:
            if _code(error) in ("NoSuchKey", "404") or _status(error) == 404:
                return None
            raise BlobStoreError(f"{self.url}: get {name}: {error}") from error
        try:  # the body comes after the headers: a store may stall (or drop) in between
            with response["Body"] as body:
                return body.read()
        except Exception as error:
            raise BlobStoreError(f"{self.url}: get {name}: {error}") from error

    def size(self, name: str) -> int | None:
        key = self._key(name)
        try:
            response = self.client.head_object(Bucket=self.bucket, Key=key)
        except Exception as error:
            if _code(error) in ("NoSuchKey", "404", "NotFound") or _status(error) == 404:
                return None
            raise BlobStoreError(f"{self.url}: head {name}: {error}") from error
        return int(response["ContentLength"])

    def exists(self, name: str) -> bool:
        return self.size(name) is not None

    def names(self, prefix: str = "") -> Iterator[str]:
        base = f"{self.prefix}/" if self.prefix else ""
        paginator = self.client.get_paginator("list_objects_v2")
        try:
            for page in paginator.paginate(Bucket=self.bucket, Prefix=base + prefix):
                for item in page.get("Contents", ()):
                    name = item["Key"][len(base) :]
                    try:
                        yield check_name(name)
                    except ValueError:
                        continue  # not an object of ours (written by something else)
        except BlobStoreError:
            raise
        except Exception as error:
            raise BlobStoreError(f"{self.url}: list {prefix}: {error}") from error
