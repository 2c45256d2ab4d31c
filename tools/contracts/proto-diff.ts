// Proto: `buf breaking` (the WIRE_JSON rules of the released baseline's buf.yaml) judges wire and JSON
// compatibility; an element-by-element comparison of the two buf images adds what buf's wire
// rules let through but the specification does not (a removed RPC, message or enum, a removed
// field even when its number is reserved) and the safe and dangerous changes buf does not list.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { change, specRule, type ContractChange } from './changes';

const buf = path.resolve(__dirname, '../../node_modules/.bin/buf');

/** `deprecated = true` in the .proto, as buf's image carries it. */
interface Options { options?: { deprecated?: boolean } }
interface FieldDescriptor extends Options { name: string; number: number; label?: string; type?: string; typeName?: string; proto3Optional?: boolean }
/** `reserved 2, 9 to 11;` as ranges, `end` exclusive; `reserved "item_id";` as names. */
interface MessageDescriptor extends Options { name: string; field?: FieldDescriptor[]; nestedType?: MessageDescriptor[]; enumType?: EnumDescriptor[]; reservedRange?: { start: number; end: number }[]; reservedName?: string[] }
/** `reserved 2, 9 to 11;` in an enum: ranges with `end` inclusive, unlike a message's. */
interface EnumDescriptor extends Options { name: string; value?: ({ name: string; number: number } & Options)[]; reservedRange?: { start: number; end: number }[]; reservedName?: string[] }
interface MethodDescriptor extends Options { name: string; inputType: string; outputType: string; clientStreaming?: boolean; serverStreaming?: boolean }
interface FileDescriptor {
  name: string;
  package?: string;
  messageType?: MessageDescriptor[];
  enumType?: EnumDescriptor[];
  service?: ({ name: string; method?: MethodDescriptor[] } & Options)[];
  sourceCodeInfo?: { location?: { path?: number[]; leadingComments?: string; trailingComments?: string }[] };
}

type ElementKind = 'message' | 'field' | 'enum' | 'enum-value' | 'service' | 'rpc';
interface Element {
  kind: ElementKind;
  name: string;
  pkg: string;
  /** The .proto declaring it, relative to the module (buf.yaml's directory). */
  file: string;
  comment: string;
  field?: FieldDescriptor;
  method?: MethodDescriptor;
  parent?: string;
  /** A message's reserved field numbers or an enum's reserved value numbers (ranges, `end` exclusive), and names. */
  reserved?: { ranges: { start: number; end: number }[]; names: string[] };
  /** Marked `[deprecated = true]` (a field, enum value) or `option deprecated = true;` (a message, enum, service, RPC). */
  deprecated?: boolean;
}

/** Everything a proto module declares, by fully qualified name. */
export interface ProtoModel {
  elements: Map<string, Element>;
  packages: Set<string>;
  /** Enums a client reads: reachable from some RPC's reply. */
  enumsRead: Set<string>;
  /** Messages a client reads: some RPC's reply, and the messages its fields hold. */
  messagesRead: Set<string>;
}

/** Every file of `dir` and below, by relative path and content (a module's identity for buf). */
function contentsOf(dir: string): string {
  const hash = createHash('sha256');
  const files = readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)))
    .sort();
  for (const file of files) hash.update(`${file}\0`).update(readFileSync(path.join(dir, file))).update('\0');
  return hash.digest('hex');
}

/**
 * The images built so far, by the module's contents: a gate run builds the baseline and the
 * current module, and a process that runs it again (its tests run it sixty times) mostly on the
 * same two, each `buf build` 0.3 to 0.5 s.
 */
const images = new Map<string, string>();

