#!/usr/bin/env bash
# Fails when proto/ makes a wire-breaking change (renumbered, retyped or reused field, removed
# RPC...) against its last committed version before HEAD. Offline: buf reads git history.
# Usage: tools/proto/check-breaking.sh [git-ref]   (default: the last commit before HEAD that touched proto/)
# PROTO_REPO=<dir> checks another checkout (the test of this script uses it).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "${PROTO_REPO:-$root}"
against=${1:-$(git rev-list -n 1 HEAD~1 -- proto 2>/dev/null || true)}
if [ -z "$against" ]; then
  echo "proto: no earlier committed version to compare with"
  exit 0
fi
"$root/node_modules/.bin/buf" breaking proto --against ".git#ref=${against},subdir=proto"
echo "proto: no breaking change against ${against:0:12}"
