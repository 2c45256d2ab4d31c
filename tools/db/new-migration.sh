#!/usr/bin/env bash
# Writes the SQL that takes a service's committed migrations to its current schema.prisma as a
# new migration folder. Usage: tools/db/new-migration.sh <service> <name>
# Needs a PostgreSQL server for the engine's shadow database (DATABASE_URL, default local).
set -euo pipefail
service=${1:?service, e.g. users-service}; name=${2:?migration name, e.g. add_orders}
cd "$(dirname "$0")/../.."
# The engine only needs a server to create its shadow database on.
export DATABASE_URL=${DATABASE_URL:-postgresql://postgres@127.0.0.1:5432/postgres}
app=apps/$service
dir="$app/prisma/migrations/$(date -u +%Y%m%d%H%M%S)_$name"
mkdir -p "$app/prisma/migrations"
[ -f "$app/prisma/migrations/migration_lock.toml" ] || printf '# Do not edit: Prisma reads this.\nprovider = "postgresql"\n' > "$app/prisma/migrations/migration_lock.toml"
sql=$(npx prisma migrate diff --config "$app/prisma.config.ts" \
  --from-migrations "$app/prisma/migrations" --to-schema "$app/prisma/schema.prisma" --script 2>/tmp/new-migration.err) || { cat /tmp/new-migration.err; exit 1; }
if ! grep -qvE '^\s*(--.*)?$' <<<"$sql"; then echo "No schema change in $service."; exit 0; fi
mkdir -p "$dir"
printf '%s\n' "$sql" > "$dir/migration.sql"
echo "Wrote $dir/migration.sql"
