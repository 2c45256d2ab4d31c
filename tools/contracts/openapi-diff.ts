// Our OpenAPI 3.1 rules (docs/evolving-the-api.md says why no npm differ was used): the two
// documents are walked operation by operation, $refs resolved on the way, and every schema is
// compared in its direction, since what is safe in a request (a new enum value, a looser
// constraint, null accepted) breaks a client in a response and the other way round.
import { SORT_FIELDS_EXTENSION, sortPattern } from '@platform/paging';
import { CHECKS_EXTENSION } from '@platform/validation';
import { change, specRule, type ChangeClass, type ContractChange } from './changes';

type Json = Record<string, unknown>;
type Direction = 'request' | 'response';

const methods = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'] as const;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The fields of a `sort` parameter's schema (its SORT_FIELDS_EXTENSION), when its pattern is the
 * one made from them: a pattern edited by hand is compared as any other pattern.
 */
function sortFieldsOf(schema: Json): string[] | undefined {
  const fields = schema[SORT_FIELDS_EXTENSION];
  if (!Array.isArray(fields) || !fields.every((field) => typeof field === 'string')) return undefined;
  return schema.pattern === sortPattern(fields as string[]) ? (fields as string[]) : undefined;
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Follows local `$ref`s (`#/components/...`); the ref names come back too, to stop on cycles. */
function resolve(doc: Json, node: unknown): { node: Json; refs: string[] } {
  const refs: string[] = [];
  let current = node;
  while (isObject(current) && typeof current.$ref === 'string') {
    const ref = current.$ref;
    if (refs.includes(ref) || !ref.startsWith('#/')) break;
    refs.push(ref);
    let target: unknown = doc;
    for (const part of ref.slice(2).split('/')) target = isObject(target) ? target[part.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined;
    // Siblings of $ref (3.1 allows description next to it) override the target's.
    const { $ref: _ref, ...siblings } = current;
    current = isObject(target) ? { ...target, ...siblings } : siblings;
  }
  return { node: isObject(current) ? current : {}, refs };
}

/**
 * `node` with every local `$ref` in it replaced by what it names, at any depth: what a keyword the
 * gate compares whole (`not`, `if`...) says is what its refs say, so that a change to a schema it
 * names is seen and moving the same schema to another name is not. A ref met again inside itself
 * (a shape made of itself) stays as written.
 */
function inlined(doc: Json, node: unknown, refs: string[] = []): unknown {
  if (Array.isArray(node)) return node.map((item) => inlined(doc, item, refs));
  if (!isObject(node)) return node;
  if (typeof node.$ref === 'string') {
    if (refs.includes(node.$ref) || !node.$ref.startsWith('#/')) return node;
    const { node: target, refs: followed } = resolve(doc, node);
    return inlined(doc, target, [...refs, ...followed]);
  }
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, inlined(doc, value, refs)]));
}

interface SchemaView {
  schema: Json;
  nullable: boolean;
  types: string[];
  /** Alternatives other than null (anyOf/oneOf of two or more shapes). */
  variants: Json[];
  /** The alternatives as written ($refs not followed), which alternativeLabels names. */
  written: unknown[];
  refs: string[];
  /** With variants: what the schema says beside its alternatives (each alternative holds with it). */
  outer?: Json;
}

const typeListOf = (schema: Json): string[] | undefined => (Array.isArray(schema.type) ? (schema.type as string[]) : typeof schema.type === 'string' ? [schema.type] : undefined);
const valuesOf = (schema: Json): unknown[] | undefined => (Array.isArray(schema.enum) ? schema.enum : schema.const !== undefined ? [schema.const] : undefined);
interface Check {
  message: string;
  version: number;
  history: Record<string, unknown>;
  /** The messages it was listed under before (a rewording; libs/validation CheckRewording). */
  formerly: string[];
}
/**
 * The checks a schema makes that JSON Schema cannot state (zod refine), as listed: a message, or a
 * message with the version the check declares and how each version differs from the one before
 * (libs/validation unstated-checks.ts). A check that declares none is at version 1.
 */
const checksOf = (schema: Json): Check[] =>
  (Array.isArray(schema[CHECKS_EXTENSION]) ? (schema[CHECKS_EXTENSION] as unknown[]) : []).flatMap((entry): Check[] => {
    if (typeof entry === 'string') return [{ message: entry, version: 1, history: {}, formerly: [] }];
    if (!isObject(entry) || typeof entry.message !== 'string') return [];
    const formerly = Array.isArray(entry.formerly) ? entry.formerly.filter((message): message is string => typeof message === 'string') : [];
    return [{ message: entry.message, version: typeof entry.version === 'number' ? entry.version : 1, history: isObject(entry.history) ? entry.history : {}, formerly }];
  });

/**
 * How a check listed under the same message changed between two versions, by what it declares of
 * each version after the first: `tighter` or `looser` when every version between says so, else
 * `unknown` (a version going back, one the history leaves out, or some of each): the gate then
 * takes it as tighter for a request and looser for an answer.
 */
function revisionBetween(before: Check, after: Check): 'tighter' | 'looser' | 'unknown' {
  if (after.version < before.version) return 'unknown';
  const changes = new Set<unknown>();
  for (let version = before.version + 1; version <= after.version; version++) changes.add(after.history[String(version)]);
  return changes.size === 1 && (changes.has('tighter') || changes.has('looser')) ? ([...changes][0] as 'tighter' | 'looser') : 'unknown';
}

/** What `list` holds that `other` does not, as many times as it holds it more. */
function beyond(list: string[], other: string[]): string[] {
  const left = [...other];
  return list.filter((item) => {
    const at = left.indexOf(item);
    if (at >= 0) left.splice(at, 1);
    return at < 0;
  });
}

const statesChecks = new WeakMap<Json, boolean>();
/** Whether a document lists checks at all: one released before they were listed made them unseen. */
function documentStatesChecks(doc: Json): boolean {
  if (!statesChecks.has(doc)) statesChecks.set(doc, JSON.stringify(doc).includes(`"${CHECKS_EXTENSION}"`));
  return statesChecks.get(doc) as boolean;
}

/** A schema's formats: one as written, several where allOf members each give one (bothOf). */
const formatsOf = (schema: Json): string[] => (typeof schema.format === 'string' ? [schema.format] : Array.isArray(schema.format) ? (schema.format as string[]) : []);

/** A JSON number exactly as written, as a whole number of 10^-scale (0.05 is 5 at scale 2). */
function decimalOf(value: number): { units: bigint; scale: number } {
  const [mantissa, exponent = '0'] = String(value).split('e');
  const [whole, fraction = ''] = mantissa.split('.');
  const scale = fraction.length - Number(exponent);
  const units = BigInt(`${whole}${fraction}`);
  return scale >= 0 ? { units, scale } : { units: units * 10n ** BigInt(-scale), scale: 0 };
}

/** Two numbers as whole numbers of the same unit, so that multiples are exact (0.1 * 3 is not 0.3 in floating point). */
function onOneScale(x: number, y: number): { x: bigint; y: bigint; scale: number } {
  const [a, b] = [decimalOf(x), decimalOf(y)];
  const scale = Math.max(a.scale, b.scale);
  return { x: a.units * 10n ** BigInt(scale - a.scale), y: b.units * 10n ** BigInt(scale - b.scale), scale };
}

/** Whether `value` is a whole multiple of `of` (both positive, as multipleOf is). */
function isMultipleOf(value: number, of: number): boolean {
  const { x, y } = onOneScale(value, of);
  return y !== 0n && x % y === 0n;
}

/** The least number that is a multiple of both: what two multipleOf a value must satisfy together say. */
function leastCommonMultiple(first: number, second: number): number {
  const { x, y, scale } = onOneScale(first, second);
  const divisor = (m: bigint, n: bigint): bigint => (n === 0n ? m : divisor(n, m % n));
  return Number(`${(x / divisor(x, y)) * y}e-${scale}`);
}

/**
 * Two schemas a value must both satisfy (an allOf), as one: the tighter of each limit, the types
 * and values both take, both patterns, both sets of properties (one named in both is both
 * schemas of it), every format, multiples of both multipleOf, closed if either is (withAllOf
 * drops what a closed member does not name). Where two
 * cannot be put together (a description, a default) `first`'s stays; two lists of alternatives
 * are combined by withAllOf.
 */
function bothOf(first: Json, second: Json): Json {
  const merged: Json = { ...second, ...first };
  for (const [key, tightWhen] of limits) {
    const [x, y] = [first[key], second[key]];
    if (typeof x === 'number' && typeof y === 'number') merged[key] = tightWhen === 'lower' ? Math.min(x, y) : Math.max(x, y);
  }
  const [firstTypes, secondTypes] = [typeListOf(first), typeListOf(second)];
  if (firstTypes && secondTypes) {
    const common = [...new Set(firstTypes.flatMap((type) => (secondTypes.includes(type) ? [type] : numeric.has(type) && secondTypes.some((other) => numeric.has(other)) ? ['integer'] : [])))];
    if (common.length > 0) merged.type = common.length === 1 ? common[0] : common;
    else merged[NO_VALUE] = `allOf members of type ${firstTypes.join('|')} and ${secondTypes.join('|')} share no value`;
  }
  const [firstValues, secondValues] = [valuesOf(first), valuesOf(second)];
  if (firstValues && secondValues) {
    delete merged.const;
    merged.enum = firstValues.filter((value) => secondValues.some((other) => same(value, other)));
  }
  // Each pattern may match anywhere in the value: both do when each does from some point on.
  if (typeof first.pattern === 'string' && typeof second.pattern === 'string' && first.pattern !== second.pattern) {
    merged.pattern = `(?=[\\s\\S]*?(?:${first.pattern}))(?=[\\s\\S]*?(?:${second.pattern}))`;
  }
  // A value has each member's format, and is a multiple of each member's multipleOf.
  const formats = [...new Set([...formatsOf(first), ...formatsOf(second)])].sort();
  if (formats.length > 1) merged.format = formats;
  if (typeof first.multipleOf === 'number' && typeof second.multipleOf === 'number') merged.multipleOf = leastCommonMultiple(first.multipleOf, second.multipleOf);
  if (Array.isArray(first[CHECKS_EXTENSION]) && Array.isArray(second[CHECKS_EXTENSION])) merged[CHECKS_EXTENSION] = [...first[CHECKS_EXTENSION], ...second[CHECKS_EXTENSION]];
  for (const key of wholeKeywords) {
    if (first[key] !== undefined && second[key] !== undefined && !same(first[key], second[key])) merged[key] = { allOf: [first[key], second[key]] };
  }
  if (first.uniqueItems === true || second.uniqueItems === true) merged.uniqueItems = true;
  for (const key of ['additionalProperties', 'unevaluatedProperties']) {
    if (first[key] === false || second[key] === false) merged[key] = false;
    else if (isObject(first[key]) && isObject(second[key])) merged[key] = { allOf: [first[key], second[key]] };
  }
  if (Array.isArray(first.prefixItems) && Array.isArray(second.prefixItems)) {
    const [firstPositions, secondPositions] = [first.prefixItems, second.prefixItems];
    merged.prefixItems = Array.from({ length: Math.max(firstPositions.length, secondPositions.length) }, (_, at) =>
      at < firstPositions.length && at < secondPositions.length ? { allOf: [firstPositions[at], secondPositions[at]] } : (firstPositions[at] ?? secondPositions[at]),
    );
  }
  if (isObject(first.patternProperties) && isObject(second.patternProperties)) {
    const [firstPatterns, secondPatterns] = [first.patternProperties, second.patternProperties];
    merged.patternProperties = { ...secondPatterns, ...firstPatterns };
    for (const pattern of Object.keys(firstPatterns)) {
      if (pattern in secondPatterns) (merged.patternProperties as Json)[pattern] = { allOf: [firstPatterns[pattern], secondPatterns[pattern]] };
    }
  }
  for (const key of ['items', 'propertyNames']) {
    if (first[key] !== undefined && second[key] !== undefined) merged[key] = { allOf: [first[key], second[key]] };
  }
  if (isObject(first.properties) || isObject(second.properties)) {
    const [firstProperties, secondProperties] = [isObject(first.properties) ? first.properties : {}, isObject(second.properties) ? second.properties : {}];
    merged.properties = { ...secondProperties, ...firstProperties };
    for (const name of Object.keys(firstProperties)) {
      if (name in secondProperties) (merged.properties as Json)[name] = { allOf: [firstProperties[name], secondProperties[name]] };
    }
  }
  if (Array.isArray(first.required) || Array.isArray(second.required)) {
    merged.required = [...new Set([...(Array.isArray(first.required) ? first.required : []), ...(Array.isArray(second.required) ? second.required : [])])];
  }
  return merged;
}

