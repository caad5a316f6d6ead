#!/usr/bin/env bash
# Builds the test kube-apiserver, etcd and kube-controller-manager with the shared script
# (shared/k8s/kube-apiserver.sh, beside the repository) so the operator's end-to-end suite
# finds them. Cold: ~15-20 min on 2 cores, once per machine; warm (Go caches): seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
script=${GANTRY_KUBE_SCRIPT:-}
if [ -z "$script" ]; then
  dir=$(pwd)
  while [ "$dir" != / ]; do
    [ -f "$dir/shared/k8s/kube-apiserver.sh" ] && { script="$dir/shared/k8s/kube-apiserver.sh"; break; }
    dir=$(dirname "$dir")
  done
fi
[ -n "$script" ] || { echo "shared/k8s/kube-apiserver.sh not found above $(pwd)" >&2; exit 1; }
bash "$script" build
