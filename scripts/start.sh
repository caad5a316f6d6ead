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
# Old space grows by 20 % past the live set before a full GC instead of up to 4x: short-lived
# request objects promoted out of the 4 MB semi-spaces no longer pile up (RSS after load 272 -> 145 MB).
exec node --enable-source-maps --max-semi-space-size=4 --heap-growing-percent=20 dataplane/dist/gantry.mjs "$@"
