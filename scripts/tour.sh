#!/usr/bin/env bash
# The README's five-minute tour, run against a fresh data directory and a daemon of its own.
set -euo pipefail
export COMPOZY_HOME="${COMPOZY_HOME:-$(mktemp -d)/compozy}"
run() { printf '\n$ %s\n' "$*"; "$@"; }

log="$(mktemp)"
compozy serve --port 0 --no-uds 2>"$log" &
daemon=$!
trap 'kill "$daemon" 2>/dev/null; wait "$daemon" 2>/dev/null; rm -f "$log"' EXIT
for _ in $(seq 100); do
  url=$(sed -n 's/.*listening on \(http:[^ ]*\).*/\1/p' "$log")
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "${url:-}" ] || { cat "$log"; echo "the daemon did not start" >&2; exit 1; }
export COMPOZY_URL="$url"
echo "compozy tour: data in $COMPOZY_HOME, daemon at $COMPOZY_URL"

run compozy tool list
run compozy tool invoke compozy__session_create \
  --input '{"session_id":"sess-example","agent_name":"general","name":"Fix flaky upload test","branch":"fix/upload-flake","provider":"echo"}'
run compozy tool invoke compozy__session_status --input '{"session_id":"sess-example"}' -o json
run compozy tool invoke compozy__session_runtime_set \
  --input '{"session_id":"sess-example","provider":"echo","selection_revision":1,"generation":0}'
run compozy tool invoke compozy__session_status --input '{"session_id":"sess-example","result_view":"full"}'
run compozy tool invoke compozy__session_spawn \
  --input '{"parent_session_id":"sess-example","agent_name":"general","ttl_seconds":3600,"tools":["compozy__session_*"],"prompt":"Find the flaky test"}'
run compozy agent list
run compozy session prompt sess-example "hello, agent"
run compozy session prompt sess-example "write the notes" --no-wait
run compozy session approve sess-example allow-once
run compozy tool invoke compozy__session_wait --input '{"session_id":"sess-example"}'
run compozy session history sess-example
run compozy tool invoke compozy__session_history --input '{"session_id":"sess-example","result_view":"full"}' -o json
run compozy tool info compozy__session_status
run compozy session status sess-example
if command -v curl >/dev/null; then
  run curl -s -X POST "$COMPOZY_URL/api/tools/compozy__session_status/invoke" \
    -H 'Content-Type: application/json' -d '{"input":{"session_id":"sess-example"}}'
  echo
fi
printf '\n$ compozy tool invoke compozy__skill_view --input %s -o json -v   # a single-result tool refuses the selector\n' "'{\"name\":\"x\",\"result_view\":\"full\"}'"
compozy tool invoke compozy__skill_view --input '{"name":"x","result_view":"full"}' -o json -v || echo "(exit code $?)"
run compozy catalog release-note
