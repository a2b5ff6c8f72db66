#!/bin/sh
# Local stand-ins for the base images that Dockerfile and docker-compose.cluster.yml name,
# for a host whose Docker cannot pull from Docker Hub but can reach a Debian mirror.
#
# It builds a Debian bookworm root file system with debootstrap, imports it as
# yukon-offline/debian:bookworm, and builds on it, under the names the project's files use:
#
#   python:3.11-slim    Debian's Python 3.11 in a virtual environment first on PATH (so
#                       `pip install .` works as root), with its headers (the solver's C
#                       search compiles against them)
#   postgres:16-alpine  Debian's PostgreSQL 15 (bookworm has no 16: the project's SQL runs on
#                       both), with an entrypoint that honours POSTGRES_USER, POSTGRES_PASSWORD
#                       and POSTGRES_DB on an empty data directory, and pg_isready
#   redis:7-alpine      Debian's Redis 7.0 (redis-server, redis-cli), not protected-mode
#   haproxy:2.8-alpine  Debian's HAProxy 2.6, run as the official image runs it
#                       (haproxy -W -db -f /usr/local/etc/haproxy/haproxy.cfg)
#
# The images behave as the official ones do where the project relies on them (entrypoints,
# paths, users, stop signals); they are not the official images, and every one carries the
# label yukon.offline-stand-in. Remove them (docker rmi) before pulling the real ones.
# `docker compose ... up --build` then uses them as they are: nothing is pulled while an
# image of that name is present.
#
# This is how docker-compose.cluster.yml was first run and checked (README, "A cluster"):
# on a host with Docker and Debian's mirror but no Docker Hub, with these stand-ins,
# `docker-compose -f docker-compose.cluster.yml up -d --build`, and bench/cluster_drill.py
# through the load balancer.
#
# Run as root, from anywhere:  sh deploy/offline-images.sh
# Environment:
#   DEBIAN_MIRROR   the mirror debootstrap and apt use (default http://deb.debian.org/debian)
#   DEBIAN_SECURITY the security mirror (default http://deb.debian.org/debian-security)
#   WORKDIR         where the root file system is built (default: a new temporary
#                   directory, removed at the end)
#   EXTRA_CA_DIR    a directory of *.crt files the images must trust besides Debian's
#                   (default /usr/local/share/ca-certificates, the host's own): a host
#                   whose HTTPS goes through an intercepting proxy needs its proxy's CA
#                   inside the images too, for `pip install` in the build
set -eu

MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
SECURITY=${DEBIAN_SECURITY:-http://deb.debian.org/debian-security}
CA_DIR=${EXTRA_CA_DIR:-/usr/local/share/ca-certificates}
BASE=yukon-offline/debian:bookworm
LABEL=yukon.offline-stand-in

die() {
    echo "offline-images: $*" >&2
    exit 1
}

[ "$(id -u)" = 0 ] || die "run as root (debootstrap needs it)"
command -v debootstrap >/dev/null || die "debootstrap is missing: apt-get install -y debootstrap"
docker info >/dev/null 2>&1 || die "no Docker daemon answers"

if [ -n "${WORKDIR:-}" ]; then
    work=$WORKDIR
    mkdir -p "$work"
else
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
fi
rootfs=$work/rootfs

# --- the base: Debian bookworm, minbase ----------------------------------------------------
if [ ! -x "$rootfs/usr/bin/apt-get" ]; then
    echo "offline-images: debootstrap bookworm into $rootfs" >&2
    debootstrap --variant=minbase bookworm "$rootfs" "$MIRROR"
fi
cat >"$rootfs/etc/apt/sources.list" <<EOF
deb $MIRROR bookworm main
deb $MIRROR bookworm-updates main
deb $SECURITY bookworm-security main
EOF
# As Debian's own container images do: no cached packages, no package lists in a layer.
cat >"$rootfs/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
echo 'APT::Install-Recommends "false";' >"$rootfs/etc/apt/apt.conf.d/no-recommends"
# Nor do packages start their services while an image is built (there is no init).
printf '#!/bin/sh\nexit 101\n' >"$rootfs/usr/sbin/policy-rc.d"
chmod 755 "$rootfs/usr/sbin/policy-rc.d"
rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/archives/*.deb

# The CAs to trust besides Debian's: installed into the base with ca-certificates below.
mkdir -p "$rootfs/usr/local/share/ca-certificates"
if [ -d "$CA_DIR" ]; then
    for crt in "$CA_DIR"/*.crt; do
        [ -f "$crt" ] && cp "$crt" "$rootfs/usr/local/share/ca-certificates/"
    done
fi

echo "offline-images: importing $BASE" >&2
tar -C "$rootfs" --numeric-owner -c . |
    docker import --change 'CMD ["bash"]' --change "LABEL $LABEL=debian" - "$BASE.rootfs" >/dev/null

# Each stand-in is built from a Dockerfile in a directory of its own.
build() {
    tag=$1
    dir=$work/images/$2
    docker build --quiet --label "$LABEL=$tag" -t "$tag" "$dir" >/dev/null
    echo "offline-images: built $tag" >&2
}
image_dir() {
    mkdir -p "$work/images/$1"
    echo "$work/images/$1"
}

dir=$(image_dir base)
cat >"$dir/Dockerfile" <<EOF
FROM $BASE.rootfs
RUN apt-get update \\
    && apt-get install -y ca-certificates \\
    && update-ca-certificates \\
    && rm -rf /var/lib/apt/lists/*
ENV LANG=C.UTF-8
CMD ["bash"]
EOF
build "$BASE" base

# --- python:3.11-slim ------------------------------------------------------------------------
dir=$(image_dir python)
cat >"$dir/Dockerfile" <<EOF
FROM $BASE
RUN apt-get update \\
    && apt-get install -y python3 python3-venv libpython3.11-dev \\
    && rm -rf /var/lib/apt/lists/* \\
    && python3 -m venv /opt/python \\
    && ln -s /opt/python/bin/python3 /usr/local/bin/python
# Debian's Python refuses pip installs into the system (PEP 668): the official image's
# Python is its own, and so is this environment. Its pip bundles its own CAs: give it the
# system's, which include EXTRA_CA_DIR's.
ENV PATH=/opt/python/bin:\$PATH \\
    PIP_CERT=/etc/ssl/certs/ca-certificates.crt
CMD ["python3"]
EOF
build python:3.11-slim python

# --- postgres:16-alpine ----------------------------------------------------------------------
dir=$(image_dir postgres)
cat >"$dir/docker-entrypoint.sh" <<'EOF'
#!/bin/sh
# What the official image's entrypoint does that docker-compose files rely on: an empty
# data directory is initialised with POSTGRES_USER (default postgres) as superuser, whose
# password is POSTGRES_PASSWORD (required), and POSTGRES_DB (default: the user's name);
# connections over the network need the password, local ones do not; the server runs as
# the postgres user.
set -eu
if [ "${1:-}" = postgres ] && [ "$(id -u)" = 0 ]; then
    mkdir -p "$PGDATA" /var/run/postgresql
    chown -R postgres:postgres "$PGDATA" /var/run/postgresql
    chmod 700 "$PGDATA"
    exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi
if [ "${1:-}" = postgres ] && [ ! -s "$PGDATA/PG_VERSION" ]; then
    : "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD must be set}"
    user=${POSTGRES_USER:-postgres}
    db=${POSTGRES_DB:-$user}
    pwfile=$(mktemp)
    printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
    initdb --username="$user" --pwfile="$pwfile" --encoding=UTF8 --locale=C.UTF-8 \
        --auth-local=trust --auth-host=scram-sha-256 -D "$PGDATA" >/dev/null
    rm -f "$pwfile"
    echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
    echo "listen_addresses = '*'" >>"$PGDATA/postgresql.conf"
    if [ "$db" != postgres ]; then
        printf 'CREATE DATABASE "%s";\n' "$db" | postgres --single -j -D "$PGDATA" postgres >/dev/null
    fi
    echo "stand-in entrypoint: initialised $PGDATA (user $user, database $db)" >&2
fi
exec "$@"
EOF
cat >"$dir/Dockerfile" <<EOF
FROM $BASE
# No cluster of Debian's own (pg_createcluster): the entrypoint makes one in PGDATA.
RUN mkdir -p /etc/postgresql-common/createcluster.d \\
    && echo 'create_main_cluster = false' >/etc/postgresql-common/createcluster.d/stand-in.conf \\
    && apt-get update \\
    && apt-get install -y postgresql-15 \\
    && rm -rf /var/lib/apt/lists/*
ENV PATH=/usr/lib/postgresql/15/bin:\$PATH \\
    PGDATA=/var/lib/postgresql/data
COPY docker-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
RUN chmod 755 /usr/local/bin/docker-entrypoint.sh
VOLUME /var/lib/postgresql/data
ENTRYPOINT ["docker-entrypoint.sh"]
STOPSIGNAL SIGINT
EXPOSE 5432
CMD ["postgres"]
EOF
build postgres:16-alpine postgres

# --- redis:7-alpine --------------------------------------------------------------------------
dir=$(image_dir redis)
cat >"$dir/docker-entrypoint.sh" <<'EOF'
#!/bin/sh
# As the official image: flags alone mean redis-server with those flags; without a
# config file Redis runs with protected mode off (the container's network is the
# boundary); the server runs as the redis user.
set -eu
case "${1:-}" in
    -*) set -- redis-server "$@" ;;
esac
if [ "${1:-}" = redis-server ]; then
    case " $* " in
        *" --protected-mode "*) ;;
        *) set -- "$@" --protected-mode no ;;
    esac
    if [ "$(id -u)" = 0 ]; then
        chown redis:redis /data
        exec setpriv --reuid=redis --regid=redis --init-groups "$@"
    fi
fi
exec "$@"
EOF
cat >"$dir/Dockerfile" <<EOF
FROM $BASE
RUN apt-get update \\
    && apt-get install -y redis-server \\
    && rm -rf /var/lib/apt/lists/* \\
    && mkdir /data && chown redis:redis /data
COPY docker-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
RUN chmod 755 /usr/local/bin/docker-entrypoint.sh
WORKDIR /data
ENTRYPOINT ["docker-entrypoint.sh"]
EXPOSE 6379
CMD ["redis-server"]
EOF
build redis:7-alpine redis

# --- haproxy:2.8-alpine ----------------------------------------------------------------------
dir=$(image_dir haproxy)
cat >"$dir/docker-entrypoint.sh" <<'EOF'
#!/bin/sh
# As the official image: flags alone mean haproxy with those flags, and haproxy runs in
# master-worker mode in the foreground (-W -db).
set -eu
case "${1:-}" in
    -*) set -- haproxy "$@" ;;
esac
if [ "${1:-}" = haproxy ]; then
    shift
    set -- haproxy -W -db "$@"
fi
exec "$@"
EOF
cat >"$dir/Dockerfile" <<EOF
FROM $BASE
RUN apt-get update \\
    && apt-get install -y haproxy \\
    && rm -rf /var/lib/apt/lists/* \\
    && mkdir -p /usr/local/etc/haproxy /var/lib/haproxy \\
    && chown haproxy:haproxy /var/lib/haproxy
COPY docker-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
RUN chmod 755 /usr/local/bin/docker-entrypoint.sh
USER haproxy
WORKDIR /var/lib/haproxy
ENTRYPOINT ["docker-entrypoint.sh"]
STOPSIGNAL SIGUSR1
CMD ["haproxy", "-f", "/usr/local/etc/haproxy/haproxy.cfg"]
EOF
build haproxy:2.8-alpine haproxy

docker images --filter "label=$LABEL" --format '{{.Repository}}:{{.Tag}}  {{.Size}}'
