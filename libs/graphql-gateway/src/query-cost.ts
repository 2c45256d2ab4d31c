// What a query costs, computed the same way for the limit and for the client's view of it
// (`extensions.cost`, as Shopify's Admin API reports it): a scalar field costs 1, an object field
// 2 plus what is selected in it, and a list asked with `first: n` counts its selection n times.
// Fragments count where they are spread. Each mutation field costs 10 more: it writes, and
// Shopify prices a mutation the same way.
//
// Aliases let one request name a mutation field many times (`a: createOrder … b: createOrder …`),
// each one a write as a REST call would be: at most MAX_MUTATION_FIELDS mutation fields run per
// request, refused while validating (nothing runs), and the gateway charges each one a rate-limit
// point (`OperationWork`, apps/gateway/src/rate-limit/policies.ts).
import { type DocumentNode, type FragmentDefinitionNode, GraphQLError, Kind, type OperationDefinitionNode, type SelectionSetNode, type ValidationRule, type ValueNode } from 'graphql';

export const MAX_QUERY_COST = 5_000;
const MUTATION_FIELD_COST = 10;
/** Mutation fields one request may run (aliases included): each is a write, like one REST call. */
export const MAX_MUTATION_FIELDS = 5;

export interface QueryCost {
  requested: number;
  limit: number;
}

/** What an operation asks of the services, for the rate limit to charge before it runs. */
export interface OperationWork {
  type: 'query' | 'mutation' | 'subscription';
  /** The operation's cost (`extensions.cost.requested`). */
  cost: number;
  /** Root fields of a mutation (each alias counted; 0 for a query): the writes it makes. */
  mutationFields: number;
  /** The root fields selected, by name (an API key's scopes are checked against them). */
  rootFields: string[];
}

/** The root fields of an operation by name, through fragments, each alias once, `__typename` and introspection left out. */
function rootFieldNames(selectionSet: SelectionSetNode, fragments: Map<string, FragmentDefinitionNode>, visiting = new Set<string>()): string[] {
  const names: string[] = [];
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) {
      if (!selection.name.value.startsWith('__')) names.push(selection.name.value);
    } else if (selection.kind === Kind.INLINE_FRAGMENT) names.push(...rootFieldNames(selection.selectionSet, fragments, visiting));
    else {
      const fragment = fragments.get(selection.name.value);
      if (!fragment || visiting.has(fragment.name.value)) continue;
      visiting.add(fragment.name.value);
      names.push(...rootFieldNames(fragment.selectionSet, fragments, visiting));
      visiting.delete(fragment.name.value);
    }
  }
  return names;
}

function fragmentsOf(document: DocumentNode): Map<string, FragmentDefinitionNode> {
  return new Map(document.definitions.filter((definition): definition is FragmentDefinitionNode => definition.kind === Kind.FRAGMENT_DEFINITION).map((fragment) => [fragment.name.value, fragment]));
}

/** The writes a mutation makes (its root fields, aliases each counted); 0 for a query. */
export function mutationFieldsOf(document: DocumentNode, operation: OperationDefinitionNode): number {
  return operation.operation === 'mutation' ? rootFieldsOf(document, operation).length : 0;
}

/** The root fields an operation selects (an aliased field once per alias): what it reads or writes at the top. */
export function rootFieldsOf(document: DocumentNode, operation: OperationDefinitionNode): string[] {
  return rootFieldNames(operation.selectionSet, fragmentsOf(document));
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
  const writes = mutationFieldsOf(document, operation);
  return { requested: writes * MUTATION_FIELD_COST + selectionCost(operation.selectionSet, fragmentsOf(document), variables, new Set()), limit: MAX_QUERY_COST };
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

/** Refuses a mutation with more than MAX_MUTATION_FIELDS fields (aliases count) before any runs. */
export const MutationFieldLimit: ValidationRule = (context) => ({
  OperationDefinition(node) {
    const fields = mutationFieldsOf(context.getDocument(), node);
    if (fields > MAX_MUTATION_FIELDS) {
      context.reportError(
        new GraphQLError(`Too many mutation fields: this operation has ${fields} and at most ${MAX_MUTATION_FIELDS} run per request (aliases count; each is a write, as one REST call).`, {
          nodes: [node],
          extensions: { code: 'MUTATION_LIMIT_EXCEEDED', mutationFields: { requested: fields, limit: MAX_MUTATION_FIELDS } },
        }),
      );
    }
  },
});
