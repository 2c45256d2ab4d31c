// Which calling service uses which RPC and which request fields, recorded into the usage store
// the gateway records into (libs/usage: Redis with REDIS_URL, else DATA_DIR/usage), as
// `proto:inventory.v1.Inventory.Reserve` and `proto:inventory.v1.ReserveRequest.sku`. A server
// interceptor, so no method can forget it. A field counts as used when a request carries it with
// a value other than its default (proto3 has no presence for scalars: a default is not sent).
// The caller is the service token's subject, recorded only once the call was not refused for
// its credentials: the handler verified that same token.
import { type Metadata, ServerInterceptingCall, type ServerInterceptor, status } from '@grpc/grpc-js';
import { fromBinary } from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema } from '@bufbuild/protobuf/wkt';
import { fileDescriptorProtos } from '@platform/inventory-contract';
import type { UsageRecorder } from '@platform/usage';

interface MethodUsage {
  element: string;
  /** The request message's fields: the decoded object's key → the element. */
  fields: [string, string][];
}

/** Each Inventory method's path (`/inventory.v1.Inventory/Reserve`) → what it records. */
export function methodUsageOf(): Map<string, MethodUsage> {
  const files = fileDescriptorProtos().map((bytes) => fromBinary(FileDescriptorProtoSchema, bytes));
  const messages = new Map<string, [string, string][]>();
  for (const file of files) {
    for (const message of file.messageType) {
      const name = `${file.package}.${message.name}`;
      messages.set(name, message.field.map((field) => [field.jsonName || field.name, `proto:${name}.${field.name}`]));
    }
  }
  const methods = new Map<string, MethodUsage>();
  for (const file of files) {
    if (!file.package.startsWith('inventory.')) continue;
    for (const service of file.service) {
      for (const method of service.method) {
        const full = `${file.package}.${service.name}`;
        methods.set(`/${full}/${method.name}`, { element: `proto:${full}.${method.name}`, fields: messages.get(method.inputType.replace(/^\./, '')) ?? [] });
      }
    }
  }
  return methods;
}

export const isDefault = (value: unknown) => value === undefined || value === null || value === '' || value === 0 || value === false || (Array.isArray(value) && value.length === 0);

/** The service token's subject, read without checking: it is recorded only after the handler verified the token. */
function subjectOf(authorization: string | undefined): string | undefined {
  const payload = authorization?.replace(/^Bearer\s+/i, '').split('.')[1];
  if (!payload) return undefined;
  try {
    const subject = (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { sub?: unknown }).sub;
    return typeof subject === 'string' && /^[\w.-]{1,64}$/.test(subject) ? subject : undefined;
  } catch {
    return undefined;
  }
}

export function recordRpcUsage(recorder: UsageRecorder): ServerInterceptor {
  const methods = methodUsageOf();
  return (descriptor, call) => {
    const method = methods.get(descriptor.path);
    if (!method) return new ServerInterceptingCall(call);
    let caller: string | undefined;
    let client = 'unknown';
    const used = new Set<string>([method.element]);
    return new ServerInterceptingCall(call, {
      start(next) {
        next({
          onReceiveMetadata(metadata: Metadata, nextMetadata: (metadata: Metadata) => void) {
            caller = subjectOf(metadata.get('authorization')[0]?.toString());
            const agent = /^([A-Za-z][\w.-]{0,39})\/(\d{1,6}(?:\.\d{1,6}){0,3})/.exec(metadata.get('user-agent')[0]?.toString() ?? '');
            if (agent) client = `${agent[1]}/${agent[2]}`;
            nextMetadata(metadata);
          },
          onReceiveMessage(message: unknown, nextMessage: (message: unknown) => void) {
            const request = message as Record<string, unknown> | null;
            if (request && typeof request === 'object') for (const [key, element] of method.fields) if (!isDefault(request[key])) used.add(element);
            nextMessage(message);
          },
        });
      },
      sendStatus(outcome, next) {
        if (caller && outcome.code !== status.UNAUTHENTICATED && outcome.code !== status.PERMISSION_DENIED) recorder.record({ caller: `service:${caller}`, client }, [...used]);
        next(outcome);
      },
    });
  };
}
