#!/usr/bin/env node
// Writes the Grafana dashboards in deploy/monitoring/dashboards/ from the definitions below:
// one per concern, each panel a PromQL query over metrics the apps expose (the e2e suite checks
// every metric name against the apps' real /metrics). `--check` fails when a committed file is
// stale (CI). Grafana loads them from the ConfigMaps of deploy/monitoring (sidecar label
// grafana_dashboard=1), with the Prometheus data source chosen in the dashboard.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeOrCheck } from '../generated-file.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** A time series panel: `queries` as [PromQL, legend]. */
const panel = (title, unit, queries, description) => ({ title, unit, queries, description });

const gateway = 'service="gateway"';

const dashboards = {
  edge: {
    title: 'Order platform: the edge (gateway)',
    description: 'What clients see at the one public door: traffic, errors against the SLO, latency, rate limiting.',
    panels: [
      panel('Requests by status class', 'reqps', [[`sum by (class) (label_replace(rate(http_requests_total{${gateway}}[$__rate_interval]), "class", "\${1}xx", "status", "(.).."))`, '{{class}}']]),
      panel('5xx share (SLO: under 0.1 %)', 'percentunit', [
        [`sum(rate(http_requests_total{${gateway},status=~"5.."}[$__rate_interval])) / sum(rate(http_requests_total{${gateway}}[$__rate_interval]))`, '5xx share'],
        ['platform:gateway_errors:ratio_rate1h', 'last hour'],
      ], 'Budget: 0.1 % of requests over 30 days. The burn-rate alerts page at 14.4x (hour) and 6x (six hours).'),
      panel('Latency by route (p50, p99)', 's', [
        [`histogram_quantile(0.5, sum by (le, route) (rate(http_request_duration_seconds_bucket{${gateway}}[$__rate_interval])))`, 'p50 {{route}}'],
        [`histogram_quantile(0.99, sum by (le, route) (rate(http_request_duration_seconds_bucket{${gateway}}[$__rate_interval])))`, 'p99 {{route}}'],
      ]),
      panel('Share slower than 500 ms (SLO: under 1 %)', 'percentunit', [['platform:gateway_slow:ratio_rate5m', 'last 5 minutes'], ['platform:gateway_slow:ratio_rate1h', 'last hour']]),
      panel('429 RATE_LIMITED by route', 'reqps', [[`sum by (route) (rate(http_requests_total{${gateway},status="429"}[$__rate_interval]))`, '{{route}}']]),
      panel('Rate-limit decisions by policy', 'reqps', [['sum by (policy, decision) (rate(gateway_rate_limit_decisions_total[$__rate_interval]))', '{{policy}} {{decision}}']], 'tokens and tokens-ip limit POST /v1/tokens per email and per client address (password guessing); default is everything else, per user.'),
      panel('Rate-limit store per replica (1 = counting there)', 'none', [['max by (pod, store) (gateway_rate_limit_store)', '{{pod}} {{store}}']], 'memory on a replica means Redis is not answering: each replica counts alone (runbook: RateLimiterOnMemory).'),
      panel('Rate-limit store switches', 'none', [['sum by (to) (increase(gateway_rate_limit_store_switches_total[$__rate_interval]))', 'to {{to}}']]),
      panel('Calls by API version and client (retirement decisions)', 'reqps', [['topk(10, sum by (version, client) (rate(gateway_requests_total[$__rate_interval])))', '{{version}} {{client}}']]),
    ],
  },
  services: {
    title: 'Order platform: services',
    description: 'Each service behind the gateway: rate, errors and duration per route, its PostgreSQL, and the process.',
    variable: { name: 'service', query: 'label_values(http_requests_total, service)' },
    panels: [
      panel('Requests by route and status', 'reqps', [['sum by (route, status) (rate(http_requests_total{service="$service"}[$__rate_interval]))', '{{route}} {{status}}']]),
      panel('5xx by route', 'reqps', [['sum by (route) (rate(http_requests_total{service="$service",status=~"5.."}[$__rate_interval]))', '{{route}}']]),
      panel('p99 latency by route', 's', [['histogram_quantile(0.99, sum by (le, route) (rate(http_request_duration_seconds_bucket{service="$service"}[$__rate_interval])))', '{{route}}']]),
      panel('CPU per pod', 'percentunit', [['sum by (pod) (rate(process_cpu_seconds_total{service="$service"}[$__rate_interval]))', '{{pod}}']]),
      panel('Resident memory per pod', 'bytes', [['max by (pod) (process_resident_memory_bytes{service="$service"})', '{{pod}}']]),
      panel('Event loop delay p99 per pod', 's', [['max by (pod) (nodejs_eventloop_lag_p99_seconds{service="$service"})', '{{pod}}']], 'Above ~50 ms, every request on that pod waits: CPU limit too low, or synchronous work in a handler.'),
      panel('PostgreSQL query p99 by statement', 's', [['histogram_quantile(0.99, sum by (le, statement) (rate(db_query_duration_seconds_bucket{service="$service"}[$__rate_interval])))', '{{statement}}']]),
      panel('PostgreSQL connections per pod', 'none', [['max by (pod, state) (db_pool_connections{service="$service"})', '{{pod}} {{state}}']], 'waiting above 0 for long: the pool (10 per pod) is too small for the load, or queries hold connections too long.'),
      panel('Stock releases waiting for inventory (orders)', 'none', [['max(orders_pending_stock_releases)', 'pending']], 'Grows when inventory cannot take stock back; the sweeper retries (runbook: PendingStockReleasesGrowing).'),
      panel('Outbox: events waiting and the oldest one\'s age', 'none', [['max(outbox_backlog_events{service="$service"})', 'waiting'], ['max(outbox_oldest_unpublished_age_seconds{service="$service"})', 'oldest (s)']], 'Committed, not yet acknowledged by the transport (runbook: OutboxEventsWaiting).'),
      panel('Events published by type, and relay errors', 'ops', [['sum by (type) (rate(outbox_events_published_total{service="$service"}[$__rate_interval]))', '{{type}}'], ['sum(rate(outbox_relay_errors_total{service="$service"}[$__rate_interval]))', 'relay errors']]),
      panel('Relay lag p99 (write to acknowledgement)', 's', [['histogram_quantile(0.99, sum by (le) (rate(outbox_relay_lag_seconds_bucket{service="$service"}[$__rate_interval])))', 'p99']]),
      panel('Events consumed by outcome, and redeliveries', 'ops', [['sum by (source, outcome) (rate(events_consumed_total{service="$service"}[$__rate_interval]))', '{{source}} {{outcome}}'], ['sum by (source) (rate(events_redelivered_total{service="$service"}[$__rate_interval]))', '{{source}} redelivered']], 'parked above 0: events in dead_letter_events (runbook: EventsParked).'),
      panel('Consumer lag p99 (write to handling)', 's', [['histogram_quantile(0.99, sum by (le, source) (rate(events_consumer_lag_seconds_bucket{service="$service"}[$__rate_interval])))', '{{source}}']], 'runbook: EventConsumerLagging'),
      panel('Webhook deliveries by outcome (users)', 'ops', [['sum by (outcome) (rate(webhook_deliveries_total[$__rate_interval]))', '{{outcome}}']], 'Attempts to client URLs. HTTP_ERROR and TIMEOUT are the receivers\' (retried ~3 days); FORBIDDEN_ADDRESS rising: URLs re-pointed inside (docs/security.md). NOT_SENT: cut short before the request went out and put back, not an attempt (many while receivers are slow, a few at each rollout).'),
      panel('Webhook delivery latency p50 and p99 (users)', 's', [['histogram_quantile(0.5, sum by (le) (rate(webhook_delivery_duration_seconds_bucket[$__rate_interval])))', 'p50'], ['histogram_quantile(0.99, sum by (le) (rate(webhook_delivery_duration_seconds_bucket[$__rate_interval])))', 'p99']], 'Send to answer; 15 s is the timeout.'),
      panel('Events waiting for this consumer at the broker', 'none', [['max by (source) (events_consumer_pending{service="$service"})', '{{source}}']], 'Stored, not yet acknowledged (NATS; every replica reports the same backlog). Growing while nothing is consumed: runbook EventConsumerStalled.'),
      panel('Dead letters waiting for an operator', 'none', [['max(events_dead_letters_waiting{service="$service"})', 'parked']], 'npm run events:dead-letters -- list, then replay <id> once the cause is fixed (runbook: EventsParked).'),
    ],
  },
  graphql: {
    title: 'Order platform: GraphQL',
    description: 'GraphQL at the gateway, per operation (name and type), and the subgraph calls each query plan makes.',
    panels: [
      panel('Operations by name and type', 'reqps', [['sum by (operation, type) (rate(graphql_operation_duration_seconds_count[$__rate_interval]))', '{{type}} {{operation}}']]),
      panel('Share of operations answered with errors', 'percentunit', [['sum by (operation) (rate(graphql_operation_duration_seconds_count{outcome="error"}[$__rate_interval])) / sum by (operation) (rate(graphql_operation_duration_seconds_count[$__rate_interval]))', '{{operation}}']], 'GraphQL answers 200 with errors: HTTP metrics do not show these.'),
      panel('Errors by code', 'reqps', [['sum by (code) (rate(graphql_operation_errors_total[$__rate_interval]))', '{{code}}']]),
      panel('Operation p99 by name', 's', [['histogram_quantile(0.99, sum by (le, operation) (rate(graphql_operation_duration_seconds_bucket[$__rate_interval])))', '{{operation}}']]),
      panel('Subgraph call p99 by subgraph', 's', [['histogram_quantile(0.99, sum by (le, target) (rate(outgoing_call_duration_seconds_bucket{operation="subgraph"}[$__rate_interval])))', '{{target}}']]),
      panel('Failed subgraph calls by subgraph and outcome', 'reqps', [['sum by (target, outcome) (rate(outgoing_call_duration_seconds_count{operation="subgraph",outcome!="ok"}[$__rate_interval]))', '{{target}} {{outcome}}']], 'unavailable (503), timeout (504) and malformed (502) are the failure rule of libs/outgoing-calls; a number is the status the subgraph answered.'),
    ],
  },
  inventory: {
    title: 'Order platform: inventory (gRPC)',
    description: 'Calls to the inventory service by method and status code, timed on both sides.',
    panels: [
      panel('Server latency p50 and p99 by method', 's', [
        ['histogram_quantile(0.5, sum by (le, grpc_method) (rate(grpc_server_handling_seconds_bucket[$__rate_interval])))', 'p50 {{grpc_method}}'],
        ['histogram_quantile(0.99, sum by (le, grpc_method) (rate(grpc_server_handling_seconds_bucket[$__rate_interval])))', 'p99 {{grpc_method}}'],
      ]),
      panel('Caller latency p99 by method (orders-service)', 's', [['histogram_quantile(0.99, sum by (le, operation) (rate(outgoing_call_duration_seconds_bucket{target="inventory"}[$__rate_interval])))', 'p99 {{operation}}']], 'Far above the server p99: the network, or calls queued on the caller.'),
      panel('Calls by method and code', 'reqps', [['sum by (grpc_method, grpc_code) (rate(grpc_server_handled_total[$__rate_interval]))', '{{grpc_method}} {{grpc_code}}']]),
      panel('Refusals and failures by method (not OK)', 'reqps', [['sum by (grpc_method, grpc_code) (rate(grpc_server_handled_total{grpc_code!="OK"}[$__rate_interval]))', '{{grpc_method}} {{grpc_code}}']], 'FAILED_PRECONDITION is out of stock (normal); UNAUTHENTICATED or PERMISSION_DENIED is a caller without a valid service token; DEADLINE_EXCEEDED and UNAVAILABLE are ours.'),
    ],
  },
};

