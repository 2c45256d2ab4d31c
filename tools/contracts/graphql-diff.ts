// GraphQL: graphql-inspector finds and classifies the changes; our table maps its change types
// onto the specification's rules and corrects the few where the specification is stricter (a
// changed default breaks), or where the direction decides (a new enum value that only requests
// carry is safe). Federation plumbing (join__/link__ types, directive usages) is not part of what
// a client calls, so it is left out. A supergraph is compared as its API schema, the one the
// gateway serves: an element marked @inaccessible is not in it, so marking one is a removal.
import { Supergraph, printSchema } from '@apollo/federation-internals';
import { diff, CriticalityLevel, type Change } from '@graphql-inspector/core';
import { buildSchema, getNamedType, isEnumType, isInputObjectType, isInterfaceType, isObjectType, type GraphQLSchema } from 'graphql';
import { change, specRule, type ChangeClass, type ContractChange } from './changes';

export function schemaOf(sdl: string): GraphQLSchema {
  return buildSchema(sdl, { assumeValidSDL: true });
}

/** A composed supergraph links the join spec; a subgraph SDL links federation instead. */
function isSupergraph(sdl: string): boolean {
  return /@link\(\s*url:\s*"https:\/\/specs\.apollo\.dev\/join\//.test(sdl);
}

/**
 * What clients can query: for a supergraph, its API schema as the gateway builds it
 * (`Supergraph.build(sdl).apiSchema()`, as @apollo/gateway does), without @inaccessible elements
 * and the join/link plumbing; any other SDL as it is.
 */
export function clientSchemaOf(sdl: string): GraphQLSchema {
  return isSupergraph(sdl) ? schemaOf(printSchema(Supergraph.build(sdl).apiSchema())) : schemaOf(sdl);
}

const removals = new Set(['FIELD_REMOVED', 'TYPE_REMOVED', 'ENUM_VALUE_REMOVED', 'INPUT_FIELD_REMOVED', 'FIELD_ARGUMENT_REMOVED', 'UNION_MEMBER_REMOVED', 'OBJECT_TYPE_INTERFACE_REMOVED', 'SCHEMA_QUERY_TYPE_CHANGED', 'SCHEMA_MUTATION_TYPE_CHANGED', 'SCHEMA_SUBSCRIPTION_TYPE_CHANGED']);
const typeChanges = new Set(['FIELD_TYPE_CHANGED', 'INPUT_FIELD_TYPE_CHANGED', 'FIELD_ARGUMENT_TYPE_CHANGED', 'TYPE_KIND_CHANGED']);
const defaults = new Set(['INPUT_FIELD_DEFAULT_VALUE_CHANGED', 'FIELD_ARGUMENT_DEFAULT_CHANGED']);
const fieldDescriptions = new Set([
  'FIELD_DESCRIPTION_CHANGED', 'FIELD_DESCRIPTION_ADDED', 'FIELD_DESCRIPTION_REMOVED',
  'INPUT_FIELD_DESCRIPTION_CHANGED', 'INPUT_FIELD_DESCRIPTION_ADDED', 'INPUT_FIELD_DESCRIPTION_REMOVED',
  'FIELD_ARGUMENT_DESCRIPTION_CHANGED', 'ENUM_VALUE_DESCRIPTION_CHANGED',
]);
const numericScalars = new Set(['Int', 'Float']);
const textScalars = new Set(['String', 'ID']);

function isPlumbing(found: Change): boolean {
  return found.type.startsWith('DIRECTIVE') || /^(join__|link__|_Service|_Any|_Entity)/.test(found.path ?? '');
}

/** Enums a client reads (some output field returns them); the others only travel in requests. */
function outputEnums(schema: GraphQLSchema): Set<string> {
  const names = new Set<string>();
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) && !isInterfaceType(type)) continue;
    for (const field of Object.values(type.getFields())) {
      const named = getNamedType(field.type);
      if (isEnumType(named)) names.add(named.name);
    }
  }
  return names;
}

function typesOf(found: Change): [string, string] | undefined {
  const meta = (found.meta ?? {}) as Record<string, unknown>;
  const oldType = Object.entries(meta).find(([key]) => /^old.*Type$/.test(key))?.[1];
  const newType = Object.entries(meta).find(([key]) => /^new.*Type$/.test(key))?.[1];
  return typeof oldType === 'string' && typeof newType === 'string' ? [oldType, newType] : undefined;
}

