# The Hearts API under gunicorn (hearts serve), as a non-root user.
# The image contains redis-server: without REDIS_URL, `hearts serve` starts a private one with its
# append-only file in /data (mount a volume there), never an in-memory store.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1

RUN apt-get update \
    && apt-get install -y --no-install-recommends redis-server \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY pyproject.toml README.md ./
COPY domain ./domain
COPY bots ./bots
COPY projections ./projections
COPY service ./service
RUN pip install . \
    && useradd --create-home --uid 10001 hearts \
    && mkdir -p /data && chown hearts /data

USER hearts
ENV HEARTS_HOST=0.0.0.0 \
    HEARTS_PORT=8000 \
    HEARTS_DATA_DIR=/data
VOLUME /data
EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=3s --retries=3 \
    CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=2)"
CMD ["hearts", "serve"]
