// The caller's side of inventory calls: how long each took until its status came back, by
// method and status code (a DEADLINE_EXCEEDED here and none on the server is the network or a
// full server queue). A client interceptor, so every call shape is counted.
import { InterceptingCall, type Interceptor, status } from '@grpc/grpc-js';
import { Histogram, type Registry } from 'prom-client';

export function clientCallMetrics(registry: Registry): Interceptor {
  const duration = new Histogram({
    name: 'grpc_client_handling_seconds',
    help: 'gRPC calls this service made, from start to status, by method and status code',
    labelNames: ['grpc_method', 'grpc_code'],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  return (options, nextCall) => {
    const path = options.method_definition.path;
    const method = path.slice(path.lastIndexOf('/') + 1);
    const stop = duration.startTimer({ grpc_method: method });
    return new InterceptingCall(nextCall(options), {
      start(metadata, _listener, next) {
        next(metadata, {
          onReceiveStatus(outcome, nextStatus) {
            stop({ grpc_code: status[outcome.code] });
            nextStatus(outcome);
          },
        });
      },
    });
  };
}