/**
 * Where allOf members meet in no value at all (a number that must be a string), bothOf says so
 * under this key, since the merged schema cannot state it: whyNothingFits reads it.
 */
const NO_VALUE = 'x-contract-gate-no-value';

/**
 * Why no value can satisfy `shape` (null aside, when it takes null: then null fits), or undefined
 * when some value may: members of no common type, an empty enum, a lower limit above the upper
 * one for the only type the schema takes, a closed object requiring a property it refuses. Only
 * what the schema states plainly: a contradiction hidden in a pattern or a `not` is not looked for.
 */
function whyNothingFits(shape: SchemaView): string | undefined {
  const { schema, types } = shape;
  if (shape.nullable || shape.variants.length > 0) return undefined;
  if (typeof schema[NO_VALUE] === 'string') return schema[NO_VALUE] as string;
  const values = valuesOf(schema);
  if (values && values.length === 0) return 'the values allowed (allOf members each listing some) have none in common';
  const only = (...kinds: string[]): boolean => types.length > 0 && types.every((type) => kinds.includes(type));
  const above = (low: string, high: string, strict: boolean): string | undefined => {
    const [min, max] = [schema[low], schema[high]];
    return typeof min === 'number' && typeof max === 'number' && (strict ? min >= max : min > max) ? `${low} ${min} is above ${high} ${max}` : undefined;
  };
  const limits =
    (only('string') && above('minLength', 'maxLength', false)) ||
    (only('array') && above('minItems', 'maxItems', false)) ||
    (only('object') && above('minProperties', 'maxProperties', false)) ||
    (only('integer', 'number') && (above('minimum', 'maximum', false) || above('exclusiveMinimum', 'maximum', true) || above('minimum', 'exclusiveMaximum', true) || above('exclusiveMinimum', 'exclusiveMaximum', true)));
  if (limits) return limits;
  // A closed object that requires a property it does not take (one an allOf member requires and a
  // closed member refuses) takes no value.
  if (only('object') && schema.additionalProperties === false && !isObject(schema.patternProperties)) {
    const properties = isObject(schema.properties) ? schema.properties : {};
    const refused = (Array.isArray(schema.required) ? (schema.required as string[]) : []).filter((name) => !(name in properties));
    if (refused.length > 0) return `requires ${refused.join(', ')}, yet additionalProperties: false refuses ${refused.length > 1 ? 'them' : 'it'}`;
  }
  return undefined;
}

/** Whether no value can satisfy both schemas: no type or no enum value they share. */
function contradicts(first: Json, second: Json): boolean {
  const [firstTypes, secondTypes] = [typeListOf(first), typeListOf(second)];
  const typesMeet = (type: string, others: string[]) => others.includes(type) || (numeric.has(type) && others.some((other) => numeric.has(other)));
  if (firstTypes && secondTypes && !firstTypes.some((type) => typesMeet(type, secondTypes))) return true;
  const [firstValues, secondValues] = [valuesOf(first), valuesOf(second)];
  return Boolean(firstValues && secondValues && !firstValues.some((value) => secondValues.some((other) => same(value, other))));
}

/** The most alternatives an allOf of several lists of them may make: past it the gate stops rather than compare part of them. */
const MAX_COMBINED_ALTERNATIVES = 256;

/**
 * Several lists of alternatives a value must satisfy together (allOf members with anyOf/oneOf
 * each, or one schema with both), as one list: a value is one of each list at once, so each
 * combination of one alternative from every list is an alternative (`{ allOf: [...] }`), less
 * those no value can be (a string that is an integer). A combination that only null fits is
 * null.
 */
function combinedAlternatives(doc: Json, lists: unknown[][], refs: string[]): Json[] {
  // Each alternative is read as the schema holding it is: a ref to that schema again (a shape made
  // of itself) reads as nothing, rather than without end.
  const read = (node: unknown): Json => withAllOf(doc, node, [...refs]);
  let combinations: unknown[][] = [[]];
  for (const list of lists) {
    combinations = combinations.flatMap((parts) =>
      list.flatMap((alternative) => (parts.length > 0 && contradicts(read({ allOf: parts }), read(alternative)) ? [] : [[...parts, alternative]])),
    );
    if (combinations.length > MAX_COMBINED_ALTERNATIVES) throw new Error(`an allOf of alternatives makes more than ${MAX_COMBINED_ALTERNATIVES} shapes; the contract gate cannot compare it: write the alternatives out`);
  }
  return combinations.map((parts) => {
    if (parts.length === 1) return parts[0] as Json;
    const types = typeListOf(read({ allOf: parts }));
    return types?.length === 1 && types[0] === 'null' ? { type: 'null' } : { allOf: parts };
  });
}

/**
 * `node` with its allOf members put into it (theirs in turn), refs followed: each ref met is
 * added to `refs`, and one met again (a shape made of itself) adds nothing.
 */
function withAllOf(doc: Json, node: unknown, refs: string[]): Json {
  const { node: resolved, refs: followed } = resolve(doc, node);
  if (followed.some((ref) => refs.includes(ref))) return {};
  refs.push(...followed);
  const { allOf, ...own } = resolved;
  const members = [own, ...(Array.isArray(allOf) ? allOf.map((part) => withAllOf(doc, part, refs)) : [])];
  const merged = members.slice(1).reduce<Json>((soFar, member) => bothOf(soFar, member), own);
  // A closed member (additionalProperties: false; a member's unevaluatedProperties: false too, which
  // sees that member only) refuses every property it does not name itself, whichever member
  // describes it (JSON Schema 2020-12, which OpenAPI 3.1 is, and every validator a client may use):
  // such a property can be neither sent nor answered. The schema's own unevaluatedProperties: false
  // sees every member, and refuses none of theirs.
  // A pattern this engine cannot read is taken to name the property: the gate keeps what it cannot judge.
  const matches = (pattern: string, name: string): boolean => {
    try {
      return new RegExp(pattern, 'u').test(name);
    } catch {
      return true;
    }
  };
  const names = (member: Json, name: string): boolean =>
    (isObject(member.properties) && name in member.properties) || (isObject(member.patternProperties) && Object.keys(member.patternProperties).some((pattern) => matches(pattern, name)));
  const closedMembers = members.filter((member, index) => member.additionalProperties === false || (index > 0 && member.unevaluatedProperties === false));
  if (members.length > 1 && closedMembers.length > 0 && isObject(merged.properties)) {
    merged.properties = Object.fromEntries(Object.entries(merged.properties).filter(([name]) => closedMembers.every((member) => names(member, name))));
  }
  // A map member (additionalProperties: a schema) holds the same way: its schema is what every
  // property it does not name itself must also be, whichever member describes that property.
  const mapMembers = members.filter((member) => isObject(member.additionalProperties));
  if (members.length > 1 && mapMembers.length > 0 && isObject(merged.properties)) {
    merged.properties = Object.fromEntries(
      Object.entries(merged.properties).map(([name, property]) => {
        const values = mapMembers.filter((member) => !names(member, name)).map((member) => member.additionalProperties);
        return [name, values.length > 0 ? { allOf: [property, ...values] } : property];
      }),
    );
  }
  // bothOf keeps one list of alternatives; where there are more, each holds.
  const lists = members.flatMap((member) => ['anyOf', 'oneOf'].flatMap((key) => (Array.isArray(member[key]) ? [member[key] as unknown[]] : [])));
  if (lists.length > 1) {
    delete merged.oneOf;
    merged.anyOf = combinedAlternatives(doc, lists, refs);
  }
  return merged;
}

/** One schema as a client meets it: refs followed, allOf merged, null split off from the type. */
function view(doc: Json, node: unknown): SchemaView {
  const refs: string[] = [];
  let schema: Json = withAllOf(doc, node, refs);
  let nullable = schema.nullable === true;
  let types = typeListOf(schema) ?? [];
  if (types.includes('null')) nullable = true;
  types = types.filter((type) => type !== 'null');
  let variants: Json[] = [];
  let written: unknown[] = [];
  let outer: Json | undefined;
  const alternatives = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined;
  if (alternatives) {
    const nonNull = alternatives.filter((alternative) => {
      const { node: branch } = resolve(doc, alternative);
      const isNull = branch.type === 'null' || (Array.isArray(branch.type) && branch.type.length === 1 && branch.type[0] === 'null');
      if (isNull) nullable = true;
      return !isNull;
    });
    const { anyOf: _anyOf, oneOf: _oneOf, ...rest } = schema;
    if (nonNull.length === 1) {
      const inner = view(doc, nonNull[0]);
      return { schema: { ...inner.schema, ...rest, type: inner.schema.type }, nullable: nullable || inner.nullable, types: inner.types, variants: inner.variants, written: inner.written, refs: [...refs, ...inner.refs] };
    }
    schema = rest;
    outer = rest;
    variants = nonNull.map((alternative) => resolve(doc, alternative).node);
    written = nonNull;
    // What the alternatives accept together, so that a schema that gains or loses alternatives
    // is compared with one that has none (`string` -> `"a" | "b"`, `string` -> `number | boolean`):
    // their types (none when one of them takes any type), and their values when each is a const
    // or an enum.
    if (types.length === 0) {
      const views = nonNull.map((alternative) => view(doc, alternative));
      if (views.every((alternative) => alternative.types.length > 0)) types = [...new Set(views.flatMap((alternative) => alternative.types))];
      if (schema.enum === undefined && schema.const === undefined && views.every((alternative) => valuesOf(alternative.schema) !== undefined)) {
        schema = { ...schema, enum: views.flatMap((alternative) => valuesOf(alternative.schema) as unknown[]) };
      }
    }
  }
  if (types.length === 0 && isObject(schema.properties)) types = ['object'];
  return { schema, nullable, types: [...types].sort(), variants, written, refs, ...(outer ? { outer } : {}) };
}

