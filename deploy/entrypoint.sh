#!/bin/sh
# Container entrypoint for the Yukon race server.
#
# Checks the configuration, migrates the database (retrying a few times, so that a database
# that is still starting is not fatal), then becomes the server with exec, so that the
# server is the process that receives SIGTERM and stops cleanly.
#
# Environment:
#   YUKON_DB               database URL (required), such as postgresql://yukon:PASSWORD@db/yukon
#   YUKON_DAILY_SECRET     secret the daily deals derive from (required when
#                          YUKON_REQUIRE_SECRETS=1; otherwise generated once and kept in the
#                          database)
#   YUKON_PORT             port to listen on (default 8765)
#   YUKON_DB_ATTEMPTS      how many times to try the migration (default 5)
#   YUKON_DB_RETRY_DELAY   seconds between tries (default 2)
# Arguments are passed on to `yukon serve`, such as --log-level debug.
set -eu

die() {
    echo "yukon entrypoint: $*" >&2
    exit 1
}

whole_number() {
    case "$2" in
        '' | *[!0-9]*) die "$1 must be a whole number, not '$2'" ;;
    esac
}

if [ -z "${YUKON_DB:-}" ]; then
    die "YUKON_DB is not set: give the database URL, such as postgresql://yukon:PASSWORD@db:5432/yukon"
fi
if [ "${YUKON_REQUIRE_SECRETS:-0}" = 1 ] && [ -z "${YUKON_DAILY_SECRET:-}" ]; then
    die "YUKON_DAILY_SECRET is not set, and YUKON_REQUIRE_SECRETS=1 requires it"
fi

port=${YUKON_PORT:-8765}
attempts=${YUKON_DB_ATTEMPTS:-5}
delay=${YUKON_DB_RETRY_DELAY:-2}
whole_number YUKON_PORT "$port"
whole_number YUKON_DB_ATTEMPTS "$attempts"
whole_number YUKON_DB_RETRY_DELAY "$delay"
[ "$attempts" -ge 1 ] || die "YUKON_DB_ATTEMPTS must be at least 1"

echo "yukon entrypoint: migrating the database" >&2
attempt=1
until yukon db upgrade; do
    if [ "$attempt" -ge "$attempts" ]; then
        die "cannot migrate the database after $attempts attempts; not starting"
    fi
    echo "yukon entrypoint: migration attempt $attempt of $attempts failed; retrying in ${delay}s" >&2
    attempt=$((attempt + 1))
    sleep "$delay"
done

exec yukon serve --host 0.0.0.0 --port "$port" "$@"
