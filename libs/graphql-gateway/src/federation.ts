// The gateway's GraphQL: Apollo Gateway's query planner and executor over a supergraph composed at
// build time (no introspection of subgraphs at start), served by graphql-http, the GraphQL
// Foundation's reference GraphQL-over-HTTP server: GET for queries (a mutation over GET is 405),
// POST for both; with `Accept: application/json` every document that reaches parsing answers 200
// with `errors` (syntax, token limit, depth, aliases, cost, an operation type the graph lacks),
// with `application/graphql-response+json` the specification's 4xx. Never a 5xx for what a client
// sends. The caller's credential goes to every subgraph; every call is bounded by the time left.
// First: @platform/graphql-kit turns Apollo's telemetry off before @apollo/gateway loads.
import { documentCache, formatGraphQLError, graphQLErrorOf, graphQLRefusal, withOperationChoice } from '@platform/graphql-kit';
import { createHash } from 'node:crypto';
import { ApolloGateway } from '@apollo/gateway';
import type { Request, RequestHandler, Response } from 'express';
import { type DocumentNode, type ExecutionArgs, type ExecutionResult, getOperationAST, GraphQLError, NoSchemaIntrospectionCustomRule, type OperationDefinitionNode, specifiedRules, type ValidationRule } from 'graphql';
import { createHandler, parseRequestParams } from 'graphql-http';
import { ApiError, type ErrorCode, type GraphQLErrorCode } from '@platform/errors';
import { escapedLoneSurrogate, escapesLoneSurrogate, nestsDeeperThan, tooDeeplyNested } from '@platform/service-kit';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { createOutgoingCalls, type OutgoingCalls } from '@platform/outgoing-calls';
import { NameLengthLimit, shapeLimitRules } from './document-limits';
import { graphMetrics } from './operation-metrics';
import { costOf, MutationFieldLimit, type OperationWork, QueryCostLimit, rootFieldsOf } from './query-cost';
import { type LeftOutField, leaveOutFields } from './left-out-fields';
import { selectedElements, selectedOutputFields } from './selected-elements';
import { type SubgraphCallContext, SubgraphSource } from './subgraph-source';

/** What one operation selects, as `graphql:Type.field`, `graphql:Type.field.argument`, `graphql:Enum.VALUE`. */
export interface SelectedElements {
  elements: readonly string[];
  /** The elements that are fields of the answer, at any depth. */
  outputFields: ReadonlySet<string>;
  /** The root fields among them. */
  rootFields: ReadonlySet<string>;
}

/** The subgraph calls' context, and the HTTP exchange the operation came in (for `admit`). */
type GatewayContext = SubgraphCallContext & { exchange: { req: Request; res: Response } };

export interface FederatedGraphOptions {
  supergraphSdl: string;
  /** Subgraph name (as composed) → its URL. */
  subgraphUrls: Record<string, string>;
  introspection: boolean;
  /** Budget for a whole query when the request carries none. */
  timeoutMs: number;
  /** Where operation metrics go (and, without `calls`, the subgraph calls'), and the one log line per operation. */
  registry: Registry;
  /** The app's outgoing-call factory (libs/outgoing-calls), which makes every subgraph call. */
  calls?: OutgoingCalls;
  logger: Logger;
  /**
   * The operations the gateway knows by hash (SHA-256 of the text → the text). `allow`: clients
   * may send a hash instead of the text; `only`: nothing else runs (PERSISTED_QUERY_NOT_ALLOWED);
   * `off`: hashes are not read.
   */
  trustedDocuments: { mode: 'off' | 'allow' | 'only'; documents: Record<string, string> };
  /**
   * Called once the operation is valid and its variables known, before anything of it runs, with
   * the work it asks (its cost, the mutation fields it writes): the gateway charges its rate limit
   * here, and checks an API key's scopes. An ApiError thrown refuses the whole request in the
   * error format (429 with its headers, 403).
   */
  admit?: (req: Request, res: Response, work: OperationWork) => Promise<void>;
  /**
   * Called with the elements the operation selects (selectedElements: `graphql:Type.field`, …,
   * which of them are output fields and which the root fields), before `admit`; it may set headers. A `refusal` refuses
   * the whole operation with a GraphQL error carrying its code (the gateway's deprecated arguments
   * and enum values: GONE in a brownout or past the sunset); the output fields in `leaveOut` are
   * answered null with their error at each place, the rest of the operation answering
   * (left-out-fields.ts: the gateway's deprecated fields).
   */
  inspectSelection?: (selection: SelectedElements, req: Request, res: Response) => { refusal?: ApiError; leaveOut?: ReadonlyMap<string, LeftOutField> } | undefined;
  /**
   * Called once per admitted operation with the schema elements it selects (selected-elements.ts,
   * computed once per document), which of them are output fields and which the root fields (the
   * operation's entry points, as a REST route is): the gateway records them as the caller's usage.
   */
  selected?: (req: Request, res: Response, selection: SelectedElements) => void;
}

