#!/usr/bin/env bash
# Checks the MCP server with a third-party client: the official MCP
# Inspector's command-line mode lists the tools of `atrium serve --demo`
# at /mcp with the demo's read key and with its write key, reads a
# dataset, and runs an action twice with one idempotency key (charged
# once). The Inspector is pinned in tools/mcp-inspector/package-lock.json
# and installed there from npm on first use; Node.js comes from Debian's
# packages when it is missing.
#
# Why @modelcontextprotocol/inspector-cli 1.0.3 and not the Inspector 2:
# version 2 needs Node.js 22.19 or newer, and the build machines have
# Debian's Node.js 20; the 1.x CLI runs on it (and still receives
# security fixes). It reads its own package.json through a path relative
# to the working directory, so it is run from tools/mcp-inspector/node_modules.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
dir=tools/mcp-inspector
want=$(sed -n 's/.*"@modelcontextprotocol\/inspector-cli": "\(.*\)".*/\1/p' "$dir/package.json")

if ! command -v npm >/dev/null; then
  echo "mcp-inspector-check: installing Node.js and npm from Debian's packages"
  apt-get install -y -q nodejs npm >/dev/null
fi
have=$(sed -n 's/.*"version": "\(.*\)".*/\1/p' "$dir/node_modules/@modelcontextprotocol/inspector-cli/package.json" 2>/dev/null | head -1 || true)
if [ "$have" != "$want" ]; then
  echo "mcp-inspector-check: installing @modelcontextprotocol/inspector-cli $want (npm ci)"
  timeout 300 npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error
fi

work=$(mktemp -d)
pid=
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    wait "$pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

fail() {
  echo "mcp-inspector-check: $*" >&2
  if [ -f "$work/serve.log" ]; then
    echo "--- atrium serve's output:" >&2
    tail -40 "$work/serve.log" >&2
  fi
  exit 1
}

go build -o "$work/atrium" ./cmd/atrium
# Every listener on a free port; no drain delay, so that it stops at once.
"$work/atrium" serve --demo --log-level=warn --drain-delay=0s \
  --http-addr=127.0.0.1:0 --admin-addr=127.0.0.1:0 --nats-embedded-addr=127.0.0.1:0 \
  --collections-grpc-addr=127.0.0.1:0 --crm-grpc-addr=127.0.0.1:0 --data-grpc-addr=127.0.0.1:0 \
  --actions-grpc-addr=127.0.0.1:0 --webhooks-grpc-addr=127.0.0.1:0 --audit-grpc-addr=127.0.0.1:0 >"$work/serve.log" 2>&1 &
pid=$!
# The banner, printed once everything is ready, gives the address and keys.
for _ in $(seq 1 300); do
  grep -q 'write key:' "$work/serve.log" && break
  kill -0 "$pid" 2>/dev/null || fail "atrium serve stopped before it was ready"
  sleep 0.2
done
grep -q 'write key:' "$work/serve.log" || fail "atrium serve not ready after 60s"
api=$(sed -n 's/^  public API:  \(http:[^ ]*\).*/\1/p' "$work/serve.log")
read_key=$(sed -n 's/^  read key: *\([^ ]*\).*/\1/p' "$work/serve.log")
write_key=$(sed -n 's/^  write key: *\([^ ]*\).*/\1/p' "$work/serve.log")
client=$(sed -n 's/.*(Sunrise Bakery: \([0-9a-f-]*\)).*/\1/p' "$work/serve.log")
[ -n "$api" ] && [ -n "$read_key" ] && [ -n "$write_key" ] && [ -n "$client" ] || fail "could not read the address, keys and client from the banner"

# run KEY ARGS...: the Inspector's CLI mode against /mcp with key; its
# JSON answer on stdout, its messages in $work/inspector.err.
run() {
  local key=$1
  shift
  (cd "$root/$dir/node_modules" &&
    NODE_NO_WARNINGS=1 timeout 60 node .bin/mcp-inspector-cli --cli "$api/mcp" --transport http \
      --header "Authorization: Bearer $key" "$@" 2>"$work/inspector.err")
}

# inspect KEY ARGS...: run, which must succeed.
inspect() {
  run "$@" || fail "the Inspector failed (${*:2}): $(cat "$work/inspector.err")"
}

# check NAME PYTHON-EXPRESSION: the expression over the answer r (parsed
# JSON) and t (the first text content, parsed) must hold.
check() {
  python3 -c '
import json, sys
name, expr = sys.argv[1], sys.argv[2]
r = json.load(sys.stdin)
t = None
if r.get("content"):
    try:
        t = json.loads(r["content"][0]["text"])
    except ValueError:
        t = r["content"][0]["text"]
if not eval(expr):
    sys.exit("mcp-inspector-check: %s: %s does not hold for %s" % (name, expr, json.dumps(r)[:1500]))
print("mcp-inspector-check: ok:", name)
' "$1" "$2"
}

read_tools='["get_asset", "get_item", "list_actions", "list_assets", "list_clients", "list_collections", "list_datasets", "list_deals", "list_items", "list_prospects", "read_dataset"]'
inspect "$read_key" --method tools/list | check "a read key lists the read tools only" \
  "sorted(x['name'] for x in r['tools'] if x['name'] != 'get_run') == $read_tools and all(x['annotations']['readOnlyHint'] for x in r['tools'])"
inspect "$write_key" --method tools/list | check "a write key lists the write tools too, run_action with each action's cost" \
  "{'create_item', 'update_item', 'run_action'} <= {x['name'] for x in r['tools']} and '(1 AI credit)' in [x for x in r['tools'] if x['name'] == 'run_action'][0]['description']"
inspect "$read_key" --method tools/call --tool-name read_dataset --tool-arg resource=keywords "client_id=$client" limit=2 |
  check "read_dataset answers a page of the demo's keywords" "not r.get('isError') and len(t['data']) == 2 and t['pagination']['has_more']"
if run "$read_key" --method tools/call --tool-name run_action --tool-arg action=generate_gbp_post "client_id=$client" topic=Rye >"$work/out"; then
  fail "a read key called run_action: $(cat "$work/out")"
fi
grep -q "run_action" "$work/inspector.err" || fail "a read key's call of run_action failed without naming the tool: $(cat "$work/inspector.err")"
echo "mcp-inspector-check: ok: run_action is not a read key's tool"
key="inspector-check-$(date +%s)"
inspect "$write_key" --method tools/call --tool-name run_action --tool-arg action=generate_gbp_post "client_id=$client" topic=Rye "idempotency_key=$key" |
  check "run_action runs the action and spends 1 AI credit" "not r.get('isError') and t['status'] == 'success' and not t['replayed'] and t['remaining_credits']['ai'] == 99"
inspect "$write_key" --method tools/call --tool-name run_action --tool-arg action=generate_gbp_post "client_id=$client" topic=Rye "idempotency_key=$key" |
  check "the same idempotency_key answers the first run, charged once" "t['replayed'] and t['remaining_credits']['ai'] == 99"
inspect "$read_key" --method tools/call --tool-name read_dataset --tool-arg resource=keywords client_id=01a21761-0000-7000-8000-000000000000 |
  check "another agency's client is the API's 403, as a tool error" "r.get('isError') and 'is not linked' in t"
echo "mcp-inspector-check: all checks passed"
