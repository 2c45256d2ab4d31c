// The operators' command that creates the EVENTS stream or brings it to its settings (replicas,
// age and size bounds: NATS_STREAM_*, libs/events/src/config.ts). In prod the services may only
// read the stream (NATS_STREAM_SETUP=check; their broker users have no right to create or change
// it, so a compromised one cannot widen or purge it): run this as the broker's `operator` user
// through a port-forward, before the first rollout with NATS and after changing a NATS_STREAM_*
// value (docs/operations.md "Apply").
// Usage: NATS_URL=nats://127.0.0.1:4222 NATS_USER=operator NATS_PASSWORD=… NATS_STREAM_REPLICAS=3 NATS_STREAM_MAX_BYTES=4294967296 npm run events:stream
import { applyEventsStream, eventsConfigShape } from '@platform/events';
import { createLogger } from '@platform/service-kit';
import { z } from '@platform/validation';

export async function main(): Promise<void> {
  const parsed = z.object(eventsConfigShape).safeParse(process.env);
  if (!parsed.success || !parsed.data.NATS_URL) {
    process.stderr.write(`events:stream: ${parsed.success ? 'set NATS_URL (and NATS_USER, NATS_PASSWORD: the operator user in prod)' : parsed.error.message}\n`);
    process.exitCode = 1;
    return;
  }
  await applyEventsStream(parsed.data, createLogger('events-stream', 'info'));
}