/** Longer documents are refused while parsing, before they cost anything. */
const MAX_TOKENS = 2_000;
/**
 * Longer documents (UTF-16 code units, as a string's length) are refused before any of them is
 * read: comments and a block string's lines are no tokens, and reading 1 MiB of them (a body's
 * most) cost ~0.2 s of CPU for one point of a caller's budget (docs/benchmarks.md). The largest
 * trusted document is under 400; an operation of 2,000 tokens, one field a line, about 23,000.
 */
const MAX_DOCUMENT_LENGTH = 32_768;

/** A JSON object from text (GET's `extensions`), or undefined. */
function parseJsonObject(text: string): Record<string, never> | undefined {
  try {
    const value = JSON.parse(text) as unknown;
    return value && typeof value === 'object' ? (value as Record<string, never>) : undefined;
  } catch {
    return undefined;
  }
}

/** The statuses graphql-http answers without a body, as our error codes. */
const PROTOCOL_REFUSALS: Record<number, ErrorCode> = { 405: 'METHOD_NOT_ALLOWED', 406: 'NOT_ACCEPTABLE', 415: 'UNSUPPORTED_MEDIA_TYPE' };

/**
 * A `subscription` (or any operation type the graph has no root type for) is the client's
 * mistake, found while validating; graphql-js leaves it to execution, where it would be a fault.
 */
const KnownOperationTypes: ValidationRule = (context) => ({
  OperationDefinition(node) {
    if (!context.getSchema().getRootType(node.operation)) {
      context.reportError(graphQLRefusal(`This graph has no ${node.operation} operations.`, 'GRAPHQL_VALIDATION_FAILED', { nodes: [node] }));
    }
  },
});