/**
 * The name of each alternative in an element, one that stays when the alternatives are reordered
 * or another is added, so that an approval or a registry entry naming a place inside one keeps
 * naming it: the value of the property that tells them apart (`<kind=card>`: a property every
 * alternative requires with one value of its own, as zod's discriminatedUnion writes), else the
 * component it refers to (`<CardPayment>`), else its position (`<0>`) when neither names each
 * one apart.
 */
function alternativeLabels(doc: Json, alternatives: unknown[]): string[] {
  const unique = (labels: string[]): boolean => new Set(labels).size === labels.length;
  const shapes = alternatives.map((alternative) => withAllOf(doc, alternative, []));
  const tagOf = (shape: Json, name: string): unknown[] | undefined => {
    if (!Array.isArray(shape.required) || !shape.required.includes(name) || !isObject(shape.properties) || shape.properties[name] === undefined) return undefined;
    const values = valuesOf(withAllOf(doc, shape.properties[name], []));
    return values?.length === 1 ? values : undefined;
  };
  const candidates = isObject(shapes[0]?.properties) ? Object.keys(shapes[0].properties) : [];
  for (const name of candidates) {
    const tags = shapes.map((shape) => tagOf(shape, name));
    if (!tags.every((tag): tag is unknown[] => tag !== undefined)) continue;
    const labels = tags.map(([value]) => `${name}=${typeof value === 'string' ? value : JSON.stringify(value)}`);
    if (unique(labels)) return labels;
  }
  const refNames = alternatives.map((alternative) => (isObject(alternative) && typeof alternative.$ref === 'string' && alternative.$ref.startsWith('#/components/schemas/') ? alternative.$ref.slice('#/components/schemas/'.length) : ''));
  if (refNames.every(Boolean) && unique(refNames)) return refNames;
  return alternatives.map((_, index) => String(index));
}

/**
 * What a client may send under one shape, in the parts each of which one alternative must take
 * whole: each value of its enum, else each of its types, else the shape itself.
 */
function sentAs(sent: SchemaView): SchemaView[] {
  if (Array.isArray(sent.schema.enum) && sent.schema.enum.length > 1) return sent.schema.enum.map((value) => ({ ...sent, schema: { ...sent.schema, enum: [value] } }));
  if (sent.types.length > 1) return sent.types.map((type) => ({ ...sent, types: [type], schema: { ...sent.schema, type } }));
  return [sent];
}

const numeric = new Set(['integer', 'number']);
/**
 * Formats that generators turn into a type of their own (a date, a 64-bit integer, a UUID, bytes):
 * a response value in one of them is parsed by it. Others (email, hostname…) describe a string that
 * clients keep as a string.
 */
const FORMATS_CLIENTS_PARSE = new Set(['date-time', 'date', 'time', 'duration', 'int32', 'int64', 'float', 'double', 'decimal', 'uuid', 'uri', 'byte', 'binary']);
/**
 * Number formats and the wider ones that hold every value of each exactly (an int32 is an int64
 * and a double; a float is a double): a request field moved to a wider one refuses nothing an old
 * client sent, and a response field moved to a narrower one answers nothing its old format cannot read.
 */
const WIDER_FORMATS: Readonly<Record<string, readonly string[]>> = { int32: ['int64', 'double'], float: ['double'] };
/** Whether every value of format `format` is one of format `other`. */
const fitsIn = (format: string, other: string): boolean => format === other || (WIDER_FORMATS[format] ?? []).includes(other);
/** Whether every type of `narrow` is accepted by `wide` (an integer is a number). */
function covers(wide: string[], narrow: string[]): boolean {
  if (wide.length === 0) return true;
  return narrow.length > 0 && narrow.every((type) => wide.includes(type) || (type === 'integer' && wide.includes('number')));
}

/** Constraints and the direction in which they get tighter. */
const limits: [string, 'lower' | 'higher'][] = [
  ['maxLength', 'lower'], ['maxItems', 'lower'], ['maxProperties', 'lower'], ['maximum', 'lower'], ['exclusiveMaximum', 'lower'],
  ['minLength', 'higher'], ['minItems', 'higher'], ['minProperties', 'higher'], ['minimum', 'higher'], ['exclusiveMinimum', 'higher'],
  ['maxContains', 'lower'], ['minContains', 'higher'],
];

/**
 * Keywords the gate does not take apart (conditions, negations, dependencies, what a list must
 * contain): each is compared whole, as written, so that a new or changed one is at least a
 * tighter request and a dropped one a looser one, never nothing. (patternProperties is not one:
 * beside additionalProperties: false a new pattern takes more names, elsewhere it constrains;
 * compareViews compares each pattern's values as a map's.)
 */
const wholeKeywords = ['not', 'if', 'then', 'else', 'dependentRequired', 'dependentSchemas', 'contains', 'unevaluatedItems'];

class OpenApiComparison {
  readonly changes: ContractChange[] = [];
  /** The named schemas being walked: an element under one also gets that schema's name as its alias. */
  private readonly origins: { origin: string; elementBase: string }[] = [];
  constructor(readonly before: Json, readonly after: Json) {}

  private add(cls: ChangeClass, element: string, rule: string, spec: string, message: string): void {
    const found = change('rest', cls, element, rule, spec, message);
    const origin = this.origins[this.origins.length - 1];
    if (origin && element.startsWith(origin.elementBase)) found.alias = `${origin.origin}${element.slice(origin.elementBase.length)}`;
    this.changes.push(found);
  }

  private description(element: string, before: unknown, after: unknown): void {
    if (typeof before === 'string' || typeof after === 'string') {
      if ((before ?? '') !== (after ?? '') && before !== undefined) this.add('dangerous', element, 'description-changed', specRule.meaning, `description changed: ${JSON.stringify(before)} -> ${JSON.stringify(after ?? '')}`);
    }
  }

  compareSchemas(beforeNode: unknown, afterNode: unknown, direction: Direction, element: string, seen: string[], withDescription: boolean): void {
    const b = view(this.before, beforeNode);
    const a = view(this.after, afterNode);
    const pair = `${b.refs.join(',')}|${a.refs.join(',')}`;
    if ((b.refs.length || a.refs.length) && seen.includes(pair)) return; // a recursive shape, already being compared
    const nextSeen = [...seen, pair];
    const named = a.refs.length > 0 ? a.refs[a.refs.length - 1] : undefined;
    if (named) this.origins.push({ origin: `rest:${named}`, elementBase: element });
    try {
      this.compareViews(b, a, direction, element, nextSeen, withDescription);
    } finally {
      if (named) this.origins.pop();
    }
  }

