#!/usr/bin/env bash
# Makes sure redis-server is installed (Debian package), so CI can pay the install cost up
# front. The test harness (test/harness/redis.ts) does the same on its own when this did not run.
# Idempotent: returns at once when redis-server is already there.
set -euo pipefail

find_redis() {
  command -v redis-server 2>/dev/null && return 0
  for p in /usr/bin/redis-server /usr/local/bin/redis-server /usr/sbin/redis-server; do
    [ -x "$p" ] && { echo "$p"; return 0; }
  done
  return 1
}

if find_redis >/dev/null; then
  exit 0
fi

SUDO=()
if [ "$(id -u)" -ne 0 ]; then SUDO=(sudo -n); fi
APT=("${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300)

if ! "${APT[@]}" install -y --no-install-recommends redis-server; then
  # Fresh images often ship without package lists.
  "${APT[@]}" update
  "${APT[@]}" install -y --no-install-recommends redis-server
fi

find_redis >/dev/null || { echo "redis-server still missing after install" >&2; exit 1; }
