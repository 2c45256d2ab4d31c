// What operators see of GraphQL at the gateway: every operation counted and timed by its name
// and type, with errors counted by code, one log line each. HTTP metrics alone show one route,
// POST /v1/graphql, for everything. Subgraph calls are outgoing calls like any other: timed in
// outgoing_call_duration_seconds{target=<subgraph>,operation="subgraph"} (libs/outgoing-calls).
import type { RequestHandler, Response } from 'express';
import type { GraphQLError } from 'graphql';
import type { Logger } from 'pino';
import { Counter, Histogram, type Registry } from 'prom-client';
import type { Principal } from '@platform/auth';
import { ClientChosenLabel, dropSeries } from '@platform/service-kit';

/** Operation names are the client's to choose: past this many distinct ones, or this many new ones from one caller, "other" (ClientChosenLabel). */
const MAX_OPERATION_NAMES = 200;
const NEW_OPERATION_NAMES_PER_CALLER = 20;

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** What the handler learnt of the operation it ran (unset: the document never got to run). */
export interface OperationFacts {
  operationName?: string;
  type?: string;
  errors?: readonly GraphQLError[];
}

export interface GraphMetrics {
  /** Wraps the GraphQL handler: one measurement and one log line per request, when its answer is sent. */
  observe(handler: RequestHandler): RequestHandler;
  /** Called by the handler once it has run an operation. */
  ran(res: Response, facts: OperationFacts): void;
}

export function graphMetrics(registry: Registry, logger: Logger): GraphMetrics {
  const operations = new Histogram({
    name: 'graphql_operation_duration_seconds',
    help: 'GraphQL operations at the gateway, by operation name, type and outcome (ok, or error when the response carries errors)',
    labelNames: ['operation', 'type', 'outcome'],
    buckets: BUCKETS,
    registers: [registry],
  });
  const errors = new Counter({ name: 'graphql_operation_errors_total', help: 'GraphQL errors in responses, by operation name, type and error code', labelNames: ['operation', 'type', 'code'], registers: [registry] });
  const operationNames = new ClientChosenLabel(MAX_OPERATION_NAMES, NEW_OPERATION_NAMES_PER_CALLER, (name) => {
    void dropSeries(operations, 'operation', name);
    void dropSeries(errors, 'operation', name);
  });

  return {
    observe: (handler) => (req, res, next) => {
      const started = process.hrtime.bigint();
      res.once('finish', () => {
        const facts = res.locals.graphqlOperation;
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        // A document refused before it ran (syntax, limits, validation) is "unparsed"/"unknown".
        const named = facts?.operationName;
        const operation = named !== undefined ? operationNames.valueOf(named, (res.locals.principal as Principal | undefined)?.userId) : facts ? 'anonymous' : 'unparsed';
        const labels = { operation, type: facts?.type ?? 'unknown' };
        const codes = facts ? (facts.errors ?? []).map((error) => String(error.extensions?.code ?? 'INTERNAL')) : res.statusCode < 300 ? ['GRAPHQL_VALIDATION_FAILED'] : [`HTTP_${res.statusCode}`];
        operations.observe({ ...labels, outcome: codes.length ? 'error' : 'ok' }, seconds);
        for (const code of codes) errors.inc({ ...labels, code });
        logger.info({ traceId: res.locals.traceId, operationName: facts?.operationName ?? null, operationType: labels.type, status: res.statusCode, durationMs: seconds * 1_000, errorCodes: codes }, 'graphql operation');
      });
      handler(req, res, next);
    },
    ran: (res, facts) => {
      res.locals.graphqlOperation = facts;
    },
  };
}
