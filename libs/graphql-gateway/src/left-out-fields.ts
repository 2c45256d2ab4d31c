// Output fields left out of an executed answer (the gateway's deprecated fields in a brownout or
// past the sunset): each place the operation selected one is answered null, with one error at that
// path, and the rest of the answer stands, as GraphQL answers a field that failed. A field that is
// non-null in the schema cannot be null: the null goes up to the nearest nullable field or list
// item, as GraphQL's own null propagation does (at worst `data` is null). The field still runs in
// its subgraph; only the answer drops it. Errors the subgraph gave inside a left-out value go too.
import {
  type DocumentNode,
  type ExecutionResult,
  type FieldNode,
  type FragmentDefinitionNode,
  getNamedType,
  GraphQLError,
  type GraphQLCompositeType,
  type GraphQLOutputType,
  type GraphQLSchema,
  isCompositeType,
  isInterfaceType,
  isListType,
  isNonNullType,
  isObjectType,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';

/** Why a field is left out: the error its place gets. */
export interface LeftOutField {
  message: string;
  code: string;
}

type Path = (string | number)[];

/** The fields of one object by response key, through fragments, each with the type it was selected on. */
type FieldsByKey = Map<string, { parent: GraphQLCompositeType; nodes: FieldNode[] }>;

/**
 * `result` with every field named in `leftOut` (`graphql:Type.field` → its error) nulled and its
 * error added. With no such field in the answer, `result` itself.
 */
export function leaveOutFields(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode, result: ExecutionResult, leftOut: ReadonlyMap<string, LeftOutField>): ExecutionResult {
  if (leftOut.size === 0 || !result.data) return result;
  const root = schema.getRootType(operation.operation);
  if (!root) return result;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  const added: GraphQLError[] = [];

  const collect = (selectionSet: SelectionSetNode, parent: GraphQLCompositeType, into: FieldsByKey) => {
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) {
        const key = selection.alias?.value ?? selection.name.value;
        const known = into.get(key);
        if (known) known.nodes.push(selection);
        else into.set(key, { parent, nodes: [selection] });
      } else {
        // Without __typename the answer does not say an object's type; a key the object has is one its type selected.
        const fragment = selection.kind === Kind.INLINE_FRAGMENT ? selection : fragments.get(selection.name.value);
        if (!fragment) continue;
        const condition = fragment.typeCondition ? schema.getType(fragment.typeCondition.name.value) : parent;
        collect(fragment.selectionSet, condition && isCompositeType(condition) ? condition : parent, into);
      }
    }
    return into;
  };

  /** The object with its left-out fields nulled; null when a non-null field of it became null. */
  const completeObject = (object: Record<string, unknown>, fields: FieldsByKey, path: Path): Record<string, unknown> | null => {
    for (const [key, { parent, nodes }] of fields) {
      if (!Object.hasOwn(object, key) || (!isObjectType(parent) && !isInterfaceType(parent))) continue;
      const name = nodes[0].name.value;
      const definition = parent.getFields()[name];
      if (!definition) continue; // __typename and the like
      const reason = leftOut.get(`graphql:${parent.name}.${name}`);
      const before = object[key];
      const after = reason ? null : completeValue(before, definition.type, nodes, [...path, key]);
      if (reason) added.push(new GraphQLError(reason.message, { path: [...path, key], extensions: { code: reason.code } }));
      if (after === null && before !== null) {
        object[key] = null;
        if (isNonNullType(definition.type)) return null;
      }
    }
    return object;
  };

  const completeValue = (value: unknown, type: GraphQLOutputType, nodes: FieldNode[], path: Path): unknown => {
    if (value === null || value === undefined) return value;
    if (isNonNullType(type)) return completeValue(value, type.ofType, nodes, path);
    if (isListType(type)) {
      if (!Array.isArray(value)) return value;
      for (let index = 0; index < value.length; index++) {
        const item = completeValue(value[index], type.ofType, nodes, [...path, index]);
        if (item === null && value[index] !== null) {
          value[index] = null;
          if (isNonNullType(type.ofType)) return null;
        }
      }
      return value;
    }
    const named = getNamedType(type);
    if (!isCompositeType(named) || typeof value !== 'object') return value;
    const fields: FieldsByKey = new Map();
    for (const node of nodes) if (node.selectionSet) collect(node.selectionSet, named, fields);
    return completeObject(value as Record<string, unknown>, fields, path);
  };

  const data = completeObject(result.data as Record<string, unknown>, collect(operation.selectionSet, root, new Map()), []);
  if (added.length === 0) return result;
  const within = (inner: readonly (string | number)[] | undefined) => inner !== undefined && added.some((error) => error.path?.every((step, index) => inner[index] === step));
  const kept = (result.errors ?? []).filter((error) => !within(error.path));
  return { ...result, data, errors: [...kept, ...added] };
}