/** Grafana's dashboard JSON (schema 39): a data source variable, then the panels two to a row. */
function grafanaDashboard(uid, { title, description, variable, panels }) {
  const templating = [{ name: 'datasource', type: 'datasource', query: 'prometheus', label: 'Prometheus' }];
  if (variable) {
    templating.push({ name: variable.name, type: 'query', datasource: { type: 'prometheus', uid: '${datasource}' }, query: { query: variable.query, refId: 'variable' }, refresh: 2, includeAll: false, sort: 1 });
  }
  return {
    uid: `order-platform-${uid}`,
    title,
    description,
    tags: ['order-platform'],
    schemaVersion: 39,
    editable: false,
    time: { from: 'now-6h', to: 'now' },
    refresh: '30s',
    templating: { list: templating },
    panels: panels.map((definition, index) => ({
      id: index + 1,
      type: 'timeseries',
      title: definition.title,
      ...(definition.description ? { description: definition.description } : {}),
      datasource: { type: 'prometheus', uid: '${datasource}' },
      gridPos: { h: 8, w: 12, x: (index % 2) * 12, y: Math.floor(index / 2) * 8 },
      fieldConfig: { defaults: { unit: definition.unit }, overrides: [] },
      targets: definition.queries.map(([expr, legendFormat], query) => ({ refId: String.fromCharCode(65 + query), expr, legendFormat })),
    })),
  };
}

for (const [uid, definition] of Object.entries(dashboards)) {
  writeOrCheck(root, path.join(root, 'deploy/monitoring/dashboards', `${uid}.json`), `${JSON.stringify(grafanaDashboard(uid, definition), null, 2)}\n`, 'node tools/monitoring/build-dashboards.mjs');
}