  private compareViews(b: SchemaView, a: SchemaView, direction: Direction, element: string, nextSeen: string[], withDescription: boolean): void {
    const first = this.changes.length;
    if (withDescription) this.description(element, b.schema.description, a.schema.description);

    if (!same(b.types, a.types)) {
      // Widened in a request (`string` -> `string|integer`), narrowed in a response: every value
      // exchanged before still is, whatever types came or went beside it.
      const compatible = direction === 'request' ? covers(a.types, b.types) : covers(b.types, a.types) && a.types.length > 0;
      const numberString = (b.types.some((t) => numeric.has(t)) && a.types.includes('string')) || (b.types.includes('string') && a.types.some((t) => numeric.has(t)));
      if (!compatible && numberString) {
        this.add('breaking', element, 'number-string-changed', specRule.numberString, `type ${b.types.join('|')} -> ${a.types.join('|')}`);
        return;
      }
      if (!compatible) {
        this.add('breaking', element, 'type-changed', specRule.typeChanged, `type ${b.types.join('|') || 'any'} -> ${a.types.join('|') || 'any'}`);
        return;
      }
      this.add('safe', element, direction === 'request' ? 'type-widened' : 'type-narrowed', specRule.compatible, `type ${b.types.join('|') || 'any'} -> ${a.types.join('|') || 'any'}`);
    }

    if (b.nullable !== a.nullable) {
      if (direction === 'response') {
        if (a.nullable) this.add('breaking', element, 'response-became-nullable', specRule.nullableResponse, 'may now be null');
        else this.add('safe', element, 'response-became-non-null', specRule.compatible, 'is never null any more');
      } else if (a.nullable) this.add('safe', element, 'request-accepts-null', specRule.compatible, 'null is now accepted');
      else this.add('breaking', element, 'request-constraint-tightened', specRule.tighterRequest, 'null is no longer accepted');
    }

    this.compareEnums(b.schema, a.schema, direction, element);
    this.compareConstraints(b.schema, a.schema, direction, element);
    // A schema no value fits any more: no request an old client sends is taken, and no answer can
    // be one the contract allows (what an old client reads is gone, as a removed field is), so it
    // breaks in both directions. A request already refused here for a tighter limit is not told twice.
    const nothingFits = whyNothingFits(a);
    if (nothingFits && !whyNothingFits(b)) {
      if (direction === 'response') this.add('breaking', element, 'response-nothing-fits', specRule.removed, `${nothingFits}: no value fits, so nothing can be answered here any more`);
      else if (!this.changes.slice(first).some((found) => found.class === 'breaking' && found.element === element)) this.add('breaking', element, 'request-constraint-tightened', specRule.tighterRequest, `${nothingFits}: no request fits`);
    }

    const beforeDefault = b.schema.default;
    const afterDefault = a.schema.default;
    if (beforeDefault !== undefined && !same(beforeDefault, afterDefault)) {
      this.add('breaking', element, 'default-changed', specRule.defaultChanged, `default ${JSON.stringify(beforeDefault)} -> ${afterDefault === undefined ? 'none' : JSON.stringify(afterDefault)}`);
    } else if (beforeDefault === undefined && afterDefault !== undefined) {
      this.add('safe', element, 'default-added', specRule.compatible, `default ${JSON.stringify(afterDefault)} documented`);
    }

    this.compareProperties(b.schema, a.schema, direction, element, nextSeen);
    // A list without `items`, or an object without a schema for its other properties, holds any
    // value there: `tags: array` -> `tags: array of string` narrows what a request may hold, and the
    // reverse widens what an answer may hold, as a changed item type does.
    if (b.schema.items !== undefined || a.schema.items !== undefined) this.compareSchemas(b.schema.items ?? {}, a.schema.items ?? {}, direction, `${element}[]`, nextSeen, false);
    // A tuple (prefixItems, as zod writes z.tuple) holds a schema per position, `items` after them
    // (false: nothing more, which maxItems says too): each position is compared as a value, `[1]`.
    const positions = (schema: Json): unknown[] => (Array.isArray(schema.prefixItems) ? schema.prefixItems : []);
    const [beforePositions, afterPositions] = [positions(b.schema), positions(a.schema)];
    for (let at = 0; at < Math.max(beforePositions.length, afterPositions.length); at++) {
      const [was, is] = [beforePositions[at] ?? b.schema.items ?? {}, afterPositions[at] ?? a.schema.items ?? {}];
      if (was !== false && is !== false) this.compareSchemas(was, is, direction, `${element}[${at}]`, nextSeen, false);
    }
    const others = (schema: Json): Json | undefined => (isObject(schema.additionalProperties) ? schema.additionalProperties : schema.additionalProperties === undefined || schema.additionalProperties === true ? {} : undefined);
    const [beforeOthers, afterOthers] = [others(b.schema), others(a.schema)];
    if (beforeOthers && afterOthers && (isObject(b.schema.additionalProperties) || isObject(a.schema.additionalProperties))) {
      this.compareSchemas(beforeOthers, afterOthers, direction, `${element}{}`, nextSeen, false);
    }
    // patternProperties: what a property not named in `properties` must be when its name matches.
    // Each side's rule for such a name is its pattern's schema, else what the object says of other
    // properties (any value when open, none when closed): a pattern added to an open object
    // constrains names that were free (a tighter request), one added to a closed object accepts
    // names that were refused. Compared as the map's values (`{}`), the pattern named in the message.
    const patternsOf = (schema: Json): Json => (isObject(schema.patternProperties) ? schema.patternProperties : {});
    const [beforePatterns, afterPatterns] = [patternsOf(b.schema), patternsOf(a.schema)];
    for (const pattern of new Set([...Object.keys(beforePatterns), ...Object.keys(afterPatterns)])) {
      const was = pattern in beforePatterns ? beforePatterns[pattern] : beforeOthers;
      const is = pattern in afterPatterns ? afterPatterns[pattern] : afterOthers;
      const what = `properties matching ${JSON.stringify(pattern)}`;
      if (was === undefined && is === undefined) continue;
      if (was === undefined || is === undefined) {
        const accepted = was === undefined;
        if (direction === 'request') this.add(accepted ? 'safe' : 'breaking', element, accepted ? 'request-constraint-loosened' : 'request-constraint-tightened', accepted ? specRule.compatible : specRule.tighterRequest, `${what} ${accepted ? 'accepted' : 'refused'} now`);
        else this.add('safe', element, accepted ? 'response-field-added' : 'response-constraint-changed', accepted ? specRule.nonBreaking : specRule.compatible, `${what} ${accepted ? 'may be answered' : 'no longer answered'} now`);
        continue;
      }
      const values = new OpenApiComparison(this.before, this.after);
      values.compareSchemas(was, is, direction, `${element}{}`, nextSeen, false);
      for (const found of values.changes) this.add(found.class, found.element, found.rule, found.spec, `${what}: ${found.message}`);
    }
    // A map's keys (`propertyNames`, always strings) are sent or read as its values are: a key
    // pattern or enum is compared as a value's would be in this direction, reported on the map.
    if (b.schema.propertyNames !== undefined || a.schema.propertyNames !== undefined) {
      const keysOf = (schema: Json): Json => ({ allOf: [{ type: 'string' }, schema.propertyNames ?? {}] });
      const keys = new OpenApiComparison(this.before, this.after);
      keys.compareSchemas(keysOf(b.schema), keysOf(a.schema), direction, element, nextSeen, false);
      for (const found of keys.changes) this.add(found.class, found.element, found.rule, found.spec, `keys: ${found.message}`);
    }
    if (b.variants.length > 0 && a.variants.length > 0) this.compareAlternatives(b.variants, a.variants, alternativeLabels(this.after, a.written), direction, element, nextSeen);
    // One shape became alternatives (`string` -> `uuid | "first"`): what the alternatives accept
    // together is compared above (their types, their values when all are literals), but not what
    // each of them constrains. What an old client sends must still fit one of them, as a whole:
    // each value of an old enum, or each of several old types, on its own (`"a" | "b"` as two
    // literals, `string | integer` as two alternatives, take what the one shape took).
    const refused = this.changes.slice(first).some((found) => found.class === 'breaking' && found.element === element);
    if (direction === 'request' && b.variants.length === 0 && a.variants.length > 0 && !refused) {
      const fitsOne = (sent: SchemaView): boolean =>
        a.variants.some((variant) => {
          const taker = view(this.after, { allOf: [a.outer ?? {}, variant] });
          // An alternative made of the schema being compared (a shape made of itself) is taken as
          // it is being judged already, rather than tried again without end.
          const pair = `${sent.refs.join(',')}|${taker.refs.join(',')}`;
          if (taker.refs.length > 0 && nextSeen.includes(pair)) return true;
          const trial = new OpenApiComparison(this.before, this.after);
          trial.compareViews(sent, { ...taker, nullable: b.nullable }, direction, element, [...nextSeen, pair], false);
          return !trial.changes.some((found) => found.class === 'breaking');
        });
      if (!sentAs(b).every(fitsOne)) this.add('breaking', element, 'request-constraint-tightened', specRule.tighterRequest, `one shape -> ${a.variants.length} alternative shapes, none of which accepts everything accepted before`);
    }
  }

  /**
   * Alternatives (anyOf/oneOf) as sets, in whatever order they are written: in a request each old
   * alternative must be taken whole by a new one (what an old client sends still fits one), in a
   * response each new one must be taken whole by an old one (what an old client reads is of a
   * shape it knows). Each is compared with the alternative that takes it with the fewest changes,
   * the one at its own position first; one no alternative takes is a type change, and one left
   * over on the other side is a widening (request) or a narrowing (response).
   */
  private compareAlternatives(before: Json[], after: Json[], afterLabels: string[], direction: Direction, element: string, seen: string[]): void {
    // Request: each old alternative looks for a new one that takes it; response: each new one for an old one.
    const [seekers, candidates] = direction === 'request' ? [before, after] : [after, before];
    const pairOf = (seeker: number, candidate: number): [number, number] => (direction === 'request' ? [seeker, candidate] : [candidate, seeker]);
    const matchedCandidates = new Set<number>();
    const describe = (alternative: Json, doc: Json): string => {
      const shape = view(doc, alternative);
      const values = valuesOf(shape.schema);
      if (values) return values.map((value) => JSON.stringify(value)).join(' | ');
      const properties = isObject(shape.schema.properties) ? ` (${Object.keys(shape.schema.properties).join(', ')})` : '';
      return `${shape.types.join('|') || 'any'}${properties}`;
    };
    seekers.forEach((seeker, seekerIndex) => {
      const order = [...candidates.keys()].sort((x, y) => Number(y === seekerIndex) - Number(x === seekerIndex));
      let best: { index: number; changes: number } | undefined;
      // Without a match, what keeps the nearest alternative from being one is named in the finding:
      // the one with the fewest refusals, one of another type only after those of the same.
      let closest: { index: number; refusals: string[]; distance: number; within: { place: string; rule: string }[] } | undefined;
      for (const candidateIndex of order) {
        const [beforeIndex, afterIndex] = pairOf(seekerIndex, candidateIndex);
        const trial = new OpenApiComparison(this.before, this.after);
        trial.compareSchemas(before[beforeIndex], after[afterIndex], direction, element, seen, false);
        const breaking = trial.changes.filter((found) => found.class === 'breaking');
        if (breaking.length > 0) {
          const retyped = breaking.some((found) => found.element === element && (found.rule === 'type-changed' || found.rule === 'number-string-changed'));
          const distance = breaking.length + (retyped ? candidates.length * 1000 : 0);
          const refusals = breaking.map((found) => `${found.element.slice(element.length)} ${found.message}`.trim());
          const within = breaking.map((found) => ({ place: found.element.slice(element.length), rule: found.rule }));
          if (!closest || distance < closest.distance) closest = { index: candidateIndex, refusals, distance, within };
          continue;
        }
        if (!best || trial.changes.length < best.changes) best = { index: candidateIndex, changes: trial.changes.length };
        if (best.changes === 0) break;
      }
      const nearest = closest ? `; the nearest, ${direction === 'request' ? '' : 'old '}alternative ${closest.index}, differs: ${closest.refusals.slice(0, 3).join('; ')}` : '';
      if (!best && closest) matchedCandidates.add(closest.index);
      if (best) {
        matchedCandidates.add(best.index);
        const [beforeIndex, afterIndex] = pairOf(seekerIndex, best.index);
        this.compareSchemas(before[beforeIndex], after[afterIndex], direction, `${element}<${afterLabels[afterIndex]}>`, seen, false);
      } else {
        if (direction === 'request') this.add('breaking', element, 'type-changed', specRule.typeChanged, `old alternative ${seekerIndex} (${describe(seeker, this.before)}) is taken by none of the ${after.length} alternatives now${nearest}`);
        else this.add('breaking', element, 'type-changed', specRule.typeChanged, `alternative ${seekerIndex} (${describe(seeker, this.after)}) may be answered, a shape none of the ${before.length} old alternatives had${nearest}`);
        // What differs in the nearest, named inside the alternative as a match would be (<new index>),
        // so that an approval can name that instead of every change to the whole element.
        const found = this.changes[this.changes.length - 1];
        if (closest) {
          const at = `<${afterLabels[pairOf(seekerIndex, closest.index)[1]]}>`;
          found.within = closest.within.map(({ place, rule }) => ({ element: `${element}${at}${place}`, ...(found.alias ? { alias: `${found.alias}${at}${place}` } : {}), rule }));
        }
      }
    });
    candidates.forEach((candidate, candidateIndex) => {
      if (matchedCandidates.has(candidateIndex)) return;
      if (direction === 'request') this.add('safe', element, 'type-widened', specRule.compatible, `alternative ${candidateIndex} (${describe(candidate, this.after)}) is accepted now`);
      else this.add('safe', element, 'type-narrowed', specRule.compatible, `old alternative ${candidateIndex} (${describe(candidate, this.before)}) is no longer answered`);
    });
  }

  private compareEnums(b: Json, a: Json, direction: Direction, element: string): void {
    const before = valuesOf(b);
    const after = valuesOf(a);
    if (!before && !after) return;
    if (before && after) {
      const afterKeys = new Set(after.map((value) => JSON.stringify(value)));
      const beforeKeys = new Set(before.map((value) => JSON.stringify(value)));
      for (const value of before) if (!afterKeys.has(JSON.stringify(value))) this.add('breaking', element, 'enum-value-removed', specRule.removed, `enum value ${JSON.stringify(value)} removed`);
      for (const value of after) {
        if (beforeKeys.has(JSON.stringify(value))) continue;
        if (direction === 'request') this.add('safe', element, 'request-enum-value-added', specRule.nonBreaking, `enum value ${JSON.stringify(value)} accepted`);
        else this.add('dangerous', element, 'response-enum-value-added', specRule.newResponseValue, `enum value ${JSON.stringify(value)} may be answered`);
      }
      return;
    }
    if (direction === 'request') {
      if (after) this.add('breaking', element, 'request-constraint-tightened', specRule.tighterRequest, `only ${after.map((v) => JSON.stringify(v)).join(', ')} accepted now`);
      else this.add('safe', element, 'request-constraint-loosened', specRule.compatible, 'any value accepted now');
    } else if (after) this.add('safe', element, 'response-constraint-changed', specRule.compatible, 'answers are limited to an enum now');
    else this.add('dangerous', element, 'response-enum-value-added', specRule.newResponseValue, 'answers are no longer limited to an enum');
  }

