#!/usr/bin/env bash
# The README's five-minute tour, run against a fresh data directory.
set -euo pipefail
export COMPOZY_HOME="${COMPOZY_HOME:-$(mktemp -d)/compozy}"
run() { printf '\n$ %s\n' "$*"; "$@"; }

echo "compozy tour: data in $COMPOZY_HOME"
run compozy tool list
run compozy tool invoke compozy__session_create \
  --input '{"session_id":"sess-example","agent_name":"general","name":"Fix flaky upload test","branch":"fix/upload-flake","provider":"claude"}'
run compozy tool invoke compozy__session_status --input '{"session_id":"sess-example"}' -o json
run compozy tool invoke compozy__session_runtime_set \
  --input '{"session_id":"sess-example","provider":"claude","model":"claude-opus-5-5","selection_revision":1,"generation":0}'
run compozy tool invoke compozy__session_status --input '{"session_id":"sess-example","result_view":"full"}'
run compozy tool invoke compozy__session_spawn \
  --input '{"parent_session_id":"sess-example","agent_name":"general","ttl_seconds":3600,"tools":["compozy__session_*"],"prompt":"Find the flaky test"}'
run compozy tool info compozy__session_status
printf '\n$ compozy tool invoke compozy__skill_view --input %s   # a single-result tool refuses the selector\n' "'{\"name\":\"x\",\"result_view\":\"full\"}'"
compozy tool invoke compozy__skill_view --input '{"name":"x","result_view":"full"}' -o json -v || echo "(exit code $?)"
