# The Hearts API under gunicorn (hearts serve), as a non-root user (uid 10001).
# The image contains redis-server: without REDIS_URL, `hearts serve` starts a private one with its
# append-only file in /data (mount a volume there), never an in-memory store.
# Linted by hadolint (tests/test_docker.py); built with podman on a Debian base made locally by
# mmdebstrap and run by podman-compose in CI (scripts/build-image, tests/test_container.py).
# Elsewhere `docker compose up --build` builds it on Docker's debian:bookworm-slim.
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}
# scripts/build-image prunes its earlier builds' unused layers by this label.
LABEL io.hearts.image=hearts

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PATH=/opt/hearts/bin:$PATH

# Debian's Python 3.11 in a virtual environment of its own (Debian's Python is externally
# managed: packages go into a venv, not the system). Not pinned (DL3008): Debian replaces a
# package's version with each security update, so a pin would break the next build instead of
# making it reproducible; the base image is the pin.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 python3-venv redis-server ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && python3 -m venv /opt/hearts \
    && groupadd --gid 10001 hearts \
    && useradd --create-home --uid 10001 --gid 10001 hearts \
    && mkdir -p /data \
    && chown 10001:10001 /data

WORKDIR /app
# A CA bundle for pip where the package index is reached through a TLS-inspecting proxy: the
# path of a file the build mounts (scripts/build-image mounts the host's bundle there). Used
# by the RUN steps only, never stored in the image. Unset: pip's own CA list.
ARG CA_BUNDLE=
# The dependencies first (and the build backend), in a layer of their own that only
# pyproject.toml invalidates: a change to the code rebuilds the last layers only, in seconds,
# and installs the project without reaching the package index.
COPY pyproject.toml ./
RUN python3 -c "import tomllib; p = tomllib.load(open('pyproject.toml', 'rb')); print('\n'.join(p['build-system']['requires'] + p['project']['dependencies']))" > /tmp/requirements.txt \
    && pip install ${CA_BUNDLE:+--cert "$CA_BUNDLE"} --requirement /tmp/requirements.txt \
    && rm /tmp/requirements.txt
COPY README.md ./
COPY domain ./domain
COPY bots ./bots
COPY projections ./projections
COPY service ./service
# hearts_client's merkle and note modules: the proofs and signed notes (docs/verify.md).
COPY clients/python/src ./clients/python/src
RUN pip install --no-deps --no-build-isolation . && rm -rf build

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
