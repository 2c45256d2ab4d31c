// Development only: prints a service token that an internal caller allowed by INVENTORY_CALLERS
// presents to Inventory's gRPC door (docs/grpc.md). It is signed as a service signs its own: HS256
// with JWT_SECRET (or the public development secret when unset, as the apps do), audience
// order-platform-internal, role `service`, subject the caller's name, five minutes to live.
// Refused with NODE_ENV=production: there, services mint their own tokens from the JWT_SECRET
// Secret and nobody should hold one by hand.
// Usage: npm run service-token [-- <caller>]     (caller: orders-service unless given)
import { serviceTokenSource } from '@platform/auth';
import { ConfigError } from '@platform/service-kit';
// Inventory's own settings loader, so the allowed callers are read exactly as inventory reads them.
import { loadInventoryConfig } from '../../apps/inventory-service/src/config'; // eslint-disable-line @nx/enforce-module-boundaries

async function main(): Promise<number> {
  const caller = process.argv[2] ?? 'orders-service';
  if (process.env.NODE_ENV === 'production') {
    process.stderr.write('service-token: refused with NODE_ENV=production. In a cluster each service signs its own service tokens with JWT_SECRET; see docs/grpc.md.\n');
    return 1;
  }
  let config: ReturnType<typeof loadInventoryConfig>;
  try {
    config = loadInventoryConfig();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`service-token: ${error.message}\n`);
    return 1;
  }
  if (!config.INVENTORY_CALLERS.includes(caller)) {
    process.stderr.write(`service-token: ${caller} is not in INVENTORY_CALLERS (${config.INVENTORY_CALLERS.join(', ')}); inventory would answer PERMISSION_DENIED.\n`);
    return 1;
  }
  for (const warning of config.warnings) process.stderr.write(`service-token: ${warning}\n`);
  process.stdout.write(`${await serviceTokenSource(config.jwtSecret, caller)()}\n`);
  return 0;
}

main().then((code) => (process.exitCode = code));
