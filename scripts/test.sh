#!/usr/bin/env bash
# The one test command (`npm test`): installs what a fresh machine lacks, then runs every
# check CI runs. Servers the suites need (redis-server, Milvus Lite) are installed if missing
# and started by the vitest global setup; nothing is ever skipped for want of a server.
set -euo pipefail
cd "$(dirname "$0")/.."

[ -d node_modules ] || npm ci --no-audit --no-fund
bash scripts/ensure-redis.sh
bash scripts/ensure-lua.sh
echo "== helm (chart tests)"; bash scripts/ensure-helm.sh
echo "== kube-apiserver (operator tests)"; bash scripts/ensure-kube.sh 2>&1 | tail -3

echo "== typecheck"; npx tsc -p tsconfig.json
echo "== lint";      npx eslint .
echo "== format";    npx prettier --check . >/dev/null || { npx prettier --check . | tail -20; exit 1; }
echo "== tests";     npx vitest run "$@"
