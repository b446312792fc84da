# The Hearts API under gunicorn (hearts serve), as a non-root user (uid 10001).
# The image contains redis-server: without REDIS_URL, `hearts serve` starts a private one with its
# append-only file in /data (mount a volume there), never an in-memory store.
# Linted by hadolint (tests/test_docker.py); built and run by `docker compose up`.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1

# Not pinned (DL3008): Debian replaces a package's version with each security update, so a pin
# would break the next build instead of making it reproducible; the base image tag is the pin.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends redis-server \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --gid 10001 hearts \
    && useradd --create-home --uid 10001 --gid 10001 hearts \
    && mkdir -p /data \
    && chown 10001:10001 /data

WORKDIR /app
COPY pyproject.toml README.md ./
COPY domain ./domain
COPY bots ./bots
COPY projections ./projections
COPY service ./service
# hearts_client's merkle and note modules: the proofs and signed notes (docs/verify.md).
COPY clients/python/src ./clients/python/src
RUN pip install .

# Numeric, so the runtime needs no /etc/passwd lookup to know it is not root.
USER 10001:10001
ENV HEARTS_HOST=0.0.0.0 \
    HEARTS_PORT=8000 \
    HEARTS_DATA_DIR=/data
VOLUME /data
EXPOSE 8000
# /readyz: 503 while Redis does not answer (it also reports the projector, as 'degraded').
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/readyz', timeout=2)"]
CMD ["hearts", "serve"]
