#!/usr/bin/env bash
# Builds one image per app with buildah (no daemon): order-platform/<app>:<version>.
# Usage: tools/images/build-images.sh [app ...]   (default: all five)
# NODE_IMAGE=<image> picks the base; without registry access, an offline base is built first.
set -euo pipefail
cd "$(dirname "$0")/../.."
version=$(node -p "require('./package.json').version")
apps=("$@")
[ ${#apps[@]} -gt 0 ] || apps=(gateway users-service orders-service catalog-service inventory-service)
storage=(--storage-driver vfs)
if [ -z "${NODE_IMAGE:-}" ]; then
  if buildah "${storage[@]}" pull --quiet docker.io/library/node:22.23.3-bookworm-slim >/dev/null 2>&1; then
    NODE_IMAGE=docker.io/library/node:22.23.3-bookworm-slim
  else
    echo "No registry access: building the Node 22 base image locally."
    tools/images/build-base-image.sh 22.23.3
    NODE_IMAGE=localhost/node:22.23.3-bookworm-slim
  fi
fi
# Where TLS to the registry is intercepted, the host's CA bundle is lent to the build steps
# (mounted read-only, named by a build argument); no layer of the final image holds it.
ca_flags=()
if [ -n "${NODE_EXTRA_CA_CERTS:-}" ] && [ -f "$NODE_EXTRA_CA_CERTS" ]; then
  ca_flags=(--volume "$NODE_EXTRA_CA_CERTS:/run/build-ca.crt:ro" --build-arg NODE_EXTRA_CA_CERTS=/run/build-ca.crt)
fi
for app in "${apps[@]}"; do
  echo "== $app"
  buildah "${storage[@]}" bud --isolation chroot --layers=false --pull=never \
    --build-arg APP="$app" --build-arg NODE_IMAGE="$NODE_IMAGE" "${ca_flags[@]}" \
    -f deploy/docker/Dockerfile -t "order-platform/${app}:${version}" .
done
buildah "${storage[@]}" images | grep -E "order-platform|REPOSITORY"
