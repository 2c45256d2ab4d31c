// The schema elements one operation of a document selects, named as the deprecation registry and
// the contract gate name them: `graphql:Type.field` for every field selected (through fragment
// spreads and inline fragments), `graphql:Type.field.argument` for every argument given, and
// `graphql:Enum.VALUE` for every enum value written in the document. Computed once per schema,
// document and operation name (documents are cached and reused by the document cache), so asking
// again costs a lookup. selectedOutputFields says which of them are output fields (what the
// gateway leaves out of an answer) rather than input (arguments and enum values written).
import { type DocumentNode, type FragmentDefinitionNode, getNamedType, getOperationAST, type GraphQLSchema, isEnumType, Kind, type SelectionSetNode, TypeInfo, visit, visitWithTypeInfo } from 'graphql';

interface Selected {
  elements: string[];
  outputFields: ReadonlySet<string>;
}

const cache = new WeakMap<GraphQLSchema, WeakMap<DocumentNode, Map<string, Selected>>>();

/** The fragments an operation reaches, however deeply spread. */
function reachableFragments(document: DocumentNode, selectionSet: SelectionSetNode): FragmentDefinitionNode[] {
  const definitions = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) definitions.set(definition.name.value, definition);
  const reached = new Map<string, FragmentDefinitionNode>();
  const pending: SelectionSetNode[] = [selectionSet];
  while (pending.length > 0) {
    visit(pending.pop() as SelectionSetNode, {
      FragmentSpread(node) {
        const fragment = definitions.get(node.name.value);
        if (fragment && !reached.has(fragment.name.value)) {
          reached.set(fragment.name.value, fragment);
          pending.push(fragment.selectionSet);
        }
      },
    });
  }
  return [...reached.values()];
}

function compute(schema: GraphQLSchema, document: DocumentNode, operationName?: string | null): Selected {
  const operation = getOperationAST(document, operationName ?? undefined);
  if (!operation) return { elements: [], outputFields: new Set() };
  const elements = new Set<string>();
  const outputFields = new Set<string>();
  const typeInfo = new TypeInfo(schema);
  const visitor = visitWithTypeInfo(typeInfo, {
    Field(node) {
      const parent = typeInfo.getParentType();
      if (!parent || node.name.value.startsWith('__')) return;
      elements.add(`graphql:${parent.name}.${node.name.value}`);
      outputFields.add(`graphql:${parent.name}.${node.name.value}`);
    },
    Argument(node) {
      const parent = typeInfo.getParentType();
      const field = typeInfo.getFieldDef();
      if (parent && field && typeInfo.getArgument()) elements.add(`graphql:${parent.name}.${field.name}.${node.name.value}`);
    },
    EnumValue(node) {
      const type = typeInfo.getInputType();
      const named = type ? getNamedType(type) : undefined;
      if (named && isEnumType(named) && named.getValue(node.value)) elements.add(`graphql:${named.name}.${node.value}`);
    },
  });
  for (const definition of [operation, ...reachableFragments(document, operation.selectionSet)]) visit(definition, visitor);
  return { elements: [...elements].sort(), outputFields };
}

function selectedIn(schema: GraphQLSchema, document: DocumentNode, operationName?: string | null): Selected {
  let bySchema = cache.get(schema);
  if (!bySchema) cache.set(schema, (bySchema = new WeakMap()));
  let byOperation = bySchema.get(document);
  if (!byOperation) bySchema.set(document, (byOperation = new Map()));
  const key = operationName ?? '';
  let selected = byOperation.get(key);
  if (!selected) byOperation.set(key, (selected = compute(schema, document, operationName)));
  return selected;
}

/** What `operationName` (or the document's only operation) selects in `schema`; [] when there is no such operation. */
export function selectedElements(schema: GraphQLSchema, document: DocumentNode, operationName?: string | null): string[] {
  return selectedIn(schema, document, operationName).elements;
}

/** The output fields among selectedElements (`graphql:Type.field`): not the arguments, nor the enum values written. */
export function selectedOutputFields(schema: GraphQLSchema, document: DocumentNode, operationName?: string | null): ReadonlySet<string> {
  return selectedIn(schema, document, operationName).outputFields;
}