  private compareConstraints(b: Json, a: Json, direction: Direction, element: string): void {
    // An answer within tighter limits is one old clients read; one outside the old limits (a
    // negative amount where the minimum was 0, a longer name) is a value they have not seen, as a
    // new enum value is: told in the changelog (a limit is what clients size and check by).
    // `tighter`: a value the old schema took may be refused (a request breaks); `looser`: a value
    // the old schema refused may be taken (an answer is new to clients). A changed pattern is both.
    const report = (tighter: boolean, what: string, looser = !tighter): void => {
      if (direction === 'response' && !looser) this.add('safe', element, 'response-constraint-changed', specRule.compatible, what);
      else if (direction === 'response') this.add('dangerous', element, 'response-constraint-loosened', specRule.newResponseValue, `${what}: answers may fall outside the old limits`);
      else if (tighter) this.add('breaking', element, 'request-constraint-tightened', specRule.tighterRequest, what);
      else this.add('safe', element, 'request-constraint-loosened', specRule.compatible, what);
    };
    for (const [key, tightWhen] of limits) {
      const before = b[key];
      const after = a[key];
      if (same(before, after)) continue;
      const tighter =
        typeof after === 'number' && (typeof before !== 'number' || (tightWhen === 'lower' ? after < before : after > before));
      report(tighter, `${key} ${before ?? 'none'} -> ${after ?? 'none'}`);
    }
    // A sort parameter's pattern is made from its field list: the list tells what the pattern cannot.
    const sortFields = [sortFieldsOf(b), sortFieldsOf(a)];
    if (sortFields[0] && sortFields[1]) {
      const [beforeFields, afterFields] = sortFields.map((fields) => new Set(fields));
      const removed = [...beforeFields].filter((field) => !afterFields.has(field));
      const added = [...afterFields].filter((field) => !beforeFields.has(field));
      if (removed.length) report(true, `sort fields removed: ${removed.join(', ')}`);
      if (added.length) report(false, `sort fields added: ${added.join(', ')}`);
    }
    // A response value's format is how a generated client reads it (date-time as a date, int32 in
    // a 32-bit integer): one changed or dropped may answer what an old client cannot read.
    // Several formats (allOf members' each) all hold: one more is tighter, one fewer looser.
    const [beforeFormats, afterFormats] = [formatsOf(b), formatsOf(a)];
    const formatChange = `format ${JSON.stringify(b.format ?? null)} -> ${JSON.stringify(a.format ?? null)}`;
    // A format is kept when the other side has it or, for numbers, one it holds every value of:
    // a response's int64 made int32 still fits the old format, a request's int32 made int64 refuses nothing.
    const parsed = direction === 'response' && beforeFormats.some((format) => FORMATS_CLIENTS_PARSE.has(format) && !afterFormats.some((now) => fitsIn(now, format)));
    if (parsed) {
      this.add('breaking', element, 'response-format-changed', specRule.typeChanged, `${formatChange}: values old clients parse by the old format may not fit it`);
    } else if (!same([...beforeFormats].sort(), [...afterFormats].sort())) {
      report(
        afterFormats.some((format) => !beforeFormats.some((was) => fitsIn(was, format))),
        formatChange,
        beforeFormats.some((was) => !afterFormats.some((format) => fitsIn(format, was))),
      );
    }
    // A multiple of the new multipleOf is one of the old when the new is a multiple of the old: 0.01 -> 0.05 refuses 1.01.
    if (!same(b.multipleOf, a.multipleOf)) {
      const [was, is] = [b.multipleOf, a.multipleOf];
      report(
        typeof is === 'number' && (typeof was !== 'number' || !isMultipleOf(was, is)),
        `multipleOf ${JSON.stringify(was ?? null)} -> ${JSON.stringify(is ?? null)}`,
        typeof was === 'number' && (typeof is !== 'number' || !isMultipleOf(is, was)),
      );
    }
    if (!same(b.pattern, a.pattern) && !(sortFields[0] && sortFields[1])) {
      report(a.pattern !== undefined, `pattern ${JSON.stringify(b.pattern ?? null)} -> ${JSON.stringify(a.pattern ?? null)}`, b.pattern !== undefined);
    }
    if (Boolean(b.uniqueItems) !== Boolean(a.uniqueItems)) report(Boolean(a.uniqueItems), `uniqueItems ${Boolean(b.uniqueItems)} -> ${Boolean(a.uniqueItems)}`);
    for (const key of wholeKeywords) {
      if (b[key] === undefined && a[key] === undefined) continue;
      const [was, is] = [inlined(this.before, b[key]), inlined(this.after, a[key])];
      if (same(was, is)) continue;
      report(a[key] !== undefined, `${key} ${b[key] === undefined ? 'added' : a[key] === undefined ? 'dropped' : 'changed'} (compared as written, refs followed: ${JSON.stringify(was ?? null).slice(0, 80)} -> ${JSON.stringify(is ?? null).slice(0, 80)})`, b[key] !== undefined);
    }
    // A check JSON Schema cannot state (a zod refine), listed by its message: one added refuses
    // what old clients may send. Against a document that listed none, the server made them unseen.
    // One under the same message at another version is tighter or looser as it declares. In an
    // answer a check is a promise clients may code against (each product named once): one dropped
    // or loosened breaks it, one added or tightened is safe.
    const afterChecks = checksOf(a);
    // A check reworded (listed now with `formerly` naming its released message) is the same check
    // under its new message: it takes and refuses what it did, only the refusal's text differs
    // (clients branch on its code), so it is compared as that check and reported as safe.
    const beforeChecks = checksOf(b).map((check) => {
      const successor = afterChecks.some((candidate) => candidate.message === check.message) ? undefined : afterChecks.find((candidate) => candidate.formerly.includes(check.message));
      if (!successor) return check;
      this.add('safe', element, 'check-reworded', specRule.compatible, `check reworded: ${JSON.stringify(check.message)} -> ${JSON.stringify(successor.message)}`);
      return { ...check, message: successor.message };
    });
    const messages = (checks: Check[]): string[] => checks.map((check) => check.message);
    const [addedChecks, droppedChecks] = [beyond(messages(afterChecks), messages(beforeChecks)), beyond(messages(beforeChecks), messages(afterChecks))];
    const loosenedAnswer = (what: string): void => this.add('breaking', element, 'response-check-loosened', specRule.typeChanged, `${what}: answers may no longer hold to what old clients relied on`);
    if (addedChecks.length > 0) {
      const what = `checks added: ${addedChecks.map((check) => JSON.stringify(check)).join(', ')}`;
      if (direction === 'request' && !documentStatesChecks(this.before)) this.add('safe', element, 'checks-documented', specRule.compatible, `${what}, in a document whose release listed no checks: the server made them before too`);
      else report(true, what);
    }
    if (droppedChecks.length > 0) {
      const what = `checks dropped: ${droppedChecks.map((check) => JSON.stringify(check)).join(', ')}`;
      if (direction === 'response') loosenedAnswer(what);
      else report(false, what);
    }
    for (const check of afterChecks) {
      const old = beforeChecks.find((candidate) => candidate.message === check.message);
      if (!old || old.version === check.version) continue;
      const how = revisionBetween(old, check);
      const what = `check ${JSON.stringify(check.message)} version ${old.version} -> ${check.version} (${how === 'unknown' ? 'declared neither tighter nor looser throughout: taken as both' : how})`;
      if (direction === 'response' && how !== 'tighter') loosenedAnswer(what);
      else report(how !== 'looser', what);
    }
    const closed = (schema: Json): boolean => schema.additionalProperties === false || schema.unevaluatedProperties === false;
    if (closed(b) !== closed(a)) report(closed(a), closed(a) ? 'unknown properties refused now' : 'unknown properties accepted now');
  }

  private compareProperties(b: Json, a: Json, direction: Direction, element: string, seen: string[]): void {
    const beforeProperties = isObject(b.properties) ? b.properties : {};
    const afterProperties = isObject(a.properties) ? a.properties : {};
    const beforeRequired = new Set(Array.isArray(b.required) ? (b.required as string[]) : []);
    const afterRequired = new Set(Array.isArray(a.required) ? (a.required as string[]) : []);
    // readOnly fields are never sent by a client, writeOnly ones never answered: each side's in its
    // own document. A field that becomes so has left this direction, as a removed one has.
    const visible = (doc: Json, schema: unknown): boolean => {
      const node = withAllOf(doc, schema, []);
      return direction === 'request' ? node.readOnly !== true : node.writeOnly !== true;
    };
    const hidden = direction === 'request' ? 'readOnly' : 'writeOnly';
    for (const [name, schema] of Object.entries(beforeProperties)) {
      if (!visible(this.before, schema)) continue;
      const path = `${element}.${name}`;
      if (!(name in afterProperties)) {
        this.add('breaking', path, 'field-removed', specRule.removed, `${direction} field removed`);
        continue;
      }
      if (!visible(this.after, afterProperties[name])) {
        this.add('breaking', path, 'field-removed', specRule.removed, `${direction} field removed (${hidden} now: ${direction === 'request' ? 'no longer taken from a request' : 'no longer answered'})`);
        continue;
      }
      const wasRequired = beforeRequired.has(name);
      const isRequired = afterRequired.has(name);
      if (wasRequired !== isRequired) {
        if (direction === 'request') {
          if (isRequired) this.add('breaking', path, 'request-field-became-required', specRule.requiredParameter, 'request field is required now');
          else this.add('safe', path, 'request-field-became-optional', specRule.compatible, 'request field is optional now');
        } else if (isRequired) this.add('safe', path, 'response-field-became-required', specRule.compatible, 'response field is always present now');
        else this.add('breaking', path, 'response-field-became-optional', specRule.removed, 'response field may be left out now');
      }
      this.compareSchemas(schema, afterProperties[name], direction, path, seen, true);
    }
    for (const [name, schema] of Object.entries(afterProperties)) {
      if ((name in beforeProperties && visible(this.before, beforeProperties[name])) || !visible(this.after, schema)) continue;
      const path = `${element}.${name}`;
      if (direction === 'response') this.add('safe', path, 'response-field-added', specRule.nonBreaking, 'response field added');
      else if (afterRequired.has(name)) this.add('breaking', path, 'required-request-field-added', specRule.requiredParameter, 'new required request field');
      else this.add('safe', path, 'optional-request-field-added', specRule.nonBreaking, 'new optional request field');
    }
  }
}

