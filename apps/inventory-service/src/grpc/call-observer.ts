// Every gRPC call the inventory server answers, whatever its shape (unary or streaming): counted
// and timed by method and status code, and one access-log line each, as HTTP requests get from
// requestLog. A server interceptor, so no method can forget it.
import { Metadata, ServerInterceptingCall, type ServerInterceptor, status } from '@grpc/grpc-js';
import { Counter, Histogram, type Registry } from 'prom-client';
import { type Logger, traceIdFrom } from '@platform/service-kit';
import { activeTraceId } from '@platform/tracing';

/** Health checks and reflection: counted, not logged (probes would drown the log). */
const QUIET = /^\/grpc\.(health|reflection)\./;

export function observeCalls(options: { registry: Registry; logger: Logger }): ServerInterceptor {
  const handled = new Counter({ name: 'grpc_server_handled_total', help: 'gRPC calls answered, by method and status code', labelNames: ['grpc_method', 'grpc_code'], registers: [options.registry] });
  const duration = new Histogram({
    name: 'grpc_server_handling_seconds',
    help: 'gRPC call latency from its start to its status, by method and status code',
    labelNames: ['grpc_method', 'grpc_code'],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [options.registry],
  });
  return (descriptor, call) => {
    const method = descriptor.path.slice(descriptor.path.lastIndexOf('/') + 1);
    const started = process.hrtime.bigint();
    let traceparent: string | undefined;
    let caller: string | undefined;
    return new ServerInterceptingCall(call, {
      start(next) {
        next({
          onReceiveMetadata(metadata: Metadata, nextMetadata: (metadata: Metadata) => void) {
            traceparent = metadata.get('traceparent')[0]?.toString();
            caller = metadata.get('user-agent')[0]?.toString().split(' ')[0];
            nextMetadata(metadata);
          },
        });
      },
      sendStatus(outcome, next) {
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        const code = status[outcome.code];
        handled.inc({ grpc_method: method, grpc_code: code });
        duration.observe({ grpc_method: method, grpc_code: code }, seconds);
        if (!QUIET.test(descriptor.path)) {
          const entry = { traceId: activeTraceId() ?? traceIdFrom(traceparent), grpcMethod: descriptor.path, grpcCode: code, durationMs: seconds * 1_000, caller };
          if (outcome.code === status.INTERNAL || outcome.code === status.UNKNOWN) options.logger.error(entry, 'grpc call failed');
          else options.logger.info(entry, 'grpc call');
        }
        next(outcome);
      },
    });
  };
}
