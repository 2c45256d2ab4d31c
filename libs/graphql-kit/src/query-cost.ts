// What a query costs, computed the same way for the limit and for the client's view of it
// (`extensions.cost`, as Shopify's Admin API reports it): a scalar field costs 1, an object field
// 2 plus what is selected in it, and a list asked with `first: n` counts its selection n times.
// Fragments count where they are spread. Each mutation field costs 10 more: it writes, and
// Shopify prices a mutation the same way.
import { type DocumentNode, type FragmentDefinitionNode, GraphQLError, Kind, type OperationDefinitionNode, type SelectionSetNode, type ValidationRule, type ValueNode } from 'graphql';

export const MAX_QUERY_COST = 5_000;
const MUTATION_FIELD_COST = 10;

export interface QueryCost {
  requested: number;
  limit: number;
}

/** `first` as written, or from the variables; 1 when absent or not a number we can read. */
function multiplierOf(argument: ValueNode | undefined, variables: Record<string, unknown>): number {
  if (!argument) return 1;
  if (argument.kind === Kind.INT) return Math.max(1, Number(argument.value));
  if (argument.kind === Kind.VARIABLE) {
    const value = variables[argument.name.value];
    return typeof value === 'number' && Number.isFinite(value) ? Math.max(1, value) : 1;
  }
  return 1;
}

function selectionCost(selectionSet: SelectionSetNode, fragments: Map<string, FragmentDefinitionNode>, variables: Record<string, unknown>, visiting: Set<string>): number {
  let cost = 0;
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) {
      if (selection.name.value.startsWith('__')) continue; // introspection and __typename are free
      if (!selection.selectionSet) {
        cost += 1;
        continue;
      }
      const first = selection.arguments?.find((argument) => argument.name.value === 'first')?.value;
      cost += 2 + multiplierOf(first, variables) * selectionCost(selection.selectionSet, fragments, variables, visiting);
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      cost += selectionCost(selection.selectionSet, fragments, variables, visiting);
    } else {
      const fragment = fragments.get(selection.name.value);
      // A fragment spread inside itself is invalid (validation says so); count it once.
      if (!fragment || visiting.has(fragment.name.value)) continue;
      visiting.add(fragment.name.value);
      cost += selectionCost(fragment.selectionSet, fragments, variables, visiting);
      visiting.delete(fragment.name.value);
    }
  }
  return cost;
}

export function costOf(document: DocumentNode, operation: OperationDefinitionNode, variables: Record<string, unknown> = {}): QueryCost {
  const fragments = new Map(document.definitions.filter((definition): definition is FragmentDefinitionNode => definition.kind === Kind.FRAGMENT_DEFINITION).map((fragment) => [fragment.name.value, fragment]));
  const writes = operation.operation === 'mutation' ? operation.selectionSet.selections.filter((selection) => selection.kind === Kind.FIELD && !selection.name.value.startsWith('__')).length : 0;
  return { requested: writes * MUTATION_FIELD_COST + selectionCost(operation.selectionSet, fragments, variables, new Set()), limit: MAX_QUERY_COST };
}

/** Refuses each operation over the limit, naming it and the cost, before anything runs. */
export const QueryCostLimit: ValidationRule = (context) => ({
  OperationDefinition(node) {
    const cost = costOf(context.getDocument(), node);
    if (cost.requested > cost.limit) {
      context.reportError(
        new GraphQLError(`Query cost limit exceeded: this operation costs ${cost.requested} and the limit is ${cost.limit} (a field costs 1, an object 2 plus its fields, a list its selection times first).`, {
          nodes: [node],
          extensions: { code: 'QUERY_COST_LIMIT_EXCEEDED', cost },
        }),
      );
    }
  },
});
