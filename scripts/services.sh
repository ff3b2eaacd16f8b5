#!/usr/bin/env bash
# Makes sure the PostgreSQL (127.0.0.1:5432) and Redis (127.0.0.1:6379) that the tests use
# are answering: starts them when installed but stopped, installs them (as root) when absent.
set -euo pipefail

log() { printf '\033[1mservices:\033[0m %s\n' "$*"; }
need_root() {
  if [ "$(id -u)" != 0 ]; then
    echo "services: $1 is not available; as root run: apt-get install -y $2" >&2
    exit 1
  fi
}

pg_up() { pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; }
if ! command -v pg_isready >/dev/null || ! pg_up; then
  if ! command -v pg_ctlcluster >/dev/null; then
    need_root PostgreSQL postgresql
    log "installing PostgreSQL"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
  fi
  ver=$(ls /etc/postgresql | sort -V | tail -1)
  conf=/etc/postgresql/$ver/main
  # Tests connect as postgres over TCP without a password (trust on loopback only).
  if ! grep -q '^host all all 127.0.0.1/32 trust' "$conf/pg_hba.conf"; then
    sed -i '1i host all all 127.0.0.1/32 trust\nhost all all ::1/128 trust' "$conf/pg_hba.conf"
  fi
  log "starting PostgreSQL $ver"
  pg_ctlcluster --skip-systemctl-redirect "$ver" main start || true
  for _ in $(seq 1 30); do pg_up && break; sleep 1; done
  pg_up || { echo "services: PostgreSQL did not start" >&2; exit 1; }
fi

redis_up() { redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null | grep -q PONG; }
if ! command -v redis-cli >/dev/null || ! redis_up; then
  if ! command -v redis-server >/dev/null; then
    need_root Redis redis-server
    log "installing Redis"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
  fi
  log "starting Redis"
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log --maxmemory-policy noeviction
  for _ in $(seq 1 30); do redis_up && break; sleep 1; done
  redis_up || { echo "services: Redis did not start" >&2; exit 1; }
fi
log "PostgreSQL and Redis answer"