function classify(found: Change, enumsRead: Set<string>): { cls: ChangeClass; spec: string } {
  const level = found.criticality.level;
  const inspected: ChangeClass = level === CriticalityLevel.Breaking ? 'breaking' : level === CriticalityLevel.Dangerous ? 'dangerous' : 'safe';
  if (fieldDescriptions.has(found.type)) return { cls: 'dangerous', spec: specRule.meaning };
  if (defaults.has(found.type)) return { cls: 'breaking', spec: specRule.defaultChanged };
  if (found.type === 'ENUM_VALUE_ADDED') {
    const enumName = (found.path ?? '').split('.')[0];
    return enumsRead.has(enumName) ? { cls: 'dangerous', spec: specRule.newResponseValue } : { cls: 'safe', spec: specRule.nonBreaking };
  }
  // A union's new member, or an interface's new implementation, is a `__typename` old clients have
  // not seen where they read that union or interface: a new response value, as an enum's.
  if (found.type === 'UNION_MEMBER_ADDED' || found.type === 'OBJECT_TYPE_INTERFACE_ADDED') return { cls: 'dangerous', spec: specRule.newResponseValue };
  if (removals.has(found.type)) return { cls: inspected, spec: specRule.removed };
  if (typeChanges.has(found.type)) {
    const types = typesOf(found);
    if (types) {
      const [oldType, newType] = types.map((type) => type.replace(/[[\]!]/g, ''));
      if ((numericScalars.has(oldType) && textScalars.has(newType)) || (textScalars.has(oldType) && numericScalars.has(newType))) return { cls: 'breaking', spec: specRule.numberString };
      if (found.type === 'FIELD_TYPE_CHANGED' && types[0] === `${types[1]}!`) return { cls: inspected, spec: specRule.nullableResponse };
      if (found.type !== 'FIELD_TYPE_CHANGED' && types[1] === `${types[0]}!`) return { cls: inspected, spec: specRule.requiredParameter };
    }
    return { cls: inspected, spec: inspected === 'breaking' ? specRule.typeChanged : specRule.compatible };
  }
  if ((found.type === 'INPUT_FIELD_ADDED' || found.type === 'FIELD_ARGUMENT_ADDED') && inspected === 'breaking') return { cls: 'breaking', spec: specRule.requiredParameter };
  // graphql-inspector calls any new argument dangerous; the specification: an optional one is not breaking.
  if (found.type === 'FIELD_ARGUMENT_ADDED') return { cls: 'safe', spec: specRule.nonBreaking };
  if (inspected === 'safe') return { cls: 'safe', spec: specRule.nonBreaking };
  return { cls: inspected, spec: specRule.compatible };
}

/** Every client-visible change from `before` to `after` (SDL texts; supergraphs as their API schemas), classified. */
export async function diffGraphQL(before: string, after: string, source: string): Promise<ContractChange[]> {
  const oldSchema = clientSchemaOf(before);
  const newSchema = clientSchemaOf(after);
  const enumsRead = new Set([...outputEnums(oldSchema), ...outputEnums(newSchema)]);
  const found = await diff(oldSchema, newSchema);
  const changes: ContractChange[] = [];
  for (const item of found) {
    if (isPlumbing(item)) continue;
    // `Thing.note.@deprecated`: the element is the field.
    const element = `graphql:${(item.path ?? '').replace(/\.@[^.]+$/, '')}`;
    // The members of a new type or field are listed with it, not again one by one, and a
    // description is a meaning change only for an element that existed.
    const parent = element.slice(0, element.lastIndexOf('.'));
    if (item.type.endsWith('_ADDED') && !fieldDescriptions.has(item.type) && element.includes('.') && !graphqlElementExists(oldSchema, parent)) continue;
    if (fieldDescriptions.has(item.type) && !graphqlElementExists(oldSchema, element)) continue;
    const { cls, spec } = classify(item, enumsRead);
    changes.push({ ...change('graphql', cls, element, item.type, spec, item.message), source });
  }
  return changes;
}

/** Whether `graphql:Type`, `graphql:Type.field`, `graphql:Type.field.argument` or `graphql:Enum.VALUE` exists in `schema`. */
export function graphqlElementExists(schema: GraphQLSchema, element: string): boolean {
  const match = /^graphql:([_A-Za-z][_0-9A-Za-z]*)(?:\.([_A-Za-z][_0-9A-Za-z]*))?(?:\.([_A-Za-z][_0-9A-Za-z]*))?$/.exec(element);
  if (!match) return false;
  const [, typeName, member, argument] = match;
  const type = schema.getType(typeName);
  if (!type) return false;
  if (!member) return true;
  if (isEnumType(type)) return !argument && type.getValue(member) !== undefined;
  if (isInputObjectType(type)) return !argument && member in type.getFields();
  if (isObjectType(type) || isInterfaceType(type)) {
    const field = type.getFields()[member];
    if (!field) return false;
    return !argument || field.args.some((arg) => arg.name === argument);
  }
  return false;
}

/** The `@deprecated(reason:)` of a field, argument, input field or enum value: undefined when `schema` lacks the element (or it cannot be deprecated), null when it is not deprecated. */
export function graphqlDeprecationReason(schema: GraphQLSchema, element: string): string | null | undefined {
  const match = /^graphql:([_A-Za-z][_0-9A-Za-z]*)\.([_A-Za-z][_0-9A-Za-z]*)(?:\.([_A-Za-z][_0-9A-Za-z]*))?$/.exec(element);
  if (!match) return undefined;
  const [, typeName, member, argument] = match;
  const type = schema.getType(typeName);
  if (isEnumType(type)) return argument ? undefined : (type.getValue(member)?.deprecationReason ?? (type.getValue(member) ? null : undefined));
  if (!isObjectType(type) && !isInterfaceType(type) && !isInputObjectType(type)) return undefined;
  const field = type.getFields()[member];
  if (!field) return undefined;
  if (!argument) return field.deprecationReason ?? null;
  if (!('args' in field)) return undefined;
  const arg = field.args.find((candidate) => candidate.name === argument);
  return arg ? (arg.deprecationReason ?? null) : undefined;
}
