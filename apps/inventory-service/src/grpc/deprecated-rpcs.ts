// The deprecation registry's RPC entries (`proto:inventory.v1.Inventory.Reserve`), enforced on the
// gRPC server as the gateway enforces REST and GraphQL ones: a call to a deprecated RPC gets the
// response metadata `deprecation`, `sunset` and `link` (the HTTP headers' values); in a brownout
// window, and from the sunset on, it is refused with UNIMPLEMENTED, what the caller will get once
// the RPC is removed, the details naming the replacement. Dry runs pass and are counted. Message
// fields (`proto:inventory.v1.ReserveRequest.sku`) are marked in the .proto only.
import { Metadata, ServerInterceptingCall, type ServerInterceptor, status } from '@grpc/grpc-js';
import { Counter, type Registry } from 'prom-client';
import { deprecationHeaders, type Deprecation, goneMessage, phaseAt } from '@platform/deprecations';
import type { Logger } from '@platform/service-kit';

/** `/inventory.v1.Inventory/Reserve` → its entry; compiled once when the server is made. */
function entriesByPath(entries: readonly Deprecation[]): Map<string, Deprecation> {
  const byPath = new Map<string, Deprecation>();
  for (const entry of entries) {
    const match = /^proto:(.+)\.([A-Za-z0-9_]+)\.([A-Za-z0-9_]+)$/.exec(entry.element);
    if (match) byPath.set(`/${match[1]}.${match[2]}/${match[3]}`, entry);
  }
  return byPath;
}

function metadataOf(entry: Deprecation): Metadata {
  const metadata = new Metadata();
  for (const [name, value] of Object.entries(deprecationHeaders([entry]))) metadata.set(name.toLowerCase(), value);
  return metadata;
}

export function deprecatedRpcs(entries: readonly Deprecation[], logger: Logger, registry: Registry): ServerInterceptor {
  const byPath = entriesByPath(entries);
  const calls = new Counter({
    name: 'grpc_deprecated_rpc_calls_total',
    help: 'Calls of a deprecated RPC, by element (one per registry entry) and outcome: warned, dry_run, brownout or sunset (refused UNIMPLEMENTED)',
    labelNames: ['element', 'outcome'],
    registers: [registry],
  });
  return (descriptor, call) => {
    const entry = byPath.get(descriptor.path);
    if (!entry) return new ServerInterceptingCall(call);
    const phase = phaseAt(entry);
    const outcome = phase === 'deprecated' ? 'warned' : phase === 'dry-run' ? 'dry_run' : phase;
    calls.inc({ element: entry.element, outcome });
    return new ServerInterceptingCall(call, {
      start(next) {
        next({
          onReceiveMetadata(metadata, nextMetadata) {
            if (outcome !== 'warned') {
              logger.warn(
                { deprecation: { element: entry.element, outcome, replacement: entry.replacement, sunset: entry.sunset }, caller: metadata.get('user-agent')[0]?.toString().split(' ')[0], grpcMethod: descriptor.path },
                outcome === 'dry_run' ? 'deprecated RPC called during a dry-run brownout: this call would have been refused' : `deprecated RPC refused (${outcome})`,
              );
            }
            if (phase === 'brownout' || phase === 'sunset') {
              call.sendStatus({ code: status.UNIMPLEMENTED, details: goneMessage(entry, phase), metadata: metadataOf(entry) });
              return;
            }
            nextMetadata(metadata);
          },
        });
      },
      sendMetadata(metadata, next) {
        metadata.merge(metadataOf(entry));
        next(metadata);
      },
    });
  };
}
