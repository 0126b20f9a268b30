#!/usr/bin/env bash
# `make cluster`: the replicated topology of a production deployment, on
# this machine, to try it and to break it. Two replicas of every service
# and two gateways (each gateway and service given every replica's address
# as a list), a three-node NATS cluster whose streams are kept on all three
# nodes, one PostgreSQL database. It prints the gateways' URLs, the admin
# token and an API key of a demo agency with credits, and the commands to
# kill a part; Ctrl-C stops everything it started.
#
# Needs: the binaries in .bin/ (make build, which `make cluster` runs),
# nats-server (Debian's nats-server package), PostgreSQL answering at
# $ATRIUM_CLUSTER_DATABASE_URL (default: the local one, database
# atrium_cluster, created if missing), curl.
# Ports: $ATRIUM_CLUSTER_PORT (default 18500) and the 60 after it.
set -euo pipefail

base=${ATRIUM_CLUSTER_PORT:-18500}
bin=${ATRIUM_BIN_DIR:-.bin}
db=${ATRIUM_CLUSTER_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/atrium_cluster?sslmode=disable}
nats_server=$(command -v nats-server || echo /usr/sbin/nats-server)
work=$(mktemp -d "${TMPDIR:-/tmp}/atrium-cluster.XXXXXX")
pids=()

stop() {
  trap - INT TERM EXIT
  echo
  echo "cluster: stopping"
  # Gateways and services drain on SIGTERM; NATS last.
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    kill -TERM "${pids[i]}" 2>/dev/null || true
  done
  for pid in "${pids[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$work"
  echo "cluster: stopped (the database atrium_cluster is kept)"
}
# Ctrl-C is how a user ends it: a clean stop exits 0 (make prints no error).
trap 'stop; exit 0' INT TERM
trap stop EXIT

port_open() { (echo >"/dev/tcp/127.0.0.1/$1") >/dev/null 2>&1; }
wait_port() {
  for _ in $(seq 1 120); do
    port_open "$2" && return 0
    sleep 0.5
  done
  echo "cluster: $1 did not listen on 127.0.0.1:$2; its log: $work/$1.log" >&2
  tail -n 20 "$work/$1.log" >&2 || true
  exit 1
}

for b in atrium atrium-gateway atrium-collections atrium-crm atrium-data atrium-actions atrium-webhooks atrium-audit; do
  [ -x "$bin/$b" ] || { echo "cluster: $bin/$b is missing: run make build" >&2; exit 1; }
done
[ -x "$nats_server" ] || { echo "cluster: nats-server is missing (apt-get install nats-server)" >&2; exit 1; }

