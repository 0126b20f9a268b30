#!/usr/bin/env bash
# Lints the OpenAPI 3.1 documents (public and admin, as `atrium openapi`
# prints them and the gateway serves them) with Redocly CLI, an
# independent implementation of the specification, under its strictest
# built-in rules (tools/redocly/redocly.yaml). Redocly is pinned in
# tools/redocly/package-lock.json and installed there from npm on first
# use; Node.js comes from Debian's packages when it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=tools/redocly
want=$(sed -n 's/.*"@redocly\/cli": "\(.*\)".*/\1/p' "$dir/package.json")

if ! command -v npm >/dev/null; then
  echo "openapi-lint: installing Node.js and npm from Debian's packages"
  apt-get install -y -q nodejs npm >/dev/null
fi
if [ "$("$dir/node_modules/.bin/redocly" --version 2>/dev/null | tail -1)" != "$want" ]; then
  echo "openapi-lint: installing @redocly/cli $want (npm ci)"
  npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error
fi

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
go run ./cmd/atrium openapi >"$out/public.json"
go run ./cmd/atrium openapi --admin >"$out/admin.json"
# Node 20's end-of-life notice is not a finding: only the lint's output.
NODE_NO_WARNINGS=1 "$dir/node_modules/.bin/redocly" lint --config "$dir/redocly.yaml" "$out/public.json" "$out/admin.json" 2>&1 |
  grep -v -e '║' -e '╔' -e '╚' -e '^\s*$'
