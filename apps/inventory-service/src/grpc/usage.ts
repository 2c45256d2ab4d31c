// Which calling service uses which RPC and which request fields, recorded into the usage store
// the gateway records into (libs/usage: Redis with REDIS_URL, else DATA_DIR/usage), as
// `proto:inventory.v1.Inventory.Reserve` and `proto:inventory.v1.ReserveRequest.sku`. A server
// interceptor, so no method can forget it. A field counts as used when a request carries it with
// a value other than its default (proto3 has no presence for scalars: a default is not sent).
// Fields of nested messages count too, at any depth and in every item of a repeated field, each
// named by its own message as the registry and the gate name it
// (`proto:<package>.<Message>.<field>`), as the gateway records a REST body's nested fields.
// The caller is named as the access log names it (caller.ts): the service token's subject once
// the handler verified it, else the client by its User-Agent; a call refused for its credentials
// is not recorded.
import { type Metadata, ServerInterceptingCall, type ServerInterceptor, status } from '@grpc/grpc-js';
import { fromBinary } from '@bufbuild/protobuf';
import { type DescriptorProto, type FileDescriptorProto, FieldDescriptorProto_Type, FileDescriptorProtoSchema } from '@bufbuild/protobuf/wkt';
import { fileDescriptorProtos } from '@platform/inventory-contract';
import type { UsageRecorder } from '@platform/usage';
import { clientOf, verifiedCallerOf } from './caller';

/** One field of a message: the decoded object's key, its element, and a message-typed field's own fields. */
export interface FieldUsage {
  key: string;
  element: string;
  /** The fields of the message this field holds (not a map: its keys are data, not contract). Shared between fields of one type, so a recursive message is a cycle, not an endless tree. */
  fields?: FieldUsage[];
}

export interface MethodUsage {
  element: string;
  /** The request message's fields. */
  fields: FieldUsage[];
}

/** The contract's files, decoded once. */
const contractFiles = () => fileDescriptorProtos().map((bytes) => fromBinary(FileDescriptorProtoSchema, bytes));

/** Each Inventory method's path (`/inventory.v1.Inventory/Reserve`) → what it records; `files` are the contract's by default. */
export function methodUsageOf(files: FileDescriptorProto[] = contractFiles()): Map<string, MethodUsage> {
  // Every message (nested ones too) by full name, its fields filled in once all are known.
  const messages = new Map<string, { descriptor: DescriptorProto; fields: FieldUsage[] }>();
  const collect = (scope: string, descriptors: DescriptorProto[]) => {
    for (const descriptor of descriptors) {
      const name = `${scope}.${descriptor.name}`;
      messages.set(name, { descriptor, fields: [] });
      collect(name, descriptor.nestedType);
    }
  };
  for (const file of files) collect(file.package, file.messageType);
  for (const [name, { descriptor, fields }] of messages) {
    for (const field of descriptor.field) {
      const held = field.type === FieldDescriptorProto_Type.MESSAGE ? messages.get(field.typeName.replace(/^\./, '')) : undefined;
      const nested = held && !held.descriptor.options?.mapEntry ? held.fields : undefined;
      fields.push({ key: field.jsonName || field.name, element: `proto:${name}.${field.name}`, ...(nested ? { fields: nested } : {}) });
    }
  }
  const methods = new Map<string, MethodUsage>();
  for (const file of files) {
    if (!file.package.startsWith('inventory.')) continue;
    for (const service of file.service) {
      for (const method of service.method) {
        const full = `${file.package}.${service.name}`;
        methods.set(`/${full}/${method.name}`, { element: `proto:${full}.${method.name}`, fields: messages.get(method.inputType.replace(/^\./, ''))?.fields ?? [] });
      }
    }
  }
  return methods;
}

export const isDefault = (value: unknown) => value === undefined || value === null || value === '' || value === 0 || value === false || (Array.isArray(value) && value.length === 0);

/**
 * Calls `visit` for each field `message` carries with a value other than its default, with the
 * object that holds it, then for the fields of the messages it holds (each item of a repeated
 * one). Linear in the decoded message, which is finite whatever the types' recursion.
 */
export function visitFieldsSent(fields: readonly FieldUsage[], message: unknown, visit: (field: FieldUsage, holder: Record<string, unknown>) => void): void {
  if (!message || typeof message !== 'object') return;
  const holder = message as Record<string, unknown>;
  for (const field of fields) {
    const value = holder[field.key];
    if (isDefault(value)) continue;
    visit(field, holder);
    // Unless `visit` took the field out (a deprecated field in its brownout): then it holds nothing.
    if (field.fields && field.key in holder) for (const item of Array.isArray(value) ? value : [value]) visitFieldsSent(field.fields, item, visit);
  }
}

export function recordRpcUsage(recorder: UsageRecorder, methods: Map<string, MethodUsage> = methodUsageOf()): ServerInterceptor {
  return (descriptor, call) => {
    const method = methods.get(descriptor.path);
    if (!method) return new ServerInterceptingCall(call);
    let received: Metadata | undefined;
    const used = new Set<string>([method.element]);
    return new ServerInterceptingCall(call, {
      start(next) {
        next({
          onReceiveMetadata(metadata: Metadata, nextMetadata: (metadata: Metadata) => void) {
            received = metadata;
            nextMetadata(metadata);
          },
          onReceiveMessage(message: unknown, nextMessage: (message: unknown) => void) {
            visitFieldsSent(method.fields, message, (field) => used.add(field.element));
            nextMessage(message);
          },
        });
      },
      sendStatus(outcome, next) {
        const caller = received && verifiedCallerOf(received);
        if (received && caller && outcome.code !== status.UNAUTHENTICATED && outcome.code !== status.PERMISSION_DENIED) recorder.record({ caller, client: clientOf(received) }, [...used]);
        next(outcome);
      },
    });
  };
}
