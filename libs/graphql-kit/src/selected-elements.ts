// The schema elements an operation selects, in the contract gate's names: `graphql:Type.field`
// for each field (through fragments and inline fragments, on the type the selection is made on)
// and `graphql:Type.field.argument` for each argument given. Pure in (schema, document,
// operation), so computed once per document and kept while the document is (the gateway's
// document cache hands out the same DocumentNode for the same text).
import {
  type DocumentNode,
  type FragmentDefinitionNode,
  getNamedType,
  getOperationAST,
  type GraphQLSchema,
  Kind,
  type SelectionSetNode,
  TypeInfo,
  visit,
  visitWithTypeInfo,
} from 'graphql';

const cache = new WeakMap<GraphQLSchema, WeakMap<DocumentNode, Map<string, string[]>>>();

/** Fragment definitions the selection set spreads, directly or through other fragments. */
function spreadFragments(selectionSet: SelectionSetNode, fragments: Map<string, FragmentDefinitionNode>, found: Set<string>): void {
  visit(selectionSet, {
    FragmentSpread(node) {
      const name = node.name.value;
      const fragment = fragments.get(name);
      if (found.has(name) || !fragment) return;
      found.add(name);
      spreadFragments(fragment.selectionSet, fragments, found);
    },
  });
}

function compute(schema: GraphQLSchema, document: DocumentNode, operationName?: string | null): string[] {
  const operation = getOperationAST(document, operationName ?? undefined);
  if (!operation) return [];
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  const used = new Set<string>();
  spreadFragments(operation.selectionSet, fragments, used);
  const elements = new Set<string>();
  const typeInfo = new TypeInfo(schema);
  const visitor = visitWithTypeInfo(typeInfo, {
    Field(node) {
      const name = node.name.value;
      const parent = typeInfo.getParentType();
      // __typename and introspection are no part of the contract a service team owns.
      if (!parent || name.startsWith('__') || !typeInfo.getFieldDef()) return;
      const field = `graphql:${getNamedType(parent).name}.${name}`;
      elements.add(field);
      for (const argument of node.arguments ?? []) elements.add(`${field}.${argument.name.value}`);
    },
  });
  visit(operation, visitor);
  for (const name of used) visit(fragments.get(name) as FragmentDefinitionNode, visitor);
  return [...elements].sort();
}

/** The fields and given arguments `operationName` (or the document's only operation) selects; [] when there is no such operation. */
export function selectedElements(schema: GraphQLSchema, document: DocumentNode, operationName?: string | null): string[] {
  let bySchema = cache.get(schema);
  if (!bySchema) cache.set(schema, (bySchema = new WeakMap()));
  let byOperation = bySchema.get(document);
  if (!byOperation) bySchema.set(document, (byOperation = new Map()));
  const key = operationName ?? '';
  let elements = byOperation.get(key);
  if (!elements) {
    elements = compute(schema, document, operationName);
    // A document has few operations; names it does not have (a client's typo) are not kept.
    if (elements.length > 0 && byOperation.size < 32) byOperation.set(key, elements);
  }
  return elements;
}
