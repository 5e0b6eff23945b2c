#!/usr/bin/env bash
# A private, throw-away PostgreSQL server on loopback for the storage tests.
#
#   eval "$(bash scripts/ci-postgres.sh start DIR)"   # prints: export SSSP_TEST_POSTGRES_URL=...
#   bash scripts/ci-postgres.sh stop DIR
#
# `start` uses Debian's PostgreSQL server (/usr/lib/postgresql/*/bin); when it is missing and the
# caller is root (CI), it installs the `postgresql` package with apt-get first, without the
# default cluster. It then creates a cluster in DIR/data (owned by the `postgres` user when run
# as root: the server refuses to run as root), starts it on 127.0.0.1 on a free port with its
# socket in DIR (nothing shared with other servers or users), creates the database `sssp_test`
# and prints the URL. Durability is off (fsync=off): the data is thrown away with DIR.
# Everything but the final export line goes to stderr; any failure exits non-zero.
set -euo pipefail

say() { printf 'ci-postgres: %s\n' "$*" >&2; }
die() { printf 'ci-postgres: error: %s\n' "$*" >&2; exit 1; }

cmd=${1:-}
dir=${2:-}
[[ -n "$cmd" && -n "$dir" ]] || die "usage: ci-postgres.sh start|stop DIR"

find_bin() {
  local d
  d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
  [[ -n "$d" && -x "$d/pg_ctl" ]] && printf '%s\n' "$d"
}

as_owner() {
  if [[ $(id -u) == 0 ]]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

case "$cmd" in
  start)
    bin=$(find_bin || true)
    if [[ -z "$bin" ]]; then
      [[ $(id -u) == 0 ]] || die "PostgreSQL is not installed (apt-get install postgresql, as root)"
      command -v apt-get >/dev/null || die "PostgreSQL is not installed and apt-get is missing"
      say "installing Debian's postgresql package"
      mkdir -p /etc/postgresql-common
      # No default cluster: only the private one below is started.
      printf 'create_main_cluster = false\n' > /etc/postgresql-common/createcluster.conf
      export DEBIAN_FRONTEND=noninteractive
      apt-get update -qq >&2 || die "apt-get update failed"
      # confold: keep the createcluster.conf written above (no conffile prompt).
      apt-get install -y -qq --no-install-recommends -o Dpkg::Options::=--force-confdef \
        -o Dpkg::Options::=--force-confold postgresql >&2 || die "apt-get install postgresql failed"
      bin=$(find_bin || true)
      [[ -n "$bin" ]] || die "postgresql installed, but no /usr/lib/postgresql/*/bin/pg_ctl"
    fi
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd -P)
    chmod 0700 "$dir"
    if [[ $(id -u) == 0 ]]; then
      getent passwd postgres >/dev/null || die "user postgres is missing (it comes with the package)"
      chown postgres "$dir"
    fi
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    say "initdb in $dir/data ($("$bin/postgres" --version))"
    as_owner "$bin/initdb" -D "$dir/data" -U postgres -A trust --no-sync -E UTF8 >"$dir/initdb.log" 2>&1 \
      || { cat "$dir/initdb.log" >&2; die "initdb failed"; }
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
      -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c full_page_writes=off -c max_connections=200" \
      start >&2 || { cat "$dir/server.log" >&2 || true; die "the server did not start"; }
    as_owner "$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -q -v ON_ERROR_STOP=1 \
      -c "CREATE DATABASE sssp_test" >&2 || die "cannot create the test database"
    say "PostgreSQL listening on 127.0.0.1:$port"
    printf 'export SSSP_TEST_POSTGRES_URL=%q\n' "postgresql+psycopg://postgres@127.0.0.1:$port/sssp_test"
    ;;
  stop)
    bin=$(find_bin || true)
    if [[ -n "$bin" && -d "$dir/data" ]]; then
      as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >&2 || say "stop failed (already stopped?)"
    fi
    rm -rf "$dir"
    ;;
  *)
    die "unknown command $cmd: use start or stop"
    ;;
esac