interface Operation {
  element: string;
  key: string;
  major: string | undefined;
  pathItem: Json;
  operation: Json;
}

function serverPath(doc: Json, pathItem: Json, operation: Json): string {
  const servers = [operation.servers, pathItem.servers, doc.servers].find((list) => Array.isArray(list) && list.length > 0) as Json[] | undefined;
  const url = typeof servers?.[0]?.url === 'string' ? servers[0].url : '';
  const pathname = url.replace(/^[a-z]+:\/\/[^/]+/i, '');
  return pathname.replace(/\/$/, '');
}

/** Every operation by method and full path (server base included: the document's paths leave out /v1). */
export function operationsOf(doc: Json): Map<string, Operation> {
  const operations = new Map<string, Operation>();
  for (const [path, item] of Object.entries(isObject(doc.paths) ? doc.paths : {})) {
    const pathItem = resolve(doc, item).node;
    for (const method of methods) {
      const operation = pathItem[method];
      if (!isObject(operation)) continue;
      const fullPath = `${serverPath(doc, pathItem, operation)}${path}`;
      const key = `${method.toUpperCase()} ${fullPath.replace(/\{[^}]+\}/g, '{}')}`;
      operations.set(key, { element: `rest:${method.toUpperCase()} ${fullPath}`, key, major: /^\/(v\d+)(\/|$)/.exec(fullPath)?.[1], pathItem, operation });
    }
  }
  return operations;
}

interface Parameter {
  label: string;
  node: Json;
}

/** Parameters by location and name; path parameters by position, since renaming `{id}` changes nothing for a client. */
function parametersOf(doc: Json, path: string, operation: Operation): Map<string, Parameter> {
  const parameters = new Map<string, Parameter>();
  const all = [...(Array.isArray(operation.pathItem.parameters) ? operation.pathItem.parameters : []), ...(Array.isArray(operation.operation.parameters) ? operation.operation.parameters : [])];
  const templateNames = [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]);
  for (const raw of all) {
    const node = resolve(doc, raw).node;
    const location = String(node.in);
    const name = String(node.name);
    const key = location === 'path' ? `path#${templateNames.indexOf(name)}` : `${location}.${location === 'header' ? name.toLowerCase() : name}`;
    parameters.set(key, { label: `${location}.${name}`, node });
  }
  return parameters;
}

/**
 * The media type a parameter or header is written in when it says so (`content` instead of
 * `schema`: `?filter={"name":"x"}` as application/json). OpenAPI allows exactly one.
 */
function contentTypeOf(parameter: Json): string | undefined {
  return isObject(parameter.content) ? Object.keys(parameter.content)[0] : undefined;
}

/** The schema of a parameter's or header's value: its `schema`, or that of its one `content` media type. */
function valueSchemaOf(parameter: Json): unknown {
  const mediaType = contentTypeOf(parameter);
  if (mediaType === undefined) return parameter.schema ?? {};
  const media = (parameter.content as Json)[mediaType];
  return isObject(media) ? media.schema ?? {} : {};
}

/**
 * How a client writes a parameter's value (OpenAPI's style and explode, with their defaults:
 * form and exploded in a query or cookie, simple elsewhere): `status=A,B` against
 * `status=A&status=B` for a list. `structured` when the value is a list or an object, the only
 * values explode changes. A value written in a media type (`content`) is written as that says.
 */
function serializationOf(doc: Json, parameter: Json): { style: string; explode: boolean; structured: boolean; label: string } {
  const mediaType = contentTypeOf(parameter);
  if (mediaType !== undefined) return { style: `content ${mediaType}`, explode: false, structured: false, label: `${mediaType} (content)` };
  const style = typeof parameter.style === 'string' ? parameter.style : parameter.in === 'query' || parameter.in === 'cookie' ? 'form' : 'simple';
  const explode = typeof parameter.explode === 'boolean' ? parameter.explode : style === 'form';
  const types = view(doc, valueSchemaOf(parameter)).types;
  const structured = types.includes('array') || types.includes('object');
  return { style, explode, structured, label: `${style}${structured ? (explode ? ', exploded' : ', not exploded') : ''}` };
}

/** The `code` values a response documents (the generator writes "`code`: A, B." into its description). */
function errorCodesOf(response: Json): string[] {
  const match = typeof response.description === 'string' ? /`code`:\s*([A-Z0-9_,\s]+)/.exec(response.description) : null;
  return match ? match[1].split(',').map((code) => code.trim()).filter(Boolean) : [];
}

function mediaLabel(mediaType: string): string {
  return mediaType === 'application/json' ? 'body' : `body(${mediaType})`;
}

/** Who may call, least to most restricted (the document's `x-access`, tools/openapi/document.ts). */
const accessLevels = ['public', 'signed-in', 'admin'];

interface AccessView {
  /** `x-access`, else `public` when no credential is needed, else unknown (some credential). */
  level: string | undefined;
  documented: boolean;
  /** Whether an API key (a security scheme of type apiKey) is among the credentials that work. */
  keys: boolean;
  /** The scopes such a key must have. */
  scopes: string[];
}

function accessOf(doc: Json, operation: Operation): AccessView {
  const security = (Array.isArray(operation.operation.security) ? operation.operation.security : Array.isArray(doc.security) ? doc.security : []).filter(isObject);
  const schemes = isObject(doc.components) && isObject(doc.components.securitySchemes) ? doc.components.securitySchemes : {};
  const apiKeySchemes = new Set(Object.keys(schemes).filter((name) => resolve(doc, schemes[name]).node.type === 'apiKey'));
  const keyRequirements = security.filter((requirement) => Object.keys(requirement).some((name) => apiKeySchemes.has(name)));
  // Where the document writes a key's scope (`x-api-key-scopes`, tools/openapi/document.ts), or in the requirement itself (OpenAPI 3.1's roles).
  const extensionScopes = keyRequirements.length > 0 && Array.isArray(operation.operation['x-api-key-scopes']) ? (operation.operation['x-api-key-scopes'] as unknown[]).map(String) : [];
  const scopes = [...extensionScopes, ...keyRequirements.flatMap((requirement) => Object.entries(requirement).flatMap(([name, list]) => (apiKeySchemes.has(name) && Array.isArray(list) ? list.map(String) : [])))];
  const declared = operation.operation['x-access'];
  const documented = typeof declared === 'string' && accessLevels.includes(declared);
  const open = security.length === 0 || security.some((requirement) => Object.keys(requirement).length === 0);
  return { level: documented ? (declared as string) : open ? 'public' : undefined, documented, keys: keyRequirements.length > 0, scopes: [...new Set(scopes)].sort() };
}

/**
 * The ways a caller may present credentials to the operation, as the caller sends them: one entry
 * per security requirement (its schemes together), each scheme by what it asks of a request (an
 * API key's header, query parameter or cookie and its name; an HTTP scheme), not by its name in
 * the document. `''` is the empty requirement (no credential).
 */
function credentialsOf(doc: Json, operation: Operation): Set<string> {
  const security = (Array.isArray(operation.operation.security) ? operation.operation.security : Array.isArray(doc.security) ? doc.security : []).filter(isObject);
  const schemes = isObject(doc.components) && isObject(doc.components.securitySchemes) ? doc.components.securitySchemes : {};
  const sent = (name: string): string => {
    const scheme = resolve(doc, schemes[name]).node;
    if (scheme.type === 'apiKey') return `an API key in ${String(scheme.in)} ${scheme.in === 'header' ? String(scheme.name).toLowerCase() : String(scheme.name)}`;
    if (scheme.type === 'http') return `HTTP ${String(scheme.scheme).toLowerCase()} authentication`;
    if (scheme.type === 'oauth2') return `OAuth 2 (${Object.entries(isObject(scheme.flows) ? scheme.flows : {}).map(([flow, value]) => `${flow} ${isObject(value) ? String(value.tokenUrl ?? value.authorizationUrl ?? '') : ''}`).sort().join(', ')})`;
    if (scheme.type === 'openIdConnect') return `OpenID Connect (${String(scheme.openIdConnectUrl)})`;
    return String(scheme.type ?? name);
  };
  return new Set(security.map((requirement) => Object.keys(requirement).map(sent).sort().join(' with ')));
}

/**
 * Who may call the operation, and how they present their credentials: a way of presenting them
 * that worked (an API key in the X-Api-Key header, a bearer token) and no longer does refuses
 * every old client that uses it, whatever the access level says.
 */
function compareAccess(comparison: OpenApiComparison, old: Operation, operation: Operation): void {
  const first = comparison.changes.length;
  compareWhoMayCall(comparison, old, operation);
  const judged = comparison.changes.slice(first);
  if (judged.some((found) => found.class === 'breaking')) return;
  const before = credentialsOf(comparison.before, old);
  const after = credentialsOf(comparison.after, operation);
  if (after.has('')) return; // public now: any credential, or none, is taken
  // A baseline that did not say who may call (the document's default security) getting it
  // documented without API keys is access-documented, safe: its default's API key was no promise.
  const documentedNow = judged.some((found) => found.rule === 'access-documented');
  const isKey = (way: string): boolean => way.startsWith('an API key');
  const keysAfter = [...after].some((way) => way.split(' with ').some(isKey));
  const lost = [...before].filter((way) => way !== '' && !after.has(way) && !(documentedNow && !keysAfter && way.split(' with ').some(isKey)));
  if (lost.length === 0) return;
  comparison.changes.push(change('rest', 'breaking', `${operation.element} security`, 'credentials-changed', specRule.narrowerAccess, `${lost.join('; ')} no longer accepted (now: ${[...after].join('; ') || 'nothing'}): callers presenting it are refused (401)`));
}

/**
 * Who may call the operation: narrower (public -> signed-in or admin, signed-in -> admin, a key
 * refused, a scope a key needs added or changed) is breaking, wider is safe. A baseline that did
 * not say (no `x-access`, the document's default security) gets it documented: safe.
 */
