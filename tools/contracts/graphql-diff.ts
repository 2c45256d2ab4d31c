// GraphQL: graphql-inspector finds and classifies the changes; our table maps its change types
// onto the specification's rules and corrects the few where the specification is stricter (a
// changed default breaks), or where the direction decides (a new enum value that only requests
// carry is safe). Federation plumbing (join__/link__ types, directive usages) is not part of what
// a client calls, so it is left out. A supergraph is compared as its API schema, the one the
// gateway serves: an element marked @inaccessible is not in it, so marking one is a removal.
import { Supergraph, printSchema } from '@apollo/federation-internals';
import { diff, CriticalityLevel, type Change } from '@graphql-inspector/core';
import { buildSchema, getNamedType, isEnumType, isInputObjectType, isInterfaceType, isObjectType, isScalarType, print, type ConstDirectiveNode, type GraphQLSchema } from 'graphql';
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

/**
 * Directives that say nothing of what a client may send: GraphQL's own marks and federation's.
 * Any other directive on an input field or argument (`@constraint(maxLength: 50)`) is taken to
 * constrain its values, as the server that declares it enforces it.
 */
const NOT_CONSTRAINTS = new Set(['deprecated', 'specifiedBy', 'inaccessible', 'tag', 'external', 'shareable', 'override', 'provides', 'requires', 'key', 'link', 'composeDirective', 'interfaceObject', 'authenticated', 'requiresScopes', 'policy', 'cost', 'listSize']);

/** The constraint directives on an input field or argument: `@name` (`@name#2` for a repeated one) → argument → value as written. */
function constraintsOf(directives: readonly ConstDirectiveNode[] | undefined): Map<string, Map<string, string>> {
  const found = new Map<string, Map<string, string>>();
  for (const directive of directives ?? []) {
    if (NOT_CONSTRAINTS.has(directive.name.value) || directive.name.value.startsWith('join__')) continue;
    let key = `@${directive.name.value}`;
    for (let count = 2; found.has(key); count++) key = `@${directive.name.value}#${count}`;
    found.set(key, new Map((directive.arguments ?? []).map((argument) => [argument.name.value, print(argument.value)])));
  }
  return found;
}

/**
 * How an input field's or argument's constraint directives changed, for a client sending it: a
 * directive or argument added, or one whose value changed, refuses what it took (a `max…` lower
 * or a `min…` higher, or any other argument changed, since the gate cannot tell what it means);
 * one dropped, a `max…` higher or a `min…` lower, takes more.
 */
function constraintChange(before: Map<string, Map<string, string>>, after: Map<string, Map<string, string>>): { tighter: string[]; looser: string[] } {
  const tighter: string[] = [];
  const looser: string[] = [];
  for (const name of new Set([...before.keys(), ...after.keys()])) {
    const [was, is] = [before.get(name), after.get(name)];
    if (!was || !is) {
      (was ? looser : tighter).push(`${name} ${was ? 'dropped' : 'added'}`);
      continue;
    }
    for (const argument of new Set([...was.keys(), ...is.keys()])) {
      const [old, now] = [was.get(argument), is.get(argument)];
      if (old === now) continue;
      const what = `${name}(${argument}: ${old ?? 'none'} -> ${now ?? 'none'})`;
      const [oldNumber, newNumber] = [Number(old), Number(now)];
      const numeric = old !== undefined && now !== undefined && Number.isFinite(oldNumber) && Number.isFinite(newNumber);
      if (now === undefined) looser.push(what);
      else if (numeric && /^max/i.test(argument)) (newNumber < oldNumber ? tighter : looser).push(what);
      else if (numeric && /^min/i.test(argument)) (newNumber > oldNumber ? tighter : looser).push(what);
      else tighter.push(what);
    }
  }
  return { tighter, looser };
}

