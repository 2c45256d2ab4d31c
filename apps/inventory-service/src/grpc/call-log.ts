// One access-log line per gRPC call the inventory server answers, whatever its shape, as HTTP
// requests get from requestLog: method, status code, duration, trace id, caller. A server
// interceptor, so no method can forget it. The caller is named once the call is over, as the
// REST side names one: `service:<subject>` when the handler verified its service token, else
// `client:<product>/<version>` from User-Agent (caller.ts). (Counting and timing are the server's own: track()
// in server.ts knows each call's shape.)
import { type Metadata, ServerInterceptingCall, type ServerInterceptor, status } from '@grpc/grpc-js';
import { type Logger, traceIdFrom } from '@platform/service-kit';
import { activeTraceId } from '@platform/tracing';
import { verifiedCallerOf } from './caller';

/** Health checks and reflection: probes and tools would drown the log. */
const QUIET = /^\/grpc\.(health|reflection)\./;

export function logCalls(logger: Logger): ServerInterceptor {
  return (descriptor, call) => {
    if (QUIET.test(descriptor.path)) return new ServerInterceptingCall(call);
    const started = process.hrtime.bigint();
    let traceparent: string | undefined;
    let received: Metadata | undefined;
    return new ServerInterceptingCall(call, {
      start(next) {
        next({
          onReceiveMetadata(metadata: Metadata, nextMetadata: (metadata: Metadata) => void) {
            traceparent = metadata.get('traceparent')[0]?.toString();
            received = metadata;
            nextMetadata(metadata);
          },
        });
      },
      sendStatus(outcome, next) {
        const entry = {
          traceId: activeTraceId() ?? traceIdFrom(traceparent),
          grpcMethod: descriptor.path,
          grpcCode: status[outcome.code],
          durationMs: Number(process.hrtime.bigint() - started) / 1e6,
          caller: received && verifiedCallerOf(received),
        };
        if (outcome.code === status.INTERNAL || outcome.code === status.UNKNOWN) logger.error(entry, 'grpc call failed');
        else logger.info(entry, 'grpc call');
        next(outcome);
      },
    });
  };
}
