import path from 'node:path';
import { registrySetting } from '@platform/deprecations';
import { eventsConfigShape } from '@platform/events';
import { demoDataSetting, loadConfig, portSetting } from '@platform/service-kit';
import { z } from '@platform/validation';
import { DEFAULT_STREAM_LIMITS as limits } from './grpc/server';

const count = (fallback: number) => z.coerce.number().int().min(1).default(fallback);

export function loadInventoryConfig(env: NodeJS.ProcessEnv = process.env) {
  return loadConfig(
    {
      PORT: portSetting(3004),
      ...eventsConfigShape,
      GRPC_PORT: portSetting(50051),
      /** The demo catalog's stock into an empty database at start: unset, everywhere but production. */
      DEMO_DATA: demoDataSetting,
      /** The usage store shared with the gateway: Redis when set, else files under DATA_DIR/usage. */
      REDIS_URL: z.string().optional(),
      /** Record which calling service uses which RPC and request field (libs/usage); `off` only to measure its cost. */
      USAGE_RECORDING: z.enum(['on', 'off']).default('on'),
      /** The usage store's Redis keys start with this (a test stack on a shared Redis keeps its own). */
      USAGE_KEY_PREFIX: z.string().min(1).default('usage:v1'),
      /** Services whose service tokens may call Inventory (comma-separated names). */
      INVENTORY_CALLERS: z
        .string()
        .default('orders-service')
        .transform((names) => names.split(',').map((name) => name.trim()).filter(Boolean)),
      /** ReserveOrder and ReserveStream calls open at once on this replica, and per calling service; past them RESOURCE_EXHAUSTED. */
      GRPC_MAX_STREAMS: count(limits.maxStreams),
      GRPC_MAX_STREAMS_PER_CALLER: count(limits.maxStreamsPerCaller),
      /** WatchStock calls open at once on this replica, and per calling service; past them RESOURCE_EXHAUSTED. */
      GRPC_MAX_WATCHERS: count(limits.maxWatchers),
      GRPC_MAX_WATCHERS_PER_CALLER: count(limits.maxWatchersPerCaller),
      /** A stream on which nothing moved this long ends (RESOURCE_EXHAUSTED when its replies wait unread, DEADLINE_EXCEEDED otherwise); a quiet watch is not idle. */
      GRPC_STREAM_IDLE_TIMEOUT_MS: count(limits.idleTimeoutMs),
      /** The longest a stream lives; it then ends UNAVAILABLE and its caller opens a new one. */
      GRPC_STREAM_MAX_DURATION_MS: count(limits.maxDurationMs),
      /** The deadline of a call that sets none. */
      GRPC_DEFAULT_DEADLINE_MS: count(limits.defaultDeadlineMs),
      /** Health.Watch and reflection streams (no token) open at once on this replica, and per peer address; past them RESOURCE_EXHAUSTED. */
      GRPC_MAX_OPEN_STREAMS: count(limits.maxOpenStreams),
      GRPC_MAX_OPEN_STREAMS_PER_ADDRESS: count(limits.maxOpenStreamsPerAddress),
      /** A connection with no call open this long is closed (GOAWAY); its client reconnects on its next call. */
      GRPC_CONNECTION_IDLE_MS: count(limits.connectionIdleMs),
      /** Every connection is closed (GOAWAY) this long after it opened, its streams let finish: clients reconnect and so reach replicas added since. */
      GRPC_CONNECTION_MAX_AGE_MS: count(limits.connectionMaxAgeMs),
      /** The deprecation registry: its RPC entries answer with deprecation metadata, or UNIMPLEMENTED in a brownout and after the sunset. Default: deprecations.yaml beside main.js. */
      DEPRECATIONS_FILE: registrySetting(path.join(__dirname, 'deprecations.yaml')),
    },
    env,
  );
}

export type InventoryConfig = ReturnType<typeof loadInventoryConfig>;

/** The GRPC_* settings, as the gRPC server takes them. */
export function streamLimitsOf(config: InventoryConfig) {
  return {
    maxStreams: config.GRPC_MAX_STREAMS,
    maxStreamsPerCaller: config.GRPC_MAX_STREAMS_PER_CALLER,
    maxWatchers: config.GRPC_MAX_WATCHERS,
    maxWatchersPerCaller: config.GRPC_MAX_WATCHERS_PER_CALLER,
    idleTimeoutMs: config.GRPC_STREAM_IDLE_TIMEOUT_MS,
    maxDurationMs: config.GRPC_STREAM_MAX_DURATION_MS,
    defaultDeadlineMs: config.GRPC_DEFAULT_DEADLINE_MS,
    maxOpenStreams: config.GRPC_MAX_OPEN_STREAMS,
    maxOpenStreamsPerAddress: config.GRPC_MAX_OPEN_STREAMS_PER_ADDRESS,
    connectionIdleMs: config.GRPC_CONNECTION_IDLE_MS,
    connectionMaxAgeMs: config.GRPC_CONNECTION_MAX_AGE_MS,
  };
}
