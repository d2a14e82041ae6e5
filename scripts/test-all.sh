#!/usr/bin/env bash
# `make test`: the lint and the type check beside the test tiers, then a line per step with its
# time. The lint and mypy run at the lowest CPU priority: they take the cycles the tests leave
# while they wait on the daemons and agents they start (mypy --strict over a clean checkout is
# ~15 s of CPU), instead of ~25 s of wall before the first test. Each step's output is shown
# in full when it ends; the run fails when any step fails.
#
#   scripts/test-all.sh MAKE BIN WORKERS   (from `make test`: BIN is the virtualenv's bin)
set -uo pipefail
make=$1
bin=$2
workers=$3
logs=$(mktemp -d)
started=$(date +%s.%N)

elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# lint and typecheck: background, niced; each writes its exit status and end time
step() {
  local name=$1
  shift
  (
    begun=$(date +%s.%N)
    nice -n 19 "$@" >"$logs/$name.out" 2>&1
    echo "$? $begun $(date +%s.%N)" >"$logs/$name.rc"
  ) &
  pids+=($!)
}
pids=()
step lint "$make" --no-print-directory lint
step typecheck "$make" --no-print-directory typecheck
trap 'kill "${pids[@]}" 2>/dev/null; rm -rf "$logs"' EXIT

"$bin/pytest" -n "$workers" --dist loadscope
tests_rc=$?
tests_end=$(date +%s.%N)
wait "${pids[@]}"

failed=0
[ "$tests_rc" -eq 0 ] || failed=1
summary=()
for name in lint typecheck; do
  read -r rc begun ended <"$logs/$name.rc"
  echo "---- make test: $name ($(elapsed "$begun" "$ended") s, beside the tests) ----"
  cat "$logs/$name.out"
  [ "$rc" -eq 0 ] || failed=1
  summary+=("$(printf '%-10s %8s s  %s' "$name" "$(elapsed "$begun" "$ended")" \
    "$([ "$rc" -eq 0 ] && echo passed || echo "FAILED (exit $rc)")")")
done
summary+=("$(printf '%-10s %8s s  %s' tests "$(elapsed "$started" "$tests_end")" \
  "$([ "$tests_rc" -eq 0 ] && echo passed || echo "FAILED (exit $tests_rc)")")")
echo "---- make test: the steps (wall seconds; the lint and typecheck ran beside the tests) ----"
printf '%s\n' "${summary[@]}"
echo "make test: $(elapsed "$started" "$(date +%s.%N)") s in all"
exit "$failed"
