#!/usr/bin/env bash
# Fails when a service's schema.prisma and its committed migrations disagree (a migration was
# not written). Runs Prisma's own `migrate diff --exit-code` through the offline engine.
set -uo pipefail
cd "$(dirname "$0")/../.."
# The engine only needs a server to create its shadow database on.
export DATABASE_URL=${DATABASE_URL:-postgresql://postgres@127.0.0.1:5432/postgres}
status=0
for schema in apps/*/prisma/schema.prisma; do
  app=$(dirname "$(dirname "$schema")")
  for attempt in 1 2; do
    npx prisma migrate diff --config "$app/prisma.config.ts" \
      --from-migrations "$app/prisma/migrations" --to-schema "$schema" --exit-code >/tmp/drift.$$ 2>&1
    code=$?
    # 2 is drift (final); 1 is an engine or connection error, worth one more try.
    [ $code -eq 1 ] && [ $attempt -eq 1 ] && { echo "drift: $(basename "$app") engine error, retrying once"; continue; }
    break
  done
  if [ $code -eq 0 ]; then echo "drift: $(basename "$app") migrations match schema.prisma"
  else echo "drift: $(basename "$app") FAILED (exit $code):"; grep -v nodedir /tmp/drift.$$; status=1; fi
done
rm -f /tmp/drift.$$
exit $status
