# Sourced by .ci/run: a throw-away PostgreSQL cluster for the tests (docs/ARCHITECTURE.md
# "Running on PostgreSQL"), in a temporary folder, on 127.0.0.1 and a free port, owned by an
# unprivileged user (postgres when run as root, the current user otherwise). Trust authentication
# on loopback and fsync off: it holds nothing but test databases and is deleted at the end.
#
#   start_test_postgres   sets PG_CLUSTER_DIR and exports VGW_TEST_DATABASE_URL, or returns 1
#   stop_test_postgres    stops that cluster (only it) and removes its folder

PG_CLUSTER_DIR=""
PG_CLUSTER_USER=""

pg_as_owner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u "$PG_CLUSTER_USER" -- "$@"; else "$@"; fi
}

start_test_postgres() {
  local bin port
  bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
    echo "PostgreSQL: no initdb under /usr/lib/postgresql/*/bin (apt-get install postgresql)" >&2
    return 1
  fi
  if [ "$(id -u)" -eq 0 ]; then
    PG_CLUSTER_USER=postgres
    if ! id -u "$PG_CLUSTER_USER" >/dev/null 2>&1; then
      echo "PostgreSQL: running as root and there is no 'postgres' user to own the cluster" >&2
      return 1
    fi
  else
    PG_CLUSTER_USER=$(id -un)
  fi
  PG_CLUSTER_DIR=$(mktemp -d "${TMPDIR:-/tmp}/vgw-ci-pg.XXXXXX")
  chmod 755 "$PG_CLUSTER_DIR"
  [ "$(id -u)" -eq 0 ] && chown "$PG_CLUSTER_USER" "$PG_CLUSTER_DIR"
  port=$(node -e "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
  if ! pg_as_owner "$bin/initdb" -D "$PG_CLUSTER_DIR/data" -U postgres -A trust -E UTF8 >"$PG_CLUSTER_DIR/initdb.log" 2>&1; then
    echo "PostgreSQL: initdb failed:" >&2
    cat "$PG_CLUSTER_DIR/initdb.log" >&2
    return 1
  fi
  if ! pg_as_owner "$bin/pg_ctl" -D "$PG_CLUSTER_DIR/data" -l "$PG_CLUSTER_DIR/server.log" -w -t 60 \
      -o "-h 127.0.0.1 -p $port -k $PG_CLUSTER_DIR -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300" start >/dev/null; then
    echo "PostgreSQL: the server did not start:" >&2
    cat "$PG_CLUSTER_DIR/server.log" >&2
    return 1
  fi
  export VGW_TEST_DATABASE_URL="postgres://postgres@127.0.0.1:$port/postgres"
  PG_CLUSTER_BIN=$bin
  echo "PostgreSQL: throw-away cluster on 127.0.0.1:$port ($PG_CLUSTER_DIR)"
}

stop_test_postgres() {
  [ -n "$PG_CLUSTER_DIR" ] || return 0
  if [ -f "$PG_CLUSTER_DIR/data/postmaster.pid" ]; then
    pg_as_owner "$PG_CLUSTER_BIN/pg_ctl" -D "$PG_CLUSTER_DIR/data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$PG_CLUSTER_DIR"
  PG_CLUSTER_DIR=""
}
