// The gateway's calls to one subgraph: each fetch of a query plan as one JSON POST, built by the
// one outgoing-call factory (libs/outgoing-calls: undici's keep-alive pool, the time the request
// has left, the trace, the caller's credential, the outgoing-call metrics, and the failure rule:
// unreachable or reset 503, too slow 504, unreadable 502). Apollo's RemoteGraphQLDataSource would
// build node-fetch Request and Headers objects for every call (a query plan makes several per
// client request; docs/benchmarks.md has the cost), and it hands a failed call to the client as
// it came: the subgraph's URL, status and body. Here a failed call is an ApiError in our codes
// (formatError renders it like any other), and nothing of the subgraph's address or answer
// reaches the client (the log has it).
import type { GraphQLDataSource, GraphQLDataSourceProcessOptions } from '@apollo/gateway';
import type { Logger } from 'pino';
import type { GraphQLError } from 'graphql';
import { ApiError, type ErrorCode } from '@platform/errors';
import { type HttpTarget, type OutgoingCalls } from '@platform/outgoing-calls';
import { outgoingBudgetMs } from '@platform/service-kit';

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
  calls: OutgoingCalls;
  logger: Logger;
}

export class SubgraphSource implements GraphQLDataSource<SubgraphCallContext> {
  private readonly subgraph: HttpTarget;

  constructor(private readonly options: SubgraphSourceOptions) {
    this.subgraph = options.calls.http(options.name, options.url);
  }

  async process({ request, context }: GraphQLDataSourceProcessOptions<SubgraphCallContext>): Promise<GatewayResponse> {
    const { name } = this.options;
    const refused = (code: ErrorCode) => new ApiError(code, `The ${name} service could not answer this part of the query.`);
    // One deadline for all of this request's subgraph calls (no time left: 504 before any is made).
    context.deadline ??= AbortSignal.timeout(outgoingBudgetMs(this.options.timeoutMs, `the ${name} subgraph`));
    const body = JSON.stringify({ query: request.query, operationName: request.operationName, variables: request.variables });
    let answer;
    try {
      answer = await this.subgraph.request({
        operation: 'subgraph',
        method: 'POST',
        path: '',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body,
        credential: 'caller',
        authorization: context.authorization,
        deadline: context.deadline,
        json: true,
      });
    } catch (error) {
      this.options.logger.warn({ subgraph: name, err: (error as Error).message, cause: ((error as Error).cause as Error | undefined)?.message, traceId: context.traceId }, 'subgraph call failed');
      // An unreadable answer is this part of the query failing, in the words the client sees for a refusal.
      if (error instanceof ApiError && error.code === 'BAD_GATEWAY') throw refused('BAD_GATEWAY');
      throw error;
    }
    const json = /^application\/(graphql-response\+)?json/.test(String(answer.headers['content-type'] ?? ''));
    if (answer.status >= 300 || !json) {
      this.options.logger.warn({ subgraph: name, status: answer.status, body: answer.text.slice(0, 500), traceId: context.traceId }, 'subgraph call refused');
      throw refused(CODE_OF_STATUS[answer.status] ?? 'BAD_GATEWAY');
    }
    const result = answer.body as GatewayResponse | undefined;
    if (!result || typeof result !== 'object') throw refused('BAD_GATEWAY');
    return result;
  }

  close(): Promise<void> {
    return this.subgraph.close();
  }
}
