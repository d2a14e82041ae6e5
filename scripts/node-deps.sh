#!/usr/bin/env bash
# Install the JavaScript MCP programs the `node` test tier drives (the TypeScript SDK and the MCP
# Inspector CLI as clients, the reference server-everything as an upstream server), from their
# lockfiles, saying what is downloaded. Without node and npm this does nothing: the node tests
# then skip and say why.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "node-deps: node/npm not found; the node test tier will be skipped"
  exit 0
fi
for dir in tests/proxy/ts_client tests/proxy/inspector_cli tests/upstream/everything tests/agents; do
  if [ -L "$dir/node_modules" ]; then
    # another checkout's packages, linked in: npm ci would empty that checkout's folder
    echo "node-deps: $dir/node_modules is a symlink; leaving it as it is"
    continue
  fi
  stamp="$dir/node_modules/.package-lock.json"
  if [ -f "$stamp" ] && [ "$stamp" -nt "$dir/package-lock.json" ]; then
    echo "node-deps: $dir is up to date ($(du -sh "$dir/node_modules" | cut -f1))"
    continue
  fi
  count=$(python3 -c 'import json,sys; print(sum(1 for k in json.load(open(sys.argv[1]))["packages"] if k))' "$dir/package-lock.json")
  echo "node-deps: npm ci in $dir: $count packages from the npm registry (pinned by package-lock.json)"
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
  echo "node-deps: $dir installed, $(du -sh "$dir/node_modules" | cut -f1) on disk"
done
