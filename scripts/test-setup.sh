#!/usr/bin/env bash
# What README's test command needs besides the workspace, checked and made ready: Redis and PostgreSQL running
# (started here when they do not answer; installed from Debian's packages when absent), `promtool` (Prometheus's
# linter, test/metrics-exposition.test.ts) and Chromium (the web UI's browser tests). `pnpm test` runs it first,
# and so does CI through `pnpm test`; it is quick when everything is there already.
set -euo pipefail

log() { printf '== test setup: %s\n' "$*"; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null 2>&1; then sudo "$@"; else
  echo "test setup: '$*' needs root (or sudo)" >&2; return 1; fi; }
updated=''
apt_install() {
  if [ -z "$updated" ]; then as_root apt-get update -qq; updated=1; fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# Redis at REDIS_URL's port, or 127.0.0.1:6379 (the end-to-end tests' default).
redis_port=6379
if [ -n "${REDIS_URL:-}" ]; then redis_port=$(printf '%s' "$REDIS_URL" | sed -nE 's#^redis://([^@/]*@)?[^:/]+:([0-9]+).*#\2#p'); redis_port=${redis_port:-6379}; fi
if ! command -v redis-server >/dev/null 2>&1 || ! command -v redis-cli >/dev/null 2>&1; then
  log "installing Redis"; apt_install redis-server redis-tools
fi
if ! redis-cli -h 127.0.0.1 -p "$redis_port" ping 2>/dev/null | grep -q PONG; then
  log "starting Redis on 127.0.0.1:$redis_port"
  redis-server --daemonize yes --bind 127.0.0.1 --port "$redis_port" --save "" --appendonly no >/dev/null
  for _ in $(seq 1 50); do redis-cli -h 127.0.0.1 -p "$redis_port" ping 2>/dev/null | grep -q PONG && break; sleep 0.2; done
fi
redis-cli -h 127.0.0.1 -p "$redis_port" ping >/dev/null

# promtool (Debian's prometheus package).
if ! command -v promtool >/dev/null 2>&1; then log "installing promtool (prometheus)"; apt_install prometheus; fi

# Chromium for test/clients/ui.test.ts (driven by playwright-core; Playwright's own download cannot work here).
if ! command -v chromium >/dev/null 2>&1; then log "installing chromium"; apt_install chromium; fi

# PostgreSQL: the request-log and audit tests create a database per run on GW_TEST_POSTGRES_URL, by default
# postgres://postgres:postgres@127.0.0.1:5432/postgres.
if [ -z "${GW_TEST_POSTGRES_URL:-}" ]; then
  if ! command -v pg_isready >/dev/null 2>&1 || ! pg_isready -h 127.0.0.1 -p 5432 >/dev/null 2>&1; then
    if ! command -v pg_ctlcluster >/dev/null 2>&1; then log "installing PostgreSQL"; apt_install postgresql; fi
    pg_version="$(ls /usr/lib/postgresql | sort -V | tail -n 1)"
    if [ ! -d "/etc/postgresql/$pg_version/main" ]; then as_root pg_createcluster "$pg_version" main; fi
    log "starting PostgreSQL $pg_version"
    # Installing may have started it already (where services start), so a failed start is not an error yet.
    as_root pg_ctlcluster "$pg_version" main start || true
    for _ in $(seq 1 50); do pg_isready -h 127.0.0.1 -p 5432 >/dev/null 2>&1 && break; sleep 0.2; done
  fi
  pg_isready -h 127.0.0.1 -p 5432 >/dev/null
  if ! PGPASSWORD=postgres psql -h 127.0.0.1 -U postgres -d postgres -Atc 'SELECT 1' >/dev/null 2>&1; then
    # A fresh Debian cluster: the postgres role has no password, and loopback connections ask for one.
    as_root runuser -u postgres -- psql -Atc "ALTER ROLE postgres PASSWORD 'postgres'" >/dev/null
    PGPASSWORD=postgres psql -h 127.0.0.1 -U postgres -d postgres -Atc 'SELECT 1' >/dev/null
  fi
fi
log "ready (Redis 127.0.0.1:$redis_port, PostgreSQL, promtool, chromium)"
