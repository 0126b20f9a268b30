#!/usr/bin/env bash
# Starts the local PostgreSQL, NATS (JetStream) and S3-compatible servers the
# tests use, if they are not already answering. Idempotent; safe to run
# before every test. The commands are the ones DEVELOPERS.md lists for this
# machine kind.
#
# The S3-compatible server is versitygw (Apache-2.0, built from the Go module
# proxy by `make .bin/versitygw`, pinned in tools/s3/go.mod), serving a
# directory on 127.0.0.1:7070 with the test credentials below; the object
# store tests read TEST_S3_ENDPOINT, TEST_S3_ACCESS_KEY and
# TEST_S3_SECRET_KEY, whose defaults are these.
set -euo pipefail

port_open() { (echo >"/dev/tcp/127.0.0.1/$1") >/dev/null 2>&1; }

wait_port() {
  local name=$1 port=$2
  for _ in $(seq 1 60); do
    port_open "$port" && return 0
    sleep 0.5
  done
  echo "services-up: $name did not start listening on 127.0.0.1:$port" >&2
  return 1
}

if ! port_open 5432; then
  echo "services-up: starting PostgreSQL"
  if command -v pg_ctlcluster >/dev/null 2>&1 && [ -d /etc/postgresql ]; then
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start
  else
    echo "services-up: PostgreSQL is not running and pg_ctlcluster is not available; start a server and set TEST_DATABASE_URL" >&2
    exit 1
  fi
  wait_port PostgreSQL 5432
fi

if ! port_open 4222; then
  echo "services-up: starting NATS with JetStream"
  if [ -x /usr/sbin/nats-server ]; then
    start-stop-daemon --start --oknodo --background --exec /usr/sbin/nats-server -- \
      -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server -l /var/log/nats-server.log
  else
    echo "services-up: NATS is not running and /usr/sbin/nats-server is missing; start one with -js and set TEST_NATS_URL" >&2
    exit 1
  fi
  wait_port NATS 4222
fi

S3_PORT=${ATRIUM_TEST_S3_PORT:-7070}
if ! port_open "$S3_PORT"; then
  echo "services-up: starting versitygw (S3) on 127.0.0.1:$S3_PORT"
  versitygw=${VERSITYGW:-.bin/versitygw}
  if [ ! -x "$versitygw" ]; then
    echo "services-up: $versitygw is missing; run make .bin/versitygw (make services-up builds it)" >&2
    exit 1
  fi
  root=${ATRIUM_TEST_S3_DIR:-${TMPDIR:-/tmp}/atrium-s3}
  mkdir -p "$root"
  # Detached from this shell and from make: the server outlives them, as
  # PostgreSQL and NATS do.
  ROOT_ACCESS_KEY_ID=atrium-test ROOT_SECRET_ACCESS_KEY=atrium-test-secret \
    setsid nohup "$versitygw" --port "127.0.0.1:$S3_PORT" --quiet posix "$root" \
    >"$root.log" 2>&1 </dev/null &
  wait_port versitygw "$S3_PORT"
fi

# Chromium, the headless browser of the CORS test (cmd/atrium, a page on
# another origin reading with a published-only key), from Debian's
# packages; nothing happens when it is installed.
if ! command -v chromium >/dev/null 2>&1; then
  echo "services-up: installing chromium (the browser test's)"
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium >/dev/null
  else
    echo "services-up: chromium is missing; install it (apt-get install chromium) for the browser test" >&2
    exit 1
  fi
fi

# pdftotext (poppler-utils), with which the client reports' tests read the
# text of the PDFs they make (services/actions, generate_report): the
# figures must be selectable text, as a client copying them gets.
if ! command -v pdftotext >/dev/null 2>&1; then
  echo "services-up: installing poppler-utils (pdftotext, the report tests')"
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends poppler-utils >/dev/null
  else
    echo "services-up: pdftotext is missing; install it (apt-get install poppler-utils) for the report tests" >&2
    exit 1
  fi
fi
