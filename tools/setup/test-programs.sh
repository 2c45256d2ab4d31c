#!/usr/bin/env bash
# Installs the programs npm test's suites start or call, on Debian or Ubuntu, each only when it is
# missing; run as root (sudo). It starts none of their services: the suites run processes of their
# own on ports of their own, and a Debian package would otherwise start its system service on
# install. .ci/run calls it; on a development machine run it once before the first `npm test`.
#
#   PostgreSQL's initdb and pg_ctl  the fault suite's own PostgreSQL cluster, in a temp dir
#   redis-server                    the fault and Redis-hang suites' own Redis
#   nats-server                     the events, fault and cluster suites' own JetStream
#   haproxy                         the cluster suite's one door in front of two replicas
#   kubectl                         the deploy suite renders the kustomize overlays
#   chromium                        the browser test opens /docs and GraphiQL
#   promtool                        the deploy suite checks and unit-tests the alert rules
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

# The package that brings each program, when it is not on PATH (initdb lives outside PATH).
missing=()
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null || missing+=(postgresql)
command -v redis-server >/dev/null || missing+=(redis-server)
command -v nats-server >/dev/null || missing+=(nats-server)
command -v haproxy >/dev/null || missing+=(haproxy)
command -v kubectl >/dev/null || missing+=(kubernetes-client)
command -v chromium >/dev/null || missing+=(chromium)
command -v promtool >/dev/null || missing+=(prometheus)

if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  # Forbid service starts (policy-rc.d exit 101) while installing, unless the machine already has
  # a policy of its own, which is left as it was.
  own_policy=
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
    chmod +x /usr/sbin/policy-rc.d
    own_policy=1
  fi
  trap '[ -z "$own_policy" ] || rm -f /usr/sbin/policy-rc.d' EXIT
  apt-get update -qq
  # Chromium needs its recommended fonts and libraries; the servers need none of theirs.
  for package in "${missing[@]}"; do
    if [ "$package" = chromium ]; then apt-get install -y -qq chromium >/dev/null
    else apt-get install -y -qq --no-install-recommends "$package" >/dev/null; fi
  done
fi

# What each suite will find (sed reads to the end: head would close the pipe early, and pipefail
# would fail the run on the program's SIGPIPE).
echo "initdb: $( (ls /usr/lib/postgresql/*/bin/initdb 2>/dev/null || command -v initdb) | sed -n 1p)"
redis-server --version | sed -n 1p
nats-server --version | sed -n 1p
haproxy -v | sed -n 1p
timeout 60 kubectl version --client </dev/null 2>/dev/null | sed -n 1p || true
chromium --version 2>/dev/null | sed -n 1p || true
promtool --version 2>&1 | sed -n 1p
