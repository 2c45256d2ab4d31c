// The broker rights each service's user gets in prod: exactly the subjects its NatsTransport
// publishes to, derived from the same names the transport uses (durableNameOf, partitionFilterOf,
// EVENTS_STREAM, PARTITIONS) and from who reads whom (eventSubscriptions). Rendered as nats.conf's
// `authorization` block by `natsAuthorizationConf`, which tools/deploy/render-nats-auth.ts writes
// into deploy/k8s/overlays/prod/nats.yaml (`--check` in `check-generated`); nats-auth.test.ts runs
// a nats-server with the written block.
//
// No wildcards in the consumer rights: NATS matches whole tokens only, and a durable's name is one
// token, so `$JS.API.CONSUMER.INFO.EVENTS.*` would let a service read, and `…CREATE.EVENTS.*.>`
// create, any service's durable consumers (and pull its deliveries away). Listing every durable is
// what keeps a service to its own; the list is long, hence generated.
import { durableNameOf, EVENTS_STREAM, inboxPrefixOf, PARTITIONS, partitionFilterOf } from './nats-transport';
import { eventServices, eventSubscriptions } from './subscriptions';

export interface NatsPermissions {
  /** Subjects it may publish to, grouped (one line of nats.conf each): its events, the stream's API, then one group per durable consumer. */
  publish: string[][];
  /** Subjects it may subscribe to: the replies to its own requests only, under its own inbox prefix (not another service's replies and pull deliveries). */
  subscribe: string[];
}

/** What `service` may do on the broker, when it reads `sources` over `partitions` partitions each. */
export function natsPermissionsOf(service: string, sources: readonly string[], partitions = PARTITIONS): NatsPermissions {
  const durables = sources.flatMap((source) => Array.from({ length: partitions }, (_, partition) => ({ name: durableNameOf(service, source, partition), filter: partitionFilterOf(source, partition) })));
  return {
    publish: [
      // Its own events only: consumers trust the subject for who produced an event.
      [`events.${service}.>`],
      // The stream's info only (prod runs NATS_STREAM_SETUP=check): creating or changing it (its
      // subjects, retention, bounds) is the stream-admin user's (natsStreamAdminPermissions), so a
      // compromised service cannot widen, shorten or purge it. jetstreamManager asks $JS.API.INFO.
      ['$JS.API.INFO', `$JS.API.STREAM.INFO.${EVENTS_STREAM}`],
      // Create (with that very filter), info, pull and ack of its own durable consumers.
      ...durables.map(({ name, filter }) => [
        `$JS.API.CONSUMER.CREATE.${EVENTS_STREAM}.${name}.${filter}`,
        `$JS.API.CONSUMER.INFO.${EVENTS_STREAM}.${name}`,
        `$JS.API.CONSUMER.MSG.NEXT.${EVENTS_STREAM}.${name}`,
        `$JS.ACK.${EVENTS_STREAM}.${name}.>`,
      ]),
    ],
    // Its transport connects with this inbox prefix: under the shared `_INBOX.>` a service could
    // subscribe to another's reply inboxes and read its pulled events and JetStream API answers.
    subscribe: [`${inboxPrefixOf(service)}.>`],
  };
}

/** The broker user of prod's events-stream Job (`main.js events-stream`), which creates the EVENTS stream and applies its settings. */
export const STREAM_ADMIN_USER = 'stream-admin';

/**
 * What the stream-admin user may do: what `applyEventsStream` calls and nothing else. The EVENTS
 * stream's info, creation and update; not its purge or deletion, no other stream, no event
 * published, no consumer read or made, replies on its own inbox prefix only. A leaked password
 * can change the stream's settings (the Job applies them again on the next rollout), never
 * forge an event or read one.
 */
export function natsStreamAdminPermissions(): NatsPermissions {
  return {
    publish: [['$JS.API.INFO', `$JS.API.STREAM.INFO.${EVENTS_STREAM}`, `$JS.API.STREAM.CREATE.${EVENTS_STREAM}`, `$JS.API.STREAM.UPDATE.${EVENTS_STREAM}`]],
    subscribe: [`${inboxPrefixOf(STREAM_ADMIN_USER)}.>`],
  };
}

/** The environment variable the nats-server reads `user`'s password from (from its key of Secret platform-nats). */
export function natsPasswordVariableOf(user: string): string {
  return `NATS_${user.replace(/-/g, '_').toUpperCase()}_PASSWORD`;
}

/** The broker users: one per event service, the events-stream Job's, then the operators' one (runbook's `nats` commands). */
export const natsUsers = [...eventServices, STREAM_ADMIN_USER, 'operator'] as const;

/**
 * nats.conf's `authorization { … }` block, indented as it sits in the ConfigMap (4 spaces): one
 * user per service with `natsPermissionsOf` its subscriptions, `stream-admin` with
 * `natsStreamAdminPermissions`, and `operator` with every right.
 */
export function natsAuthorizationConf(subscriptions: Readonly<Record<string, readonly string[]>> = eventSubscriptions, partitions = PARTITIONS): string {
  const quoted = (subjects: readonly string[]) => subjects.map((subject) => `"${subject}"`).join(', ');
  const restrictedUser = (user: string, permissions: NatsPermissions, why: string[] = []) => [
    '        {',
    ...why.map((line) => `          # ${line}`),
    `          user: ${user}`,
    `          password: $${natsPasswordVariableOf(user)}`,
    '          permissions: {',
    '            publish: { allow: [',
    ...permissions.publish.map((group) => `              ${quoted(group)}`),
    '            ] }',
    `            subscribe: { allow: [${quoted(permissions.subscribe)}] }`,
    '          }',
    '        }',
  ];
  return [
    '    authorization {',
    '      users = [',
    ...Object.keys(subscriptions).flatMap((service) => restrictedUser(service, natsPermissionsOf(service, subscriptions[service] ?? [], partitions))),
    ...restrictedUser(STREAM_ADMIN_USER, natsStreamAdminPermissions(), [
      "The events-stream Job's (deploy/k8s/overlays/prod/events-stream.yaml): creates the EVENTS",
      'stream and applies its settings, which the services may only read.',
    ]),
    '        {',
    "          # An operator's, for the nats CLI of the runbook (`nats --user operator --password …",
    '          # stream info EVENTS`): every right, as before the services had users of their own.',
    '          user: operator',
    `          password: $${natsPasswordVariableOf('operator')}`,
    '        }',
    '      ]',
    '    }',
    '',
  ].join('\n');
}