export async function createFederatedGraph(options: FederatedGraphOptions): Promise<{ middleware: RequestHandler; stop: () => Promise<void> }> {
  const metrics = graphMetrics(options.registry, options.logger);
  const calls = options.calls ?? createOutgoingCalls({ registry: options.registry });
  const sources: SubgraphSource[] = [];
  const gateway = new ApolloGateway({
    supergraphSdl: options.supergraphSdl,
    // Every subgraph call carries the caller's credential and the time left; none outlives the client's request.
    buildService: ({ name }) => {
      const source = new SubgraphSource({ name, url: options.subgraphUrls[name], timeoutMs: options.timeoutMs, calls, logger: options.logger });
      sources.push(source);
      return source;
    },
  });
  const { schema, executor } = await gateway.load();
  // Depth, aliases, directives, names and cost as validation rules; the token limit is the parser's own.
  const rules = [NameLengthLimit, ...specifiedRules, ...shapeLimitRules(), QueryCostLimit, MutationFieldLimit, ...(options.introspection ? [] : [NoSchemaIntrospectionCustomRule])];
  // Over GET a mutation is 405 whatever the graph has (graphql-http checks it after validating).
  const postRules = [...rules, KnownOperationTypes];

  // The gateway sees the same few documents over and over: parse and validate each once.
  const documents = documentCache({ maxTokens: MAX_TOKENS, maxSourceLength: MAX_DOCUMENT_LENGTH });
  /** Apollo's query-plan cache key (a SHA-256 of the text), once per cached document, not per request. */
  const queryHashes = new WeakMap<DocumentNode, string>();
  const queryHashOf = (document: DocumentNode, source: string): string => {
    let hash = queryHashes.get(document);
    if (hash === undefined) queryHashes.set(document, (hash = createHash('sha256').update(source).digest('hex')));
    return hash;
  };

  /**
   * Apollo Gateway plans and runs the operation; graphql-http did the HTTP, parsing and validation.
   * A refusal before anything runs (variables that do not fit, a cost over the limit once they are
   * known, a gone argument) is a request error: its errors alone, which graphql-http answers as it
   * answers a validation error, without `data` and 400 for application/graphql-response+json.
   */
  const execute = async (args: ExecutionArgs): Promise<ExecutionResult | readonly GraphQLError[]> => {
    const source = args.document.loc?.source.body ?? '';
    // graphql-http calls this only once getOperationAST found the operation for these same args
    // (it answers a document without one itself, after withOperationChoice's rule, @platform/graphql-kit, says why).
    const operation = getOperationAST(args.document, args.operationName ?? undefined) as OperationDefinitionNode;
    const context = args.contextValue as GatewayContext;
    // With the variables known, `first: $n` counts as it will run (the value sent, else $n's default); over the limit, nothing runs.
    const cost = costOf(schema, args.document, operation, (args.variableValues ?? {}) as Record<string, unknown>);
    if (cost.requested > cost.limit) {
      return [graphQLRefusal(`Query cost limit exceeded: this operation costs ${cost.requested} with its variables and the limit is ${cost.limit}.`, 'QUERY_COST_LIMIT_EXCEEDED', { extensions: { cost } })];
    }
    const rootFields = rootFieldsOf(args.document, operation);
    const rootType = schema.getRootType(operation.operation)?.name;
    const selection: SelectedElements = {
      elements: selectedElements(schema, args.document, args.operationName),
      outputFields: selectedOutputFields(schema, args.document, args.operationName),
      rootFields: new Set(rootFields.map((name) => `graphql:${rootType}.${name}`)),
    };
    const { refusal, leaveOut } = options.inspectSelection?.(selection, context.exchange.req, context.exchange.res) ?? {};
    if (refusal) return [graphQLErrorOf(refusal)];
    // Charged before it runs: a refusal (429) leaves every mutation field unrun.
    await options.admit?.(context.exchange.req, context.exchange.res, { type: operation.operation, cost: cost.requested, mutationFields: operation.operation === 'mutation' ? rootFields.length : 0, rootFields, outputFields: selection.outputFields });
    options.selected?.(context.exchange.req, context.exchange.res, selection);
    // A fault of the planner or executor is ours: INTERNAL in the body (logged), never a 500 the
    // client's document could trigger again and again.
    const result = await executor({
      request: { query: source, operationName: args.operationName ?? undefined, variables: (args.variableValues ?? {}) as Record<string, unknown> },
      logger: options.logger,
      schema,
      schemaHash: 'supergraph' as never,
      context,
      cache: undefined as never,
      queryHash: queryHashOf(args.document, source),
      document: args.document,
      source,
      operationName: args.operationName ?? null,
      operation,
      metrics: {},
      overallCachePolicy: { restrict: () => undefined, replace: () => undefined, policyIfCacheable: () => null },
    }).catch((error: unknown) => {
      options.logger.error({ err: error, traceId: context.traceId }, 'graphql execution failed');
      return { data: null, errors: [new GraphQLError('An unexpected error occurred.', { extensions: { code: 'INTERNAL' } })] };
    });
    // No `data` at all: Apollo refused the variables (a wrong type, a required one missing) before running anything.
    if (!('data' in result) || result.data === undefined) return result.errors ?? [];
    const answer = leaveOut ? leaveOutFields(schema, args.document, operation, result, leaveOut) : result;
    return { data: answer.data ?? null, errors: answer.errors, extensions: { cost } };
  };

  const handle = createHandler<Request, { res: Response }, GatewayContext>({
    schema,
    // graphql-http throws a plain Error for parameters it cannot read (variables that are not JSON,
    // no query): the client's mistake, 400 MALFORMED_REQUEST, not a fault to hide behind INTERNAL.
    parseRequestParams: async (req) => {
      try {
        return await parseRequestParams(req);
      } catch (error) {
        throw new ApiError('MALFORMED_REQUEST', `The GraphQL request parameters cannot be read: ${(error as Error).message}.`);
      }
    },
    parse: documents.parse,
    validate: documents.validate,
    // The operation to run is chosen after validation, and a choice that fails gets graphql-http's
    // unclear refusal: such a request gets one more rule saying why (a fresh list, so the
    // document cache's verdict for the usual lists stays as it is).
    validationRules: (req, args) => withOperationChoice(req.method === 'GET' ? rules : postRules, args.document, args.operationName),
    execute: execute as never,
    context: (req) => ({ authorization: req.raw.headers.authorization, traceId: req.context.res.locals.traceId, exchange: { req: req.raw, res: req.context.res } }),
    onOperation: (req, args, result) => {
      const operation = getOperationAST(args.document, args.operationName ?? undefined);
      const errors = Array.isArray(result) ? (result as readonly GraphQLError[]) : result.errors;
      metrics.ran(req.context.res, { operationName: args.operationName ?? operation?.name?.value, type: operation?.operation, errors });
    },
    formatError: formatGraphQLError({ hideSuggestions: !options.introspection }),
  });
  const trusted = options.trustedDocuments;
  // A Map: a hash like `constructor` or `__proto__` is no trusted document (an object would answer with its prototype's).
  const trustedTexts = new Map(Object.entries(trusted.documents));
  /** A refusal before parsing, in GraphQL's error shape: 200 for application/json, 400 for graphql-response+json. */
  const refuse = (req: Request, res: Response, code: GraphQLErrorCode, message: string) => {
    const strict = req.accepts(['application/json', 'application/graphql-response+json']) === 'application/graphql-response+json';
    res.status(strict ? 400 : 200).type(strict ? 'application/graphql-response+json' : 'application/json').send(JSON.stringify({ errors: [{ message, extensions: { code } }] }));
  };

  // graphql-http's own answers without a body (406, 415) become the one error format.
  const serve: RequestHandler = async (req, res, next) => {
    try {
      // HEAD is GET without the body (RFC 9110 §9.3.2), as on every other path: graphql-http
      // knows only GET and POST, so it is handed a GET and Node leaves the body out.
      const method = req.method === 'HEAD' ? 'GET' : req.method;
      // Trusted documents: a hash stands for its text; with `only`, nothing else runs.
      const url = new URL(req.url, 'http://gateway');
      const params = (method === 'GET' ? Object.fromEntries(url.searchParams) : (req.body ?? {})) as Record<string, unknown>;
      // GET's variables and extensions are JSON too: held to the body's checks (nesting, lone surrogates) before anything parses them.
      for (const name of ['variables', 'extensions']) {
        const text = params[name];
        if (method !== 'GET' || typeof text !== 'string') continue;
        if (nestsDeeperThan(text)) throw tooDeeplyNested(`The ${name} parameter`);
        if (escapesLoneSurrogate(text)) throw escapedLoneSurrogate(`The ${name} parameter`);
      }
      let extensions = params.extensions as { persistedQuery?: { sha256Hash?: unknown } } | string | undefined;
      if (typeof extensions === 'string') extensions = parseJsonObject(extensions);
      const hash = trusted.mode === 'off' ? undefined : extensions?.persistedQuery?.sha256Hash;
      const query = typeof params.query === 'string' ? params.query : undefined;
      if (typeof hash === 'string') {
        const text = trustedTexts.get(hash);
        if (!text) return refuse(req, res, 'PERSISTED_QUERY_NOT_FOUND', `No trusted document has the hash ${hash.slice(0, 64)}.`);
        if (query !== undefined && query !== text) return refuse(req, res, 'PERSISTED_QUERY_HASH_MISMATCH', 'The query sent is not the trusted document its hash names.');
        if (method === 'GET') url.searchParams.set('query', text);
        else (req.body as Record<string, unknown>).query = text;
      } else if (trusted.mode === 'only') {
        return refuse(req, res, 'PERSISTED_QUERY_NOT_ALLOWED', 'This gateway runs trusted documents only: send extensions.persistedQuery.sha256Hash of one of them.');
      }
      const [body, init] = await handle({ url: `${url.pathname}${url.search}`, method, headers: req.headers, body: () => req.body as Record<string, unknown>, raw: req, context: { res } });
      // A mutation over GET: graphql-http answers 405 with a body but no content type; clients get
      // the one error format instead, as for any other method a path does not take.
      if (init.status === 405 && body !== null) throw new ApiError('METHOD_NOT_ALLOWED', 'A mutation cannot run over GET: send it with POST.', { headers: { Allow: 'POST' } });
      if (body === null && init.status >= 400) throw new ApiError(PROTOCOL_REFUSALS[init.status] ?? 'MALFORMED_REQUEST', `${init.statusText}: GraphQL over HTTP takes GET or an application/json POST, and answers application/json or application/graphql-response+json.`);
      res.writeHead(init.status, init.statusText, init.headers).end(body);
    } catch (error) {
      next(error);
    }
  };
  return {
    middleware: metrics.observe(serve),
    stop: async () => {
      await gateway.stop();
      await Promise.all(sources.map((source) => source.close()));
    },
  };
}