/** Builds the module in `dir` (a directory with buf.yaml) into a descriptor set, comments included, as buf's JSON. */
function imageJson(dir: string): string {
  const contents = contentsOf(dir);
  let out = images.get(contents);
  if (out === undefined) {
    out = execFileSync(buf, ['build', dir, '-o', '-#format=json'], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    images.set(contents, out);
  }
  return out;
}

function image(dir: string): { file: FileDescriptor[] } {
  return JSON.parse(imageJson(dir)) as { file: FileDescriptor[] };
}

function modelOf(files: FileDescriptor[]): ProtoModel {
  const elements = new Map<string, Element>();
  const packages = new Set<string>();
  for (const file of files) {
    const pkg = file.package ?? '';
    packages.add(pkg);
    const comments = new Map<string, string>();
    for (const location of file.sourceCodeInfo?.location ?? []) {
      const text = `${location.leadingComments ?? ''}${location.trailingComments ?? ''}`.trim();
      if (text) comments.set((location.path ?? []).join('.'), text.replace(/\s+/g, ' '));
    }
    const addEnum = (enumType: EnumDescriptor, qualified: string, at: string, parent?: string): void => {
      const reserved = { ranges: (enumType.reservedRange ?? []).map((range) => ({ start: range.start, end: range.end + 1 })), names: enumType.reservedName ?? [] };
      elements.set(qualified, { kind: 'enum', name: qualified, pkg, file: file.name, comment: comments.get(at) ?? '', parent, reserved, deprecated: enumType.options?.deprecated === true });
      (enumType.value ?? []).forEach((value, index) => {
        elements.set(`${qualified}.${value.name}`, { kind: 'enum-value', name: `${qualified}.${value.name}`, pkg, file: file.name, comment: comments.get(`${at}.2.${index}`) ?? '', field: { name: value.name, number: value.number }, parent: qualified, deprecated: value.options?.deprecated === true });
      });
    };
    const addMessage = (message: MessageDescriptor, qualified: string, at: string, parent?: string): void => {
      const reserved = { ranges: message.reservedRange ?? [], names: message.reservedName ?? [] };
      elements.set(qualified, { kind: 'message', name: qualified, pkg, file: file.name, comment: comments.get(at) ?? '', parent, reserved, deprecated: message.options?.deprecated === true });
      (message.field ?? []).forEach((field, index) => {
        elements.set(`${qualified}.${field.name}`, { kind: 'field', name: `${qualified}.${field.name}`, pkg, file: file.name, comment: comments.get(`${at}.2.${index}`) ?? '', field, parent: qualified, deprecated: field.options?.deprecated === true });
      });
      (message.nestedType ?? []).forEach((nested, index) => addMessage(nested, `${qualified}.${nested.name}`, `${at}.3.${index}`, qualified));
      (message.enumType ?? []).forEach((nested, index) => addEnum(nested, `${qualified}.${nested.name}`, `${at}.4.${index}`, qualified));
    };
    const prefix = pkg ? `${pkg}.` : '';
    (file.messageType ?? []).forEach((message, index) => addMessage(message, `${prefix}${message.name}`, `4.${index}`));
    (file.enumType ?? []).forEach((enumType, index) => addEnum(enumType, `${prefix}${enumType.name}`, `5.${index}`));
    (file.service ?? []).forEach((service, index) => {
      const qualified = `${prefix}${service.name}`;
      elements.set(qualified, { kind: 'service', name: qualified, pkg, file: file.name, comment: comments.get(`6.${index}`) ?? '', deprecated: service.options?.deprecated === true });
      (service.method ?? []).forEach((method, methodIndex) => {
        elements.set(`${qualified}.${method.name}`, { kind: 'rpc', name: `${qualified}.${method.name}`, pkg, file: file.name, comment: comments.get(`6.${index}.2.${methodIndex}`) ?? '', method, parent: qualified, deprecated: method.options?.deprecated === true });
      });
    });
  }
  // Walk from every reply type through message fields to the enums a client may receive.
  const enumsRead = new Set<string>();
  const visited = new Set<string>();
  const pending = [...elements.values()].flatMap((element) => (element.method ? [element.method.outputType.replace(/^\./, '')] : []));
  for (let name = pending.pop(); name !== undefined; name = pending.pop()) {
    if (visited.has(name)) continue;
    visited.add(name);
    for (const element of elements.values()) {
      if (element.kind !== 'field' || element.parent !== name || !element.field?.typeName) continue;
      const target = element.field.typeName.replace(/^\./, '');
      if (element.field.type === 'TYPE_ENUM') enumsRead.add(target);
      else pending.push(target);
    }
  }
  return { elements, packages, enumsRead, messagesRead: visited };
}

export function protoModel(dir: string): ProtoModel {
  return modelOf(image(dir).file);
}

const scalarNumbers = new Set(['TYPE_INT32', 'TYPE_INT64', 'TYPE_UINT32', 'TYPE_UINT64', 'TYPE_SINT32', 'TYPE_SINT64', 'TYPE_FIXED32', 'TYPE_FIXED64', 'TYPE_SFIXED32', 'TYPE_SFIXED64', 'TYPE_DOUBLE', 'TYPE_FLOAT']);

/**
 * Varint types and the wider ones that read every value of each the same on the wire, and take a
 * JSON number for it (proto3 JSON parsers accept an int64 as a number or a string): a field of a
 * message only clients send may take the wider type. A reply's may not: JSON writes int64 as a
 * string, which an old client's int32 does not parse.
 */
const WIDER_VARINTS: Readonly<Record<string, readonly string[]>> = { TYPE_INT32: ['TYPE_INT64'], TYPE_UINT32: ['TYPE_UINT64', 'TYPE_INT64'], TYPE_SINT32: ['TYPE_SINT64'] };

function typeLabel(field: FieldDescriptor): string {
  return `${field.label === 'LABEL_REPEATED' ? 'repeated ' : ''}${field.typeName ?? (field.type ?? '').replace(/^TYPE_/, '').toLowerCase()}`;
}

/**
 * For a field removed from a message that stays, or a value from an enum that stays: what of its
 * number and name the message or enum does not reserve, as the gate asks for it (`... reserve 3
 * and "reason" in inventory.v1.AdjustStockRequest (reserved 3; reserved "reason";)`). Unreserved,
 * a later release may give the number another meaning: an old caller still sending the field (or
 * the value) then sends something the server misreads, and a JSON name may come back meaning
 * something else.
 */
function unreservedOf(removed: Element, after: ProtoModel): string | undefined {
  const holder = after.elements.get(removed.parent ?? '');
  if (!holder?.reserved || !removed.field) return undefined;
  const { number, name } = removed.field;
  // Renamed: the number stays in use under the new name, and reserving a number a member holds
  // does not compile, so only the old name is asked for.
  const numberHeld = [...after.elements.values()].some((other) => other.kind === removed.kind && other.parent === holder.name && other.field?.number === number);
  const numberReserved = numberHeld || holder.reserved.ranges.some((range) => range.start <= number && number < range.end);
  const nameReserved = holder.reserved.names.includes(name);
  if (numberReserved && nameReserved) return undefined;
  const missing = [...(numberReserved ? [] : [{ said: String(number), line: `reserved ${number};` }]), ...(nameReserved ? [] : [{ said: JSON.stringify(name), line: `reserved ${JSON.stringify(name)};` }])];
  const what = removed.kind === 'enum-value' ? 'enum value' : 'field';
  return `a removed ${what}'s number and name stay reserved: reserve ${missing.map((item) => item.said).join(' and ')} in ${holder.name} (${missing.map((item) => item.line).join(' ')})`;
}

interface BufFinding { path: string; start_line: number; type: string; message: string }

/** buf names elements by their short names; find the qualified element it means (as it was before). */
function elementOfFinding(finding: BufFinding, before: ProtoModel, after: ProtoModel, moduleDir: string): string {
  const bySimpleName = (model: ProtoModel, kind: ElementKind, simple: string): Element | undefined =>
    [...model.elements.values()].find((element) => element.kind === kind && element.name.split('.').pop() === simple);
  const field = /[Ff]ield "(\d+)"(?: with name "[^"]+")? on message "([^"]+)"/.exec(finding.message);
  if (field) {
    for (const model of [before, after]) {
      const message = bySimpleName(model, 'message', field[2]);
      const member = message && [...model.elements.values()].find((element) => element.kind === 'field' && element.parent === message.name && element.field?.number === Number(field[1]));
      if (member) return `proto:${member.name}`;
    }
  }
  const rpc = /RPC "([^"]+)" on service "([^"]+)"/.exec(finding.message);
  if (rpc) {
    const service = bySimpleName(before, 'service', rpc[2]) ?? bySimpleName(after, 'service', rpc[2]);
    if (service) return `proto:${service.name}.${rpc[1]}`;
  }
  const value = /[Ee]num value "(\d+)"(?: with name "[^"]+")? on enum "([^"]+)"/.exec(finding.message);
  if (value) {
    for (const model of [before, after]) {
      const enumType = bySimpleName(model, 'enum', value[2]);
      const member = enumType && [...model.elements.values()].find((element) => element.kind === 'enum-value' && element.parent === enumType.name && element.field?.number === Number(value[1]));
      if (member) return `proto:${member.name}`;
    }
  }
  // Reserved ranges and names, oneofs: the message or enum they belong to.
  const owner = /on (message|enum) "([^"]+)"/.exec(finding.message);
  if (owner) {
    const found = bySimpleName(before, owner[1] as ElementKind, owner[2]) ?? bySimpleName(after, owner[1] as ElementKind, owner[2]);
    if (found) return `proto:${found.name}`;
  }
  // File-level findings (a changed package or option): the file, relative to its module.
  return `proto:${path.relative(moduleDir, path.resolve(finding.path))}`;
}

/**
 * buf's findings, by the breaking rules of the released baseline's buf.yaml, not the change's own:
 * a change cannot loosen the rules it is judged by (an `except:` added beside a json_name change
 * would pass it). New rules take effect once released, as every contract does.
 */
function bufBreaking(afterDir: string, beforeDir: string): BufFinding[] {
  const config = path.join(beforeDir, 'buf.yaml');
  try {
    execFileSync(buf, ['breaking', afterDir, '--against', beforeDir, ...(existsSync(config) ? ['--config', config] : []), '--error-format', 'json'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    return [];
  } catch (error) {
    const stdout = (error as { stdout?: string }).stdout ?? '';
    const findings = stdout.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as BufFinding);
    if (findings.length === 0) throw new Error(`buf breaking failed: ${(error as { stderr?: string }).stderr ?? error}`);
    return findings;
  }
}

/** Every change from the module in `beforeDir` to the one in `afterDir`, classified. */
export function diffProto(beforeDir: string, afterDir: string): ContractChange[] {
  return compareProto(beforeDir, afterDir).changes;
}

/** The changes, and both modules (the gate checks registry entries against them). */
export function compareProto(beforeDir: string, afterDir: string): { changes: ContractChange[]; before: ProtoModel; after: ProtoModel } {
  const before = protoModel(beforeDir);
  const after = protoModel(afterDir);
  const changes: ContractChange[] = [];
  const add = (cls: ContractChange['class'], element: string, rule: string, spec: string, message: string): void => {
    changes.push(change('proto', cls, `proto:${element}`, rule, spec, message));
  };
  const newPackages = [...after.packages].filter((pkg) => !before.packages.has(pkg));
  for (const pkg of newPackages) add('safe', pkg, 'major-version-added', specRule.newMajor, `package ${pkg} added`);

  /** Request fields whose type `request-type-widened` accepts: buf's JSON rule (int64 is written as a string) is about replies. */
  const widenedInRequests = new Set<string>();
  const kindWord: Record<ElementKind, string> = { message: 'message', field: 'field', enum: 'enum', 'enum-value': 'enum value', service: 'service', rpc: 'RPC' };
  for (const [name, element] of before.elements) {
    const next = after.elements.get(name);
    if (!next) {
      // A removed parent says it all; its members are not listed again.
      if (element.parent && !after.elements.has(element.parent)) continue;
      const rule = element.kind === 'field' ? 'field-removed' : element.kind === 'enum-value' ? 'enum-value-removed' : element.kind === 'rpc' ? 'rpc-removed' : 'type-removed';
      add('breaking', name, rule, specRule.removed, `${kindWord[element.kind]} removed or renamed`);
      const unreserved = element.kind === 'field' || element.kind === 'enum-value' ? unreservedOf(element, after) : undefined;
      if (unreserved) changes[changes.length - 1].unmet = unreserved;
      continue;
    }
    if (element.kind === 'field' && element.field && next.field) {
      if (element.field.number !== next.field.number) add('breaking', name, 'field-number-changed', specRule.compatible, `field number ${element.field.number} -> ${next.field.number}`);
      const was = typeLabel(element.field);
      const is = typeLabel(next.field);
      const sentOnly = !before.messagesRead.has(element.parent ?? '') && !after.messagesRead.has(next.parent ?? '');
      if (was !== is && sentOnly && element.field.label === next.field.label && (WIDER_VARINTS[element.field.type ?? ''] ?? []).includes(next.field.type ?? '')) {
        add('safe', name, 'request-type-widened', specRule.compatible, `type ${was} -> ${is}: a wider integer in a message only clients send (no reply holds it); what old clients send, on the wire or as a JSON number, reads the same`);
        widenedInRequests.add(`proto:${name}`);
      } else if (was !== is) {
        const numberString = (scalarNumbers.has(element.field.type ?? '') && next.field.type === 'TYPE_STRING') || (element.field.type === 'TYPE_STRING' && scalarNumbers.has(next.field.type ?? ''));
        add('breaking', name, numberString ? 'number-string-changed' : 'type-changed', numberString ? specRule.numberString : specRule.typeChanged, `type ${was} -> ${is}`);
      }
    }
    if (element.kind === 'field' && element.field && next.field && Boolean(element.field.proto3Optional) !== Boolean(next.field.proto3Optional)) {
      // `optional` changes presence, not the wire or JSON form: buf's WIRE_JSON rules let both
      // directions through. Gaining presence changes nothing an old client sees or sends; losing
      // it makes an explicit 0 read as unset, which a client that tests presence may notice.
      if (next.field.proto3Optional) add('safe', name, 'field-presence-added', specRule.compatible, 'field becomes optional (explicit presence): wire and JSON unchanged');
      else add('dangerous', name, 'field-presence-removed', specRule.compatible, 'field no longer optional: a value equal to the default now reads as unset');
    }
    if (element.kind === 'enum-value' && element.field && next.field && element.field.number !== next.field.number) {
      add('breaking', name, 'enum-value-number-changed', specRule.compatible, `number ${element.field.number} -> ${next.field.number}`);
    }
    if ((element.kind === 'field' || element.kind === 'enum-value' || element.kind === 'rpc') && element.comment && element.comment !== next.comment) {
      add('dangerous', name, 'description-changed', specRule.meaning, `comment changed: ${JSON.stringify(element.comment)} -> ${JSON.stringify(next.comment)}`);
    }
  }
  for (const [name, element] of after.elements) {
    if (before.elements.has(name) || newPackages.includes(element.pkg)) continue;
    if (element.parent && !before.elements.has(element.parent)) continue; // listed with its new parent
    if (element.kind === 'enum-value') {
      const read = after.enumsRead.has(element.parent ?? '');
      add(read ? 'dangerous' : 'safe', name, read ? 'response-enum-value-added' : 'request-enum-value-added', read ? specRule.newResponseValue : specRule.nonBreaking, read ? 'enum value may be answered' : 'enum value accepted');
    } else {
      const rule = element.kind === 'field' ? 'field-added' : element.kind === 'rpc' ? 'rpc-added' : 'type-added';
      add('safe', name, rule, specRule.nonBreaking, `${kindWord[element.kind]} added`);
    }
  }

  // buf's wire and JSON rules; what we already named breaking for the same element is not repeated.
  const breakingElements = new Set(changes.filter((item) => item.class === 'breaking').map((item) => item.element));
  // Two equal images hold no change for any rule to find: `buf breaking` (about 0.4 s) only for two that differ.
  const findings = imageJson(afterDir) === imageJson(beforeDir) ? [] : bufBreaking(afterDir, beforeDir);
  for (const finding of findings) {
    const element = elementOfFinding(finding, before, after, afterDir);
    if (breakingElements.has(element) || (finding.type === 'FIELD_WIRE_JSON_COMPATIBLE_TYPE' && widenedInRequests.has(element))) continue;
    breakingElements.add(element);
    changes.push(change('proto', 'breaking', element, finding.type, specRule.compatible, `buf: ${finding.message.replace(/ See https:\S+.*$/, '')}`));
  }
  return { changes, before, after };
}

/** Whether `proto:<qualified name>` names a message, field, enum, enum value, service or RPC of the module. */
export function protoElementExists(model: ProtoModel, element: string): boolean {
  return element.startsWith('proto:') && model.elements.has(element.slice('proto:'.length));
}

/** Every element the .proto files mark deprecated, as `proto:<qualified name>`, with the file declaring it (relative to the module). */
export function protoDeprecatedElements(model: ProtoModel): { element: string; file: string }[] {
  return [...model.elements.values()].filter((element) => element.deprecated).map((element) => ({ element: `proto:${element.name}`, file: element.file }));
}

/** Whether the element is marked deprecated in the .proto; undefined when `model` does not have it. */
export function protoElementDeprecated(model: ProtoModel, element: string): boolean | undefined {
  return model.elements.get(element.slice('proto:'.length))?.deprecated;
}

/**
 * The RPCs whose recorded use counts as use of `element` (`proto:<qualified name>`): inventory
 * records each call's RPC and the request fields it carried, not what the reply held. So a field
 * of a message a reply can hold counts as used by every call of the RPC (conservative: a removal
 * is never judged safe on a guess). The fields of a request's nested messages are recorded too,
 * but only since a later release than the RPC and top-level fields: records older than that lack
 * them, so they are still implied by every call. A top-level request field is recorded as sent:
 * not implied.
 */
export function rpcsReading(model: ProtoModel, element: string): string[] {
  const name = element.slice('proto:'.length);
  const target = model.elements.get(name);
  if (!target || target.kind === 'rpc' || target.kind === 'service') return [];
  const owner = target.kind === 'field' || target.kind === 'enum-value' ? (target.parent as string) : name;
  const reachable = (start: string): Set<string> => {
    const seen = new Set<string>();
    for (const pending = [start]; pending.length > 0; ) {
      const next = pending.pop() as string;
      if (seen.has(next)) continue;
      seen.add(next);
      for (const candidate of model.elements.values()) {
        if (candidate.kind === 'field' && candidate.parent === next && candidate.field?.typeName) pending.push(candidate.field.typeName.replace(/^\./, ''));
      }
    }
    return seen;
  };
  const rpcs: string[] = [];
  for (const candidate of model.elements.values()) {
    if (candidate.kind !== 'rpc' || !candidate.method) continue;
    const request = candidate.method.inputType.replace(/^\./, '');
    const reply = candidate.method.outputType.replace(/^\./, '');
    const viaRequest = reachable(request).has(owner) && !(owner === request && target.kind === 'field');
    if (reachable(reply).has(owner) || viaRequest) rpcs.push(`proto:${candidate.name}`);
  }
  return rpcs;
}
