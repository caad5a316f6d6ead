#!/usr/bin/env bash
# `npm start`: install what a fresh checkout lacks, bundle the data plane, and serve
# ./gantry.yaml (or --config FILE). Without provider keys every deployment is answered by
# the built-in fake provider, so this works offline once the packages are installed.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d node_modules ] || npm ci --no-audit --no-fund
npm run build --silent
# Two malloc arenas instead of one per thread (V8's and libuv's workers): ~15 MB less RSS.
export MALLOC_ARENA_MAX="${MALLOC_ARENA_MAX:-2}"
exec node --enable-source-maps --max-semi-space-size=4 --no-allocation-site-pretenuring dataplane/dist/gantry.mjs "$@"