/**
 * What graphql-inspector leaves to directive usages, which the gate otherwise skips as plumbing:
 * constraint directives on input fields and arguments present on both sides (one made stricter
 * refuses what old clients send), and a custom scalar's `@specifiedBy` (the specification its
 * values follow: clients send and parse them by it).
 */
function valueRuleChanges(oldSchema: GraphQLSchema, newSchema: GraphQLSchema, source: string): ContractChange[] {
  const changes: ContractChange[] = [];
  const compare = (element: string, before: readonly ConstDirectiveNode[] | undefined, after: readonly ConstDirectiveNode[] | undefined): void => {
    const { tighter, looser } = constraintChange(constraintsOf(before), constraintsOf(after));
    if (tighter.length > 0) changes.push({ ...change('graphql', 'breaking', element, 'INPUT_CONSTRAINT_TIGHTENED', specRule.tighterRequest, `constraint directives: ${[...tighter, ...looser].join(', ')}`), source });
    else if (looser.length > 0) changes.push({ ...change('graphql', 'safe', element, 'INPUT_CONSTRAINT_LOOSENED', specRule.compatible, `constraint directives: ${looser.join(', ')}`), source });
  };
  for (const [name, type] of Object.entries(newSchema.getTypeMap())) {
    if (name.startsWith('__')) continue;
    const old = oldSchema.getType(name);
    if (isScalarType(type) && isScalarType(old) && (old.specifiedByURL ?? null) !== (type.specifiedByURL ?? null)) {
      const [was, is] = [old.specifiedByURL, type.specifiedByURL];
      if (was && is) changes.push({ ...change('graphql', 'breaking', `graphql:${name}`, 'SCALAR_SPECIFIED_BY_CHANGED', specRule.typeChanged, `values follow another specification (@specifiedBy ${was} -> ${is}): what old clients send may be refused, and what they read may not parse as they expect`), source });
      else changes.push({ ...change('graphql', 'dangerous', `graphql:${name}`, 'SCALAR_SPECIFIED_BY_CHANGED', specRule.meaning, `@specifiedBy ${was ?? 'none'} -> ${is ?? 'none'}`), source });
    }
    if (isInputObjectType(type) && isInputObjectType(old)) {
      const oldFields = old.getFields();
      for (const [fieldName, field] of Object.entries(type.getFields())) {
        if (oldFields[fieldName]) compare(`graphql:${name}.${fieldName}`, oldFields[fieldName].astNode?.directives, field.astNode?.directives);
      }
    }
    if ((isObjectType(type) || isInterfaceType(type)) && (isObjectType(old) || isInterfaceType(old))) {
      const oldFields = old.getFields();
      for (const [fieldName, field] of Object.entries(type.getFields())) {
        for (const argument of field.args) {
          const was = oldFields[fieldName]?.args.find((candidate) => candidate.name === argument.name);
          if (was) compare(`graphql:${name}.${fieldName}.${argument.name}`, was.astNode?.directives, argument.astNode?.directives);
        }
      }
    }
  }
  return changes;
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
  changes.push(...valueRuleChanges(oldSchema, newSchema, source));
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

/** Every field, argument, input field and enum value `schema` marks @deprecated, named as graphqlElementExists takes them. */
export function graphqlDeprecatedElements(schema: GraphQLSchema): string[] {
  const found: string[] = [];
  for (const type of Object.values(schema.getTypeMap())) {
    if (type.name.startsWith('__')) continue;
    if (isEnumType(type)) {
      for (const value of type.getValues()) if (value.deprecationReason != null) found.push(`graphql:${type.name}.${value.name}`);
      continue;
    }
    if (!isObjectType(type) && !isInterfaceType(type) && !isInputObjectType(type)) continue;
    for (const field of Object.values(type.getFields())) {
      if (field.deprecationReason != null) found.push(`graphql:${type.name}.${field.name}`);
      for (const arg of 'args' in field ? field.args : []) if (arg.deprecationReason != null) found.push(`graphql:${type.name}.${field.name}.${arg.name}`);
    }
  }
  return found;
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