function compareWhoMayCall(comparison: OpenApiComparison, old: Operation, operation: Operation): void {
  const add = (cls: ChangeClass, rule: string, spec: string, message: string): void => {
    comparison.changes.push(change('rest', cls, `${operation.element} security`, rule, spec, message));
  };
  const b = accessOf(comparison.before, old);
  const a = accessOf(comparison.after, operation);
  const keys = (view: AccessView) => (view.keys ? `API keys need ${view.scopes.join(' and ') || 'no scope'}` : 'no API key');
  if (b.level === 'public' && a.level !== 'public') {
    add('breaking', 'access-narrowed', specRule.narrowerAccess, `access public -> ${a.level ?? 'a credential'}: callers without ${a.level === 'admin' ? "an administrator's credential" : 'one'} are refused now`);
    return;
  }
  if (b.level !== 'public' && a.level === 'public') {
    add('safe', 'access-widened', specRule.compatible, `access ${b.level ?? 'a credential'} -> public`);
    return;
  }
  if (a.level === 'public') return;
  if (!b.documented && a.documented && b.level === undefined) {
    add('safe', 'access-documented', specRule.compatible, `who may call it is documented: ${a.level}; ${keys(a)}`);
    return;
  }
  if (b.level !== undefined && a.level !== undefined && b.level !== a.level) {
    if (accessLevels.indexOf(a.level) > accessLevels.indexOf(b.level)) add('breaking', 'access-narrowed', specRule.narrowerAccess, `access ${b.level} -> ${a.level}: callers allowed before are refused (403) now`);
    else add('safe', 'access-widened', specRule.compatible, `access ${b.level} -> ${a.level}`);
  }
  if (b.keys && !a.keys) add('breaking', 'api-key-refused', specRule.narrowerAccess, `API keys are refused now (${keys(b)} before)`);
  else if (!b.keys && a.keys) add('safe', 'api-key-accepted', specRule.compatible, `API keys are accepted now: ${keys(a)}`);
  else if (b.keys && a.keys) {
    const added = a.scopes.filter((scope) => !b.scopes.includes(scope));
    const removed = b.scopes.filter((scope) => !a.scopes.includes(scope));
    if (added.length > 0) add('breaking', 'api-key-scope-changed', specRule.narrowerAccess, `${keys(a)} now (${b.scopes.join(' and ') || 'no scope'} before): keys without it are refused (403)`);
    else if (removed.length > 0) add('safe', 'api-key-scope-removed', specRule.compatible, `${keys(a)} now (${b.scopes.join(' and ')} before)`);
  }
}

/** Every change from `old` (an operation of `comparison`'s before document) to `operation` (of its after document). */
function compareOperation(comparison: OpenApiComparison, old: Operation, operation: Operation): void {
  const { before, after } = comparison;
  const add = (cls: ChangeClass, element: string, rule: string, spec: string, message: string): void => {
    comparison.changes.push(change('rest', cls, element, rule, spec, message));
  };
  const element = operation.element;
  const path = element.slice(element.indexOf(' ') + 1);

  compareAccess(comparison, old, operation);

  // Parameters.
  const beforeParameters = parametersOf(before, old.element.slice(old.element.indexOf(' ') + 1), old);
  const afterParameters = parametersOf(after, path, operation);
  for (const [parameterKey, parameter] of beforeParameters) {
    const next = afterParameters.get(parameterKey);
    const parameterElement = `${element} ${parameter.label}`;
    if (!next) {
      add('breaking', parameterElement, 'parameter-removed', specRule.removed, 'parameter removed');
      continue;
    }
    const wasRequired = parameter.node.required === true;
    const isRequired = next.node.required === true;
    if (!wasRequired && isRequired) add('breaking', parameterElement, 'parameter-became-required', specRule.requiredParameter, 'parameter is required now');
    if (wasRequired && !isRequired) add('safe', parameterElement, 'parameter-became-optional', specRule.compatible, 'parameter is optional now');
    if (typeof parameter.node.description === 'string' && parameter.node.description !== next.node.description) {
      add('dangerous', parameterElement, 'description-changed', specRule.meaning, `description changed: ${JSON.stringify(parameter.node.description)} -> ${JSON.stringify(next.node.description ?? '')}`);
    }
    const was = serializationOf(before, parameter.node);
    const is = serializationOf(after, next.node);
    if (was.style !== is.style || (was.explode !== is.explode && (was.structured || is.structured))) {
      add('breaking', parameterElement, 'parameter-serialization-changed', specRule.tighterRequest, `serialized as ${was.label} -> ${is.label}: a value written the old way is read as another value, or refused`);
    }
    comparison.compareSchemas(valueSchemaOf(parameter.node), valueSchemaOf(next.node), 'request', parameterElement, [], false);
  }
  for (const [parameterKey, parameter] of afterParameters) {
    if (beforeParameters.has(parameterKey)) continue;
    const parameterElement = `${element} ${parameter.label}`;
    if (parameter.node.required === true) add('breaking', parameterElement, 'required-parameter-added', specRule.requiredParameter, 'new required parameter');
    else add('safe', parameterElement, 'optional-parameter-added', specRule.nonBreaking, 'new optional parameter');
  }

  // Request body.
  const beforeBody = old.operation.requestBody === undefined ? undefined : resolve(before, old.operation.requestBody).node;
  const afterBody = operation.operation.requestBody === undefined ? undefined : resolve(after, operation.operation.requestBody).node;
  if (beforeBody && !afterBody) add('breaking', `${element} request.body`, 'request-body-removed', specRule.removed, 'request body removed');
  if (!beforeBody && afterBody) {
    if (afterBody.required === true) add('breaking', `${element} request.body`, 'required-request-body-added', specRule.requiredParameter, 'a request body is required now');
    else add('safe', `${element} request.body`, 'optional-request-body-added', specRule.nonBreaking, 'an optional request body is accepted now');
  }
  if (beforeBody && afterBody) {
    if (beforeBody.required !== true && afterBody.required === true) add('breaking', `${element} request.body`, 'request-body-became-required', specRule.requiredParameter, 'the request body is required now');
    const beforeContent = isObject(beforeBody.content) ? beforeBody.content : {};
    const afterContent = isObject(afterBody.content) ? afterBody.content : {};
    for (const [mediaType, media] of Object.entries(beforeContent)) {
      const bodyElement = `${element} request.${mediaLabel(mediaType)}`;
      const next = afterContent[mediaType];
      if (!isObject(next)) add('breaking', bodyElement, 'media-type-removed', specRule.removed, `request media type ${mediaType} no longer accepted`);
      else comparison.compareSchemas(isObject(media) ? media.schema ?? {} : {}, next.schema ?? {}, 'request', bodyElement, [], false);
    }
    for (const mediaType of Object.keys(afterContent)) {
      if (!(mediaType in beforeContent)) add('safe', `${element} request.${mediaLabel(mediaType)}`, 'media-type-added', specRule.nonBreaking, `request media type ${mediaType} accepted`);
    }
  }

  // Responses.
  const beforeResponses = isObject(old.operation.responses) ? old.operation.responses : {};
  const afterResponses = isObject(operation.operation.responses) ? operation.operation.responses : {};
  for (const [status, raw] of Object.entries(beforeResponses)) {
    const responseElement = `${element} response.${status}`;
    if (!(status in afterResponses)) {
      // The 410 the registry adds while something of the operation is deprecated (tools/openapi
      // document.ts): once nothing is, nothing answers it, and no client misses an error it can
      // no longer get. The last step of a replacement drops the entry and with it this 410.
      if (status === '410' && (raw as Json)?.$ref === '#/components/responses/Gone') {
        add('safe', responseElement, 'deprecation-gone-removed', specRule.compatible, 'status 410 (GONE: a deprecated element) no longer answered: nothing of the operation is deprecated any more');
        continue;
      }
      add('breaking', responseElement, 'response-status-removed', specRule.removedError, `status ${status} no longer answered`);
      continue;
    }
    const response = resolve(before, raw).node;
    const next = resolve(after, afterResponses[status]).node;
    const nextCodes = errorCodesOf(next);
    const codes = errorCodesOf(response);
    for (const code of codes) if (!nextCodes.includes(code)) add('breaking', `${responseElement} code.${code}`, 'error-code-removed', specRule.removedError, `error code ${code} no longer answered with ${status}`);
    for (const code of nextCodes) if (!codes.includes(code)) add('safe', `${responseElement} code.${code}`, 'error-code-added', specRule.nonBreaking, `error code ${code} added to ${status}`);
    const beforeHeaders = isObject(response.headers) ? response.headers : {};
    const afterHeaders = isObject(next.headers) ? next.headers : {};
    const afterHeaderNames = new Map(Object.keys(afterHeaders).map((name) => [name.toLowerCase(), name]));
    for (const [name, header] of Object.entries(beforeHeaders)) {
      const nextName = afterHeaderNames.get(name.toLowerCase());
      if (!nextName) {
        add('breaking', `${responseElement}.header.${name}`, 'response-header-removed', specRule.removed, `header ${name} no longer sent`);
        continue;
      }
      const [was, is] = [resolve(before, header).node, resolve(after, afterHeaders[nextName]).node];
      // A header always sent that may be left out now is, for a client reading it, a removal at times.
      if (was.required === true && is.required !== true) add('breaking', `${responseElement}.header.${name}`, 'response-header-became-optional', specRule.removed, `header ${name} may be left out now`);
      comparison.compareSchemas(valueSchemaOf(was), valueSchemaOf(is), 'response', `${responseElement}.header.${name}`, [], false);
    }
    const beforeHeaderNames = new Set(Object.keys(beforeHeaders).map((name) => name.toLowerCase()));
    for (const name of Object.keys(afterHeaders)) {
      if (!beforeHeaderNames.has(name.toLowerCase())) add('safe', `${responseElement}.header.${name}`, 'response-header-added', specRule.nonBreaking, `header ${name} added`);
    }
    const beforeContent = isObject(response.content) ? response.content : {};
    const afterContent = isObject(next.content) ? next.content : {};
    for (const [mediaType, media] of Object.entries(beforeContent)) {
      const bodyElement = `${responseElement}.${mediaLabel(mediaType)}`;
      const nextMedia = afterContent[mediaType];
      if (!isObject(nextMedia)) add('breaking', bodyElement, 'media-type-removed', specRule.removed, `response media type ${mediaType} no longer offered`);
      else comparison.compareSchemas(isObject(media) ? media.schema ?? {} : {}, nextMedia.schema ?? {}, 'response', bodyElement, [], false);
    }
    for (const mediaType of Object.keys(afterContent)) {
      if (!(mediaType in beforeContent)) add('safe', `${responseElement}.${mediaLabel(mediaType)}`, 'media-type-added', specRule.nonBreaking, `response media type ${mediaType} offered`);
    }
  }
  for (const status of Object.keys(afterResponses)) {
    if (status in beforeResponses) continue;
    // A new error status is a new error code (spec rule 2); a new success or redirect status is a
    // new kind of answer to a call an old client makes (a 202 without the body it reads): it is
    // told in the changelog, as a new response enum value is.
    if (/^[23]/.test(status)) add('dangerous', `${element} response.${status}`, 'success-status-added', specRule.newResponseValue, `status ${status} may be answered where an old client expects ${Object.keys(beforeResponses).filter((code) => /^[23]/.test(code)).join(' or ') || 'another'}`);
    else add('safe', `${element} response.${status}`, 'response-status-added', specRule.nonBreaking, `status ${status} may be answered`);
  }
}

interface Webhook {
  element: string;
  name: string;
  operation: Json;
}

/**
 * Every webhook (OpenAPI 3.1 `webhooks`, one per event type): what the platform POSTs to
 * receivers. `webhook:<event type>`, or `webhook:<name> <METHOD>` for a method other than POST.
 */
function webhooksOf(doc: Json): Map<string, Webhook> {
  const webhooks = new Map<string, Webhook>();
  for (const [name, item] of Object.entries(isObject(doc.webhooks) ? doc.webhooks : {})) {
    const pathItem = resolve(doc, item).node;
    for (const method of methods) {
      const operation = pathItem[method];
      if (!isObject(operation)) continue;
      const element = method === 'post' ? `webhook:${name}` : `webhook:${name} ${method.toUpperCase()}`;
      webhooks.set(element, { element, name, operation });
    }
  }
  return webhooks;
}

