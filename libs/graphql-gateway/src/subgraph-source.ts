// The gateway's calls to one subgraph: each fetch of a query plan as one JSON POST over undici's
// keep-alive connection pool, with the caller's credential, the request's trace and the time it
// has left. Apollo's RemoteGraphQLDataSource would build node-fetch Request and Headers objects
// for every call (a query plan makes several per client request; docs/benchmarks.md has the
// cost), and it hands a failed call to the client as it came: the subgraph's URL, status and body.
// Here a failed call is an ApiError in our codes (formatError renders it like any other), and
// nothing of the subgraph's address or answer reaches the client (the log has it).
import type { GraphQLDataSource, GraphQLDataSourceProcessOptions } from '@apollo/gateway';
import type { Logger } from 'pino';
import type { GraphQLError } from 'graphql';
import { Pool } from 'undici';
import { ApiError, type ErrorCode } from '@platform/errors';
import { outgoingBudgetMs, outgoingTraceparent, TIMEOUT_HEADER } from '@platform/service-kit';
import type { GraphMetrics } from './operation-metrics';

/** What the gateway keeps per client request for its subgraph calls. */
export interface SubgraphCallContext {
  authorization?: string;
  traceId?: string;
  /**
   * Aborts every subgraph call of this client request once its time is up: one timer per request,
   * made by the first call, rather than one per call.
   */
  deadline?: AbortSignal;
  [key: PropertyKey]: unknown;
}

interface GatewayResponse {
  data?: Record<string, unknown> | null;
  errors?: readonly GraphQLError[];
  extensions?: Record<string, unknown>;
}

/** A subgraph's refusal as the client sees it: the codes REST answers for the same failure. */
const CODE_OF_STATUS: Record<number, ErrorCode> = { 401: 'UNAUTHENTICATED', 403: 'FORBIDDEN', 503: 'SERVICE_UNAVAILABLE', 504: 'GATEWAY_TIMEOUT' };

export interface SubgraphSourceOptions {
  name: string;
  /** The subgraph's GraphQL endpoint, e.g. http://users-service:3001/graphql. */
  url: string;
  /** Budget for a whole query when the request carries none. */
  timeoutMs: number;
  metrics: GraphMetrics;
  logger: Logger;
}

export class SubgraphSource implements GraphQLDataSource<SubgraphCallContext> {
  private readonly pool: Pool;
  private readonly path: string;

  constructor(private readonly options: SubgraphSourceOptions) {
    const url = new URL(options.url);
    this.pool = new Pool(url.origin, { connections: 256, pipelining: 1 });
    this.path = `${url.pathname}${url.search}`;
  }

  async process({ request, context }: GraphQLDataSourceProcessOptions<SubgraphCallContext>): Promise<GatewayResponse> {
    const { name } = this.options;
    const refused = (code: ErrorCode) => new ApiError(code, `The ${name} service could not answer this part of the query.`);
    // No time left is GATEWAY_TIMEOUT before the call is made (an ApiError: formatError maps it).
    const budget = outgoingBudgetMs(this.options.timeoutMs, `the ${name} subgraph`);
    context.deadline ??= AbortSignal.timeout(budget);
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json', [TIMEOUT_HEADER]: String(budget) };
    if (context.authorization) headers.authorization = context.authorization;
    const traceparent = outgoingTraceparent();
    if (traceparent) headers.traceparent = traceparent;
    const body = JSON.stringify({ query: request.query, operationName: request.operationName, variables: request.variables });
    const done = this.options.metrics.subgraphCall(name);
    try {
      const answer = await this.pool.request({ path: this.path, method: 'POST', headers, body, signal: context.deadline });
      const json = /^application\/(graphql-response\+)?json/.test(String(answer.headers['content-type'] ?? ''));
      if (answer.statusCode >= 300 || !json) {
        const text = await answer.body.text().catch(() => '');
        this.options.logger.warn({ subgraph: name, status: answer.statusCode, body: text.slice(0, 500), traceId: context.traceId }, 'subgraph call refused');
        throw refused(CODE_OF_STATUS[answer.statusCode] ?? 'BAD_GATEWAY');
      }
      const result = (await answer.body.json().catch(() => undefined)) as GatewayResponse | undefined;
      if (!result || typeof result !== 'object') throw refused('BAD_GATEWAY');
      done('ok');
      return result;
    } catch (error) {
      done('error');
      if (error instanceof ApiError) throw error;
      this.options.logger.warn({ subgraph: name, err: (error as Error).message, traceId: context.traceId }, 'subgraph call failed');
      if ((error as Error).name === 'TimeoutError' || context.deadline.aborted) throw new ApiError('GATEWAY_TIMEOUT', `The ${name} service did not answer in time.`);
      throw new ApiError('SERVICE_UNAVAILABLE', `The ${name} service is unavailable; retry shortly.`);
    }
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
