// What a query costs, computed the same way for the limit and for the client's view of it
// (`extensions.cost`, as Shopify's Admin API reports it): a scalar field costs 1, an object field
// 2 plus what is selected in it, and a list counts its selection as many times as it can have
// elements (LIST_LENGTHS). Fragments count where they are spread. Each mutation field costs 10
// more: it writes, and Shopify prices a mutation the same way.
//
// A list's length is read as graphql-js will run it, not only as written: `orders(first: $n)` with
// `$n: Int = 100` and no variables sent, and `orders` without `first` (20), once counted 1, and
// `Order.items` once however many lines; a query the limit refused ran when written with a
// variable's default (docs/security.md).
//
// Aliases let one request name a mutation field many times (`a: createOrder … b: createOrder …`),
// each one a write as a REST call would be: at most MAX_MUTATION_FIELDS mutation fields run per
// request, refused while validating (nothing runs), and the gateway charges each one a rate-limit
// point (`OperationWork`, apps/gateway/src/rate-limit/policies.ts).
import {
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  getArgumentValues,
  getNamedType,
  getNullableType,
  getVariableValues,
  type GraphQLCompositeType,
  type GraphQLField,
  type GraphQLSchema,
  isCompositeType,
  isListType,
  isUnionType,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValidationRule,
} from 'graphql';
import { graphQLRefusal } from '@platform/graphql-kit';
import { MAX_PAGE_SIZE } from '@platform/paging';
import { MAX_ORDER_ITEMS } from '@platform/validation';

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
  /** Every output field selected at any depth, as `graphql:Type.field` (selected-elements.ts): what an API key's scopes must cover besides the root fields. */
  outputFields: ReadonlySet<string>;
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

/** How long a list of the graph can be. */
export interface ListLength {
  /** The argument that says how many (`first`); a list without one counts `most` times. */
  argument?: string;
  /** The most elements the list ever has: its length when the argument is null or cannot be read. */
  most: number;
}

/**
 * Every list of the graph that selects fields, by `Type.field`; a test fails while one is missing.
 * A list missing here is priced as a page: by its `first` if it has one, else MAX_PAGE_SIZE times.
 */
export const LIST_LENGTHS: Readonly<Record<string, ListLength>> = {
  // One page of the caller's orders: orders-service reads them through toPageRequest, which caps it.
  'Query.orders': { argument: 'first', most: MAX_PAGE_SIZE },
  // Every line of the order, read with it; an order is placed and replaced with at most this many.
  'Order.items': { most: MAX_ORDER_ITEMS },
};
const UNSTATED_LIST: ListLength = { argument: 'first', most: MAX_PAGE_SIZE };

/**
 * How many times a list counts its selection: its length argument as graphql-js resolves it for the
 * resolver (getArgumentValues: the variable's value from variables coerced by getVariableValues,
 * which gives a variable not sent its declared default; else the argument's default in the
 * schema), or the list's most when that is null, unreadable or absent. `variables` undefined:
 * validating, the variables not known yet; a length given by a variable then counts 1 (the client
 * may send less than its default) and is priced again with the variables before anything runs.
 */
function lengthOf(field: GraphQLField<unknown, unknown>, coordinate: string, node: FieldNode, variables: Record<string, unknown> | undefined): number {
  const length = LIST_LENGTHS[coordinate] ?? UNSTATED_LIST;
  const argument = field.args.find((definition) => definition.name === length.argument);
  if (!argument) return length.most;
  if (variables === undefined && node.arguments?.some((written) => written.name.value === argument.name && written.value.kind === Kind.VARIABLE)) return 1;
  let value: unknown;
  try {
    value = getArgumentValues({ ...field, args: [argument] }, node, variables)[argument.name];
  } catch {
    value = undefined; // a value the field refuses (it errs when run): count the most it could return
  }
  return typeof value === 'number' && Number.isFinite(value) ? Math.max(1, value) : length.most;
}