/** A webhook's headers (header parameters), by lower-case name. */
function headersOf(doc: Json, operation: Json): Map<string, Json> {
  return new Map(
    (Array.isArray(operation.parameters) ? operation.parameters : [])
      .map((raw) => resolve(doc, raw).node)
      .filter((node) => node.in === 'header')
      .map((node) => [String(node.name).toLowerCase(), node]),
  );
}

/** The catalog version a webhook's payload is at (`x-event-version`), if the document says. */
function eventVersionOf(webhook: Webhook): number | undefined {
  const version = webhook.operation['x-event-version'];
  return typeof version === 'number' ? version : undefined;
}

/**
 * A webhook's request is what we send and a receiver reads, so it is judged as a response is:
 * its body and headers in the response direction. What a receiver answers is not compared (any
 * 2xx acknowledges a delivery).
 */
function compareWebhook(comparison: OpenApiComparison, old: Webhook, webhook: Webhook): void {
  const { before, after } = comparison;
  const first = comparison.changes.length;
  const add = (cls: ChangeClass, element: string, rule: string, spec: string, message: string): void => {
    comparison.changes.push(change('rest', cls, element, rule, spec, message));
  };
  const element = webhook.element;
  const beforeHeaders = headersOf(before, old.operation);
  const afterHeaders = headersOf(after, webhook.operation);
  for (const [key, header] of beforeHeaders) {
    const next = afterHeaders.get(key);
    if (!next) add('breaking', `${element} header.${header.name}`, 'webhook-header-removed', specRule.removed, `header ${header.name} no longer sent`);
    else comparison.compareSchemas(valueSchemaOf(header), valueSchemaOf(next), 'response', `${element} header.${header.name}`, [], false);
  }
  for (const [key, header] of afterHeaders) {
    if (!beforeHeaders.has(key)) add('safe', `${element} header.${header.name}`, 'webhook-header-added', specRule.nonBreaking, `header ${header.name} sent`);
  }
  const contentOf = (doc: Json, operation: Json): Json => {
    const body = operation.requestBody === undefined ? undefined : resolve(doc, operation.requestBody).node;
    return body && isObject(body.content) ? body.content : {};
  };
  const beforeContent = contentOf(before, old.operation);
  const afterContent = contentOf(after, webhook.operation);
  for (const [mediaType, media] of Object.entries(beforeContent)) {
    const bodyElement = `${element} ${mediaLabel(mediaType)}`;
    const next = afterContent[mediaType];
    if (!isObject(next)) add('breaking', bodyElement, 'media-type-removed', specRule.removed, `payload media type ${mediaType} no longer sent`);
    else comparison.compareSchemas(isObject(media) ? media.schema ?? {} : {}, next.schema ?? {}, 'response', bodyElement, [], false);
  }
  for (const mediaType of Object.keys(afterContent)) {
    if (!(mediaType in beforeContent)) add('safe', `${element} ${mediaLabel(mediaType)}`, 'media-type-added', specRule.nonBreaking, `payload media type ${mediaType} sent`);
  }
  // Receivers get one payload per event: a raised event version replaces the old shape for every
  // subscriber rather than running beside it, so it is no new major version and allows nothing.
  const was = eventVersionOf(old);
  const is = eventVersionOf(webhook);
  const version = was !== undefined && is !== undefined && was !== is ? `event version ${was} -> ${is}, but only the new shape is sent` : `event version ${is ?? was ?? 'unknown'}`;
  for (const found of comparison.changes.slice(first)) {
    if (found.class !== 'safe') found.message = `${found.message.replace(/^response /, 'payload ')}: every receiver of ${webhook.name} gets this payload (${version})`;
  }
}

/** `GET /v2/products/{}` in an earlier major version (`v1`): the operation it replaces there. */
function keyIn(major: string, operation: Operation): string {
  return operation.key.replace(/^(\S+ )\/v\d+/, `$1/${major}`);
}

/**
 * The same operation in the nearest earlier major version that has it: the gateway serves an
 * operation a major did not redeclare as the earlier one does (apps/gateway/src/routing/router.ts),
 * so that is what a /v2 operation replaces.
 */
function earlierCounterpart(operations: Map<string, Operation>, operation: Operation): Operation | undefined {
  for (let major = Number(operation.major?.slice(1) ?? 0) - 1; major >= 1; major--) {
    const found = operations.get(keyIn(`v${major}`, operation));
    if (found) return found;
  }
  return undefined;
}

/** Every change from `before` to `after`, classified. */
export function diffOpenApi(before: Json, after: Json): ContractChange[] {
  const comparison = new OpenApiComparison(before, after);
  const add = (cls: ChangeClass, element: string, rule: string, spec: string, message: string): void => {
    comparison.changes.push(change('rest', cls, element, rule, spec, message));
  };
  const beforeOperations = operationsOf(before);
  const afterOperations = operationsOf(after);
  const releasedMajors = new Set([...beforeOperations.values()].map((operation) => operation.major));

  for (const [key, operation] of beforeOperations) {
    if (!afterOperations.has(key)) add('breaking', operation.element, 'operation-removed', specRule.pathOrMethod, 'operation removed (or its path or method changed)');
  }
  for (const [key, operation] of afterOperations) {
    const old = beforeOperations.get(key);
    if (old) {
      compareOperation(comparison, old, operation);
      continue;
    }
    if (operation.major && !releasedMajors.has(operation.major)) {
      add('safe', operation.element, 'major-version-added', specRule.newMajor, `operation added in the new major version ${operation.major}`);
      // What the new major breaks of the operation it replaces is reported, and allowed: the old
      // major keeps serving the old behaviour, so no old client sees it (spec rule 5).
      const replaced = earlierCounterpart(afterOperations, operation);
      if (!replaced) continue;
      const differences = new OpenApiComparison(after, after);
      compareOperation(differences, replaced, operation);
      for (const found of differences.changes) {
        if (found.class === 'safe') continue;
        add('safe', found.element, 'changed-in-new-major', specRule.newMajor, `${found.rule} relative to ${replaced.element}: ${found.message}; allowed only because ${operation.major} is a new major version`);
      }
      continue;
    }
    // A released major that did not list this operation served it as the earlier major does: what
    // it changes against that is a change to the released major, judged like any other.
    const served = operation.major ? earlierCounterpart(beforeOperations, operation) : undefined;
    if (served) {
      add('safe', operation.element, 'operation-redeclared', specRule.compatible, `declared on its own now; until now ${served.element} served it`);
      compareOperation(comparison, served, operation);
    } else add('safe', operation.element, 'operation-added', specRule.nonBreaking, 'operation added');
  }

  const beforeWebhooks = webhooksOf(before);
  const afterWebhooks = webhooksOf(after);
  for (const [key, webhook] of beforeWebhooks) {
    const next = afterWebhooks.get(key);
    if (!next) add('breaking', webhook.element, 'webhook-removed', specRule.removed, `${webhook.name} is no longer sent: its receivers get no more of these events`);
    else compareWebhook(comparison, webhook, next);
  }
  for (const [key, webhook] of afterWebhooks) {
    if (!beforeWebhooks.has(key)) add('safe', webhook.element, 'webhook-added', specRule.nonBreaking, `${webhook.name} is sent to subscribers now`);
  }
  return comparison.changes;
}

/** Whether a registry element (`rest:GET /v1/orders query.size`, `... response.200.body.items[].id`) names something in `doc`. */
export function restElementExists(doc: Json, element: string): boolean {
  const match = /^rest:([A-Z]+) (\S+)(?: (.+))?$/.exec(element);
  if (!match) return false;
  const [, method, path, rest] = match;
  const operation = operationsOf(doc).get(`${method} ${path.replace(/\{[^}]+\}/g, '{}')}`);
  if (!operation) return false;
  if (!rest) return true;
  const parameter = /^(query|header|path|cookie)\.(.+)$/.exec(rest);
  if (parameter) {
    return [...parametersOf(doc, path, operation).values()].some((candidate) => candidate.label.toLowerCase() === `${parameter[1]}.${parameter[2]}`.toLowerCase());
  }
  const body = /^(request|response\.(\d{3}|default|[1-5]XX))\.(body(?:\([^)]+\))?)((?:\.[^.[\]{}<>]+|\[\]|\{\}|<[^<>]+>)*)$/.exec(rest);
  if (!body) return false;
  const [, place, status, mediaPart, fieldPath] = body;
  const container = place === 'request' ? operation.operation.requestBody : isObject(operation.operation.responses) ? operation.operation.responses[status] : undefined;
  return bodyFieldExists(doc, container, mediaPart, fieldPath);
}

/** Whether a webhook (`webhook:<event type>`), its payload field (`... body.data.<field>`) or header (`... header.<name>`) is in `doc`. */
export function webhookElementExists(doc: Json, element: string): boolean {
  const match = /^(webhook:\S+(?: [A-Z]+)?)(?: (?:(header)\.(\S+)|(body(?:\([^)]+\))?)((?:\.[^.[\]{}<>]+|\[\]|\{\}|<[^<>]+>)*)))?$/.exec(element);
  const webhook = match && webhooksOf(doc).get(match[1]);
  if (!match || !webhook) return false;
  const [, , header, headerName, mediaPart, fieldPath] = match;
  if (header) return headersOf(doc, webhook.operation).has(headerName.toLowerCase());
  if (!mediaPart) return true;
  return bodyFieldExists(doc, webhook.operation.requestBody, mediaPart, fieldPath);
}

/** Whether the body of `container` (a request body or response) in `mediaPart` (`body` is JSON) has the field `fieldPath` (`.a[].b`, `.a<kind=card>.b`, or '' for the body). */
function bodyFieldExists(doc: Json, container: unknown, mediaPart: string, fieldPath: string): boolean {
  if (container === undefined) return false;
  const mediaType = mediaPart === 'body' ? 'application/json' : mediaPart.slice(5, -1);
  const content = resolve(doc, container).node.content;
  let schema: Json | undefined = isObject(content) && isObject(content[mediaType]) ? (content[mediaType] as Json).schema as Json : undefined;
  for (const step of fieldPath.match(/\.[^.[\]{}<>]+|\[\]|\{\}|<[^<>]+>/g) ?? []) {
    if (!schema) return false;
    const seen = view(doc, schema);
    const current = seen.schema;
    // An alternative by the name the gate prints for it (alternativeLabels).
    if (step.startsWith('<')) schema = seen.variants[alternativeLabels(doc, seen.written).indexOf(step.slice(1, -1))];
    else if (step === '[]') schema = current.items as Json | undefined;
    else if (step === '{}') schema = isObject(current.additionalProperties) ? current.additionalProperties : undefined;
    else schema = isObject(current.properties) ? (current.properties[step.slice(1)] as Json | undefined) : undefined;
  }
  return schema !== undefined;
}
