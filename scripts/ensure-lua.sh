#!/usr/bin/env bash
# Makes sure lua5.4 is installed (Debian package): test/chart/argocd-health.test.ts runs the
# Argo CD health check of docs/argocd.md with it. Idempotent: returns at once when present.
set -euo pipefail

command -v lua5.4 >/dev/null 2>&1 && exit 0

SUDO=()
if [ "$(id -u)" -ne 0 ]; then SUDO=(sudo -n); fi
APT=("${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300)

if ! "${APT[@]}" install -y --no-install-recommends lua5.4; then
  # Fresh images often ship without package lists.
  "${APT[@]}" update
  "${APT[@]}" install -y --no-install-recommends lua5.4
fi

command -v lua5.4 >/dev/null 2>&1 || { echo "lua5.4 still missing after install" >&2; exit 1; }
