# The Yukon race server. Build and run with docker-compose.yml beside this file, or alone:
#   docker build -t yukon-race .
#   docker run -e YUKON_DB=postgresql://yukon:PASSWORD@host:5432/yukon -p 8765:8765 yukon-race
# The entrypoint migrates the database, then serves on 0.0.0.0:${YUKON_PORT:-8765}.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_ROOT_USER_ACTION=ignore

# Only what the package needs to build; .dockerignore keeps everything else out too.
# The solver's C search (setup.py) is compiled with a C compiler that is removed again in
# the same layer; without it the solver would run its slower pure-Python search.
WORKDIR /src
COPY pyproject.toml setup.py README.md ./
COPY protocol/ protocol/
COPY solver/ solver/
COPY server/ server/
COPY client/ client/
COPY yukon/ yukon/
COPY migrations/ migrations/
RUN apt-get update \
    && apt-get install -y --no-install-recommends gcc libc6-dev \
    && pip install --no-cache-dir . \
    && (cd / && python -c "from solver import search_implementation as s; assert s() == 'C'") \
    && apt-get purge -y --auto-remove gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/* \
    && cd / && rm -rf /src

COPY deploy/entrypoint.sh /usr/local/bin/yukon-entrypoint

# An unprivileged user; its home keeps the spool of results while the database is away.
RUN chmod 755 /usr/local/bin/yukon-entrypoint \
    && groupadd --system --gid 10001 yukon \
    && useradd --system --uid 10001 --gid yukon --home-dir /var/lib/yukon --create-home \
        --shell /usr/sbin/nologin yukon
USER yukon:yukon
WORKDIR /var/lib/yukon
ENV YUKON_SPOOL=/var/lib/yukon/yukon-spool.jsonl \
    YUKON_PORT=8765

EXPOSE 8765

# /healthz answers 200 once the server runs and its database answers.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import os, sys, urllib.request; url = 'http://127.0.0.1:%s/healthz' % os.environ.get('YUKON_PORT', '8765'); sys.exit(0 if urllib.request.urlopen(url, timeout=4).status == 200 else 1)"]

STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/yukon-entrypoint"]
