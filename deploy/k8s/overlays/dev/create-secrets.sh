#!/usr/bin/env bash
# Creates the Secrets the dev overlay reads, with fresh random values (nothing secret is in git).
# Run once per cluster before `kubectl apply -k deploy/k8s/overlays/dev`.
set -euo pipefail
ns=order-platform
kubectl get namespace "$ns" >/dev/null 2>&1 || kubectl create namespace "$ns"
kubectl label namespace "$ns" pod-security.kubernetes.io/enforce=restricted --overwrite >/dev/null
password=$(head -c 24 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
apply() { kubectl -n "$ns" create secret generic "$@" --dry-run=client -o yaml | kubectl apply -f - >/dev/null; }
apply dev-postgres --from-literal=password="$password"
apply platform-jwt --from-literal=secret="$(head -c 48 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')"
apply platform-redis --from-literal=url=redis://redis:6379
apply platform-api-keys --from-literal=secret="$(head -c 48 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')"
apply platform-admin --from-literal=email=admin@example.com --from-literal=password="$(head -c 18 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')"
for service in users orders catalog inventory; do
  apply "${service}-service-database" --from-literal=url="postgresql://postgres:${password}@postgres:5432/${service}"
done
echo "Secrets created in $ns. Admin password: kubectl -n $ns get secret platform-admin -o jsonpath='{.data.password}' | base64 -d"
