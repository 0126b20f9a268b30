#!/usr/bin/env bash
# Starts the local PostgreSQL and NATS (JetStream) servers the tests use, if
# they are not already answering. Idempotent; safe to run before every test.
# The commands are the ones DEVELOPERS.md lists for this machine kind.
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