# The database: created if missing.
admin_db=${db%%\?*}
admin_db=${admin_db%/*}/postgres
if ! psql "$admin_db" -tAc "SELECT 1 FROM pg_database WHERE datname = 'atrium_cluster'" 2>/dev/null | grep -q 1; then
  psql "$admin_db" -qc "CREATE DATABASE atrium_cluster" >/dev/null
fi

# NATS: three servers, routed to each other.
routes="nats://127.0.0.1:$((base + 10)),nats://127.0.0.1:$((base + 11)),nats://127.0.0.1:$((base + 12))"
nats_urls=""
for i in 0 1 2; do
  "$nats_server" -a 127.0.0.1 -p $((base + i)) -n "atrium-nats-$i" -js -sd "$work/nats-$i" \
    --cluster_name atrium --cluster "nats://127.0.0.1:$((base + 10 + i))" --routes "$routes" >"$work/nats-$i.log" 2>&1 &
  pids+=($!)
  nats_urls+="${nats_urls:+,}nats://127.0.0.1:$((base + i))"
done
for i in 0 1 2; do wait_port "nats-$i" $((base + i)); done

secret=$(head -c 32 /dev/urandom | base64 | tr -d '/+=' | head -c 43)
admin_token="atrium_admin_$(head -c 24 /dev/urandom | base64 | tr -d '/+=' | head -c 32)"
export ATRIUM_INTERNAL_SECRET=$secret ATRIUM_DATABASE_URL=$db ATRIUM_NATS_URL=$nats_urls ATRIUM_NATS_STREAM_REPLICAS=3 \
  ATRIUM_MIGRATE=true ATRIUM_METRICS_ADDR= ATRIUM_DRAIN_DELAY=1s ATRIUM_LOG_LEVEL=warn \
  ATRIUM_DATA_DIR="$work/files" ATRIUM_PUBLIC_URL="http://127.0.0.1:$((base + 40))"

# Services: two replicas each, ports base+20.. (first replica) and
# base+30.. (second). Each waits for its upstreams; the first replica
# migrates its schema before the second starts.
declare -A list
n=0
for svc in collections crm data actions webhooks audit; do
  args=()
  case $svc in
    # Collections and the CRM call each other: the CRM's ports (n = 1)
    # are known before it starts.
    collections) args=(--crm-addr="127.0.0.1:$((base + 21)),127.0.0.1:$((base + 31))") ;;
    crm) args=(--collections-addr="${list[collections]}") ;;
    data | webhooks) args=(--crm-addr="${list[crm]}") ;;
    actions) args=(--crm-addr="${list[crm]}" --data-addr="${list[data]}") ;;
    audit) args=(--collections-addr="${list[collections]}") ;;
  esac
  [ "$svc" = webhooks ] && args+=(--allow-private-fetch)
  for r in 0 1; do
    port=$((base + 20 + r * 10 + n))
    "$bin/atrium-$svc" --grpc-addr="127.0.0.1:$port" "${args[@]}" >"$work/$svc-$r.log" 2>&1 &
    pids+=($!)
    echo "$!" >"$work/$svc-$r.pid"
    wait_port "$svc-$r" "$port"
  done
  list[$svc]="127.0.0.1:$((base + 20 + n)),127.0.0.1:$((base + 30 + n))"
  n=$((n + 1))
done

# Gateways: public base+40 and base+41, admin base+50 and base+51.
for g in 0 1; do
  ATRIUM_ADMIN_TOKEN=$admin_token "$bin/atrium-gateway" --http-addr="127.0.0.1:$((base + 40 + g))" --admin-addr="127.0.0.1:$((base + 50 + g))" \
    --collections-addr="${list[collections]}" --crm-addr="${list[crm]}" --data-addr="${list[data]}" \
    --actions-addr="${list[actions]}" --webhooks-addr="${list[webhooks]}" --audit-addr="${list[audit]}" >"$work/gateway-$g.log" 2>&1 &
  pids+=($!)
  echo "$!" >"$work/gateway-$g.pid"
  wait_port "gateway-$g" $((base + 50 + g))
done

# Wait until the first gateway can use every service.
admin="http://127.0.0.1:$((base + 50))"
for _ in $(seq 1 60); do
  [ "$(curl -s "$admin/healthz" | grep -o '"SERVING"' | wc -l)" -ge 5 ] && break
  sleep 0.5
done

# A demo agency with a site, a write key and credits.
api() { curl -sf -H "Authorization: Bearer $admin_token" -H 'Content-Type: application/json' "$@"; }
field() { sed -n "s/.*\"$1\": *\"\([^\"]*\)\".*/\1/p" | head -n1; }
agency=$(api -X POST "$admin/admin/v1/agencies" -d '{"name": "Cluster Agency"}' | field id)
site=$(api -X POST "$admin/admin/v1/sites" -d "{\"name\": \"Cluster Site\", \"agency_id\": \"$agency\"}" | field id)
key=$(api -X POST "$admin/admin/v1/keys" -d "{\"name\": \"cluster\", \"scopes\": [\"read\", \"write\"], \"agency_id\": \"$agency\", \"site_id\": \"$site\"}" | field secret)
api -X POST "$admin/admin/v1/agencies/$agency/credits" -d '{"ai": 1000, "data": 1000}' >/dev/null

cat <<EOF

Atrium is running as a replicated cluster (logs in $work).
  gateways:     http://127.0.0.1:$((base + 40))  http://127.0.0.1:$((base + 41))
  admin APIs:   http://127.0.0.1:$((base + 50))  http://127.0.0.1:$((base + 51))   (/healthz shows each service)
  admin token:  $admin_token
  API key:      $key   (agency $agency, site $site, 1,000 AI credits)
  NATS:         $nats_urls   (streams on all three)

Try:
  curl -s -H "Authorization: Bearer $key" http://127.0.0.1:$((base + 40))/api/v1/prospects
Break a part and watch the API keep answering (docs/operations.md, "When a part dies"):
  kill -9 \$(cat $work/actions-0.pid)     # an actions replica
  kill -9 \$(cat $work/webhooks-0.pid)    # a webhooks replica
  kill \$(cat $work/gateway-1.pid)        # a gateway, drained
  curl -s http://127.0.0.1:$((base + 50))/healthz

Ctrl-C stops everything.
EOF
wait