interface Pricing {
  schema: GraphQLSchema;
  fragments: Map<string, FragmentDefinitionNode>;
  /** Coerced, defaults included; undefined while validating. */
  variables: Record<string, unknown> | undefined;
  visiting: Set<string>;
}

/** The composite type a name gives, if the schema has one (a document not yet validated may name anything). */
function compositeType(schema: GraphQLSchema, name: string): GraphQLCompositeType | undefined {
  const type = schema.getType(name);
  return isCompositeType(type) ? type : undefined;
}

function selectionCost(selectionSet: SelectionSetNode, parent: GraphQLCompositeType | undefined, pricing: Pricing): number {
  let cost = 0;
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) {
      if (selection.name.value.startsWith('__')) continue; // introspection and __typename are free
      if (!selection.selectionSet) {
        cost += 1;
        continue;
      }
      const field = parent && !isUnionType(parent) ? parent.getFields()[selection.name.value] : undefined;
      if (!field) {
        cost += 2 + selectionCost(selection.selectionSet, undefined, pricing); // unknown: validation refuses it
        continue;
      }
      const times = isListType(getNullableType(field.type)) ? lengthOf(field, `${parent!.name}.${field.name}`, selection, pricing.variables) : 1;
      cost += 2 + times * selectionCost(selection.selectionSet, compositeType(pricing.schema, getNamedType(field.type).name), pricing);
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      const type = selection.typeCondition ? compositeType(pricing.schema, selection.typeCondition.name.value) : parent;
      cost += selectionCost(selection.selectionSet, type, pricing);
    } else {
      const fragment = pricing.fragments.get(selection.name.value);
      // A fragment spread inside itself is invalid (validation says so); count it once.
      if (!fragment || pricing.visiting.has(fragment.name.value)) continue;
      pricing.visiting.add(fragment.name.value);
      cost += selectionCost(fragment.selectionSet, compositeType(pricing.schema, fragment.typeCondition.name.value), pricing);
      pricing.visiting.delete(fragment.name.value);
    }
  }
  return cost;
}

/**
 * What `operation` costs. `variables`: as the client sent them, to price the operation as it will
 * run; left out while validating, before they are known. Variables that do not coerce price as
 * while validating: Apollo Gateway's executor coerces them the same way and runs nothing.
 */
export function costOf(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode, variables?: Record<string, unknown>): QueryCost {
  const coerced = variables === undefined ? undefined : getVariableValues(schema, operation.variableDefinitions ?? [], variables).coerced;
  const pricing: Pricing = { schema, fragments: fragmentsOf(document), variables: coerced, visiting: new Set() };
  const writes = mutationFieldsOf(document, operation);
  return { requested: writes * MUTATION_FIELD_COST + selectionCost(operation.selectionSet, schema.getRootType(operation.operation) ?? undefined, pricing), limit: MAX_QUERY_COST };
}

/** Refuses each operation over the limit, naming it and the cost, before anything runs. */
export const QueryCostLimit: ValidationRule = (context) => ({
  OperationDefinition(node) {
    const cost = costOf(context.getSchema(), context.getDocument(), node);
    if (cost.requested > cost.limit) {
      context.reportError(
        graphQLRefusal(`Query cost limit exceeded: this operation costs ${cost.requested} and the limit is ${cost.limit} (a field costs 1, an object 2 plus its fields, a list its selection times its length).`, 'QUERY_COST_LIMIT_EXCEEDED', {
          nodes: [node],
          extensions: { cost },
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
        graphQLRefusal(`Too many mutation fields: this operation has ${fields} and at most ${MAX_MUTATION_FIELDS} run per request (aliases count; each is a write, as one REST call).`, 'MUTATION_LIMIT_EXCEEDED', {
          nodes: [node],
          extensions: { mutationFields: { requested: fields, limit: MAX_MUTATION_FIELDS } },
        }),
      );
    }
  },
});
