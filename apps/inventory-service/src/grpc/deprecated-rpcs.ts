// The deprecation registry's RPC entries (`proto:inventory.v1.Inventory.Reserve`), enforced on the
// gRPC server as the gateway enforces REST and GraphQL ones: a call to a deprecated RPC gets the
// response metadata `deprecation`, `sunset` and `link` (the HTTP headers' values); in a brownout
// window, and from the sunset on, it is refused with UNIMPLEMENTED, what the caller will get once
// the RPC is removed, the details naming the replacement. Dry runs pass and are counted. A request
// carrying a deprecated message field (`proto:inventory.v1.AdjustStockRequest.reason`, a value
// other than its default) gets the same metadata; in a brownout and from the sunset on the field is
// cleared before the handler sees it, what a server without the field does with it (an unknown
// field is skipped), and the call goes on.
import { Metadata, ServerInterceptingCall, type ServerInterceptor, status } from '@grpc/grpc-js';
import { Counter, type Registry } from 'prom-client';
import { deprecationHeaders, type Deprecation, goneMessage, phaseAt } from '@platform/deprecations';
import type { Logger } from '@platform/service-kit';
import { claimedCallerOf } from './caller';
import { type FieldUsage, methodUsageOf, visitFieldsSent } from './usage';

/** `/inventory.v1.Inventory/Reserve` → its entry; compiled once when the server is made. */
function entriesByPath(entries: readonly Deprecation[]): Map<string, Deprecation> {
  const byPath = new Map<string, Deprecation>();
  for (const entry of entries) {
    const match = /^proto:(.+)\.([A-Za-z0-9_]+)\.([A-Za-z0-9_]+)$/.exec(entry.element);
    if (match) byPath.set(`/${match[1]}.${match[2]}/${match[3]}`, entry);
  }
  return byPath;
}

/** Each method's path → its request's fields and the deprecated ones it can carry, at any depth (element → entry). */
function fieldEntriesByPath(entries: readonly Deprecation[]): Map<string, { fields: FieldUsage[]; deprecated: Map<string, Deprecation> }> {
  const byElement = new Map(entries.map((entry) => [entry.element, entry]));
  const byPath = new Map<string, { fields: FieldUsage[]; deprecated: Map<string, Deprecation> }>();
  for (const [path, method] of methodUsageOf()) {
    const deprecated = new Map<string, Deprecation>();
    const seen = new Set<FieldUsage[]>();
    const collect = (fields: FieldUsage[]) => {
      if (seen.has(fields)) return; // a message that holds itself
      seen.add(fields);
      for (const field of fields) {
        const entry = byElement.get(field.element);
        if (entry) deprecated.set(field.element, entry);
        if (field.fields) collect(field.fields);
      }
    };
    collect(method.fields);
    if (deprecated.size > 0) byPath.set(path, { fields: method.fields, deprecated });
  }
  return byPath;
}

function metadataOf(...entries: Deprecation[]): Metadata {
  const metadata = new Metadata();
  for (const [name, value] of Object.entries(deprecationHeaders(entries))) metadata.set(name.toLowerCase(), value);
  return metadata;
}

const outcomeOf = (entry: Deprecation) => {
  const phase = phaseAt(entry);
  return { phase, outcome: phase === 'deprecated' ? 'warned' : phase === 'dry-run' ? 'dry_run' : phase };
};

export function deprecatedRpcs(entries: readonly Deprecation[], logger: Logger, registry: Registry): ServerInterceptor {
  const byPath = entriesByPath(entries);
  const calls = new Counter({
    name: 'grpc_deprecated_rpc_calls_total',
    help: 'Calls of a deprecated RPC, by element (one per registry entry) and outcome: warned, dry_run, brownout or sunset (refused UNIMPLEMENTED)',
    labelNames: ['element', 'outcome'],
    registers: [registry],
  });
  const fieldsByPath = fieldEntriesByPath(entries);
  return (descriptor, call) => {
    const entry = byPath.get(descriptor.path);
    const fields = fieldsByPath.get(descriptor.path);
    if (!entry && fields) return deprecatedFields(call, descriptor.path, fields);
    if (!entry) return new ServerInterceptingCall(call);
    const { phase, outcome } = outcomeOf(entry);
    calls.inc({ element: entry.element, outcome });
    return new ServerInterceptingCall(call, {
      start(next) {
        next({
          onReceiveMetadata(metadata, nextMetadata) {
            if (outcome !== 'warned') {
              logger.warn(
                { deprecation: { element: entry.element, outcome, replacement: entry.replacement, sunset: entry.sunset }, ...claimedCallerOf(metadata), grpcMethod: descriptor.path },
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

  /** A call of a method whose request has deprecated fields: the metadata when it carries one, the field cleared in a brownout or past the sunset. */
  function deprecatedFields(call: Parameters<ServerInterceptor>[1], grpcMethod: string, { fields, deprecated }: { fields: FieldUsage[]; deprecated: Map<string, Deprecation> }) {
    const used: Deprecation[] = [];
    let caller: { caller: string; client: string } | undefined;
    return new ServerInterceptingCall(call, {
      start(next) {
        next({
          onReceiveMetadata(metadata, nextMetadata) {
            caller = claimedCallerOf(metadata);
            nextMetadata(metadata);
          },
          onReceiveMessage(message: unknown, nextMessage: (message: unknown) => void) {
            // Each entry counted and logged once per message, however many items of a repeated field carry it.
            const seen = new Set<Deprecation>();
            visitFieldsSent(fields, message, (field, holder) => {
              const entry = deprecated.get(field.element);
              if (!entry) return;
              const { phase, outcome } = outcomeOf(entry);
              if (phase === 'brownout' || phase === 'sunset') delete holder[field.key];
              if (seen.has(entry)) return;
              seen.add(entry);
              calls.inc({ element: entry.element, outcome });
              if (!used.includes(entry)) used.push(entry);
              if (outcome === 'warned') return;
              logger.warn(
                { deprecation: { element: entry.element, outcome, replacement: entry.replacement, sunset: entry.sunset }, ...caller, grpcMethod },
                outcome === 'dry_run' ? 'deprecated field sent during a dry-run brownout: it would have been left out' : `deprecated field left out (${outcome})`,
              );
            });
            nextMessage(message);
          },
        });
      },
      sendMetadata(metadata, next) {
        if (used.length > 0) metadata.merge(metadataOf(...used));
        next(metadata);
      },
    });
  }
}
