#!/usr/bin/env bash
# Fails when a test sleeps without saying why. A test that sleeps to let
# something happen either waits longer than it needs on every run or fails
# on a busy machine; DEVELOPERS.md ("Tests and the clock") says what to use
# instead: testing/synctest, a channel or hook, or polling something the
# code exposes. A sleep that is the right tool (a poll of an HTTP endpoint,
# fake time inside a synctest bubble, a wait that is the behaviour under
# test) carries its reason on the same line:
#
#	time.Sleep(20 * time.Millisecond) // why sleep: polls /readyz, which has no push form
#
# A bare `<-time.After(d)` statement is a sleep too.
set -euo pipefail
cd "$(dirname "$0")/.."

found=$(git ls-files '*_test.go' | while read -r f; do
  grep -nHE 'time\.Sleep\(|^[[:space:]]*<-time\.(After|Tick)\(' "$f" | grep -v '// why sleep: [^ ]' || true
done)
if [ -n "$found" ]; then
  echo "tests that sleep without a reason (see \"Tests and the clock\" in DEVELOPERS.md):"
  echo "$found"
  exit 1
fi
