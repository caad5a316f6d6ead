#!/usr/bin/env bash
# Makes sure helm (pinned below) is built from the Go module proxy into a cache directory,
# for test/chart/helm.test.ts (`helm lint --strict`, `helm template`). Prints the binary's path.
# Cold: a few minutes on 2 busy cores, once per machine; warm: returns at once.
# GANTRY_HELM_HOME moves the cache (default ~/.cache/gantry-helm).
set -euo pipefail

VERSION=v3.22.0
HOME_DIR=${GANTRY_HELM_HOME:-$HOME/.cache/gantry-helm}
BIN="$HOME_DIR/bin/helm"
STAMP="$HOME_DIR/bin/.version"

if [ -x "$BIN" ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$VERSION" ]; then
  echo "$BIN"
  exit 0
fi

command -v go >/dev/null 2>&1 || { echo "ensure-helm: go is needed to build helm $VERSION" >&2; exit 1; }
mkdir -p "$HOME_DIR/bin"
echo "ensure-helm: building helm $VERSION (a few minutes, once)" >&2
# -mod=mod: helm's own go.mod is used as published; niced so parallel work keeps the cores.
GOFLAGS=-mod=mod GOBIN="$HOME_DIR/bin" nice -n 10 go install "helm.sh/helm/v3/cmd/helm@$VERSION" >&2
echo "$VERSION" > "$STAMP"
echo "$BIN"
