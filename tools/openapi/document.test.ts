// The statuses the document lists against what the endpoints' own checks answer: a client's
// generated code and its error handling are built from the list, so a status the server can
// answer and the document leaves out reaches the client as "undocumented".
import { Invalid } from '@platform/errors';
import { parseQuery } from '@platform/validation';
import { buildDocument } from './document';
import { apiEndpoints } from './endpoints';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Values a client may send that break a rule rather than the type: each is tried per parameter. */
const RULE_BREAKING_VALUES = ['zzz-not-a-listed-value', '-1', '0', '100000', 'not-a-date', 'x'.repeat(300)];

describe('the OpenAPI document', () => {
  const document = buildDocument() as Json;

  it('lists 422 for every operation whose query parameters can be refused as breaking a rule', () => {
    const undocumented: string[] = [];
    for (const endpoint of apiEndpoints) {
      if (!endpoint.query) continue;
      const refusesWith422 = Object.keys(endpoint.query.shape).some((name) =>
        RULE_BREAKING_VALUES.some((value) => {
          try {
            parseQuery(endpoint.query!, { [name]: value });
            return false;
          } catch (error) {
            return error instanceof Invalid;
          }
        }),
      );
      const path = endpoint.path.replace(/:(\w+)/g, '{$1}');
      const responses = document.paths[path]?.[endpoint.method.toLowerCase()]?.responses as Json | undefined;
      if (refusesWith422 && !responses?.['422']) undocumented.push(`${endpoint.method} ${path}`);
    }
    expect(undocumented).toEqual([]);
  });
});

describe('who may call each operation', () => {
  const document = buildDocument() as Json;

  it('is in security and x-access, as the endpoint declares it', () => {
    const wrong: string[] = [];
    for (const endpoint of apiEndpoints) {
      const path = endpoint.path.replace(/:(\w+)/g, '{$1}');
      const operation = document.paths[endpoint.version ? `/${endpoint.version}${path}` : path]?.[endpoint.method.toLowerCase()] as Json;
      const keyScopes = [...(operation['x-api-key-scopes'] ?? []), ...operation.security.flatMap((requirement: Json) => requirement.apiKey ?? [])];
      const takesKeys = operation.security.some((requirement: Json) => 'apiKey' in requirement);
      const fits =
        operation['x-access'] === endpoint.access &&
        (endpoint.access === 'public'
          ? operation.security.length === 0
          : endpoint.upstream === 'graphql' ? takesKeys && keyScopes.length === 0
          : endpoint.scope && endpoint.scope !== 'api-keys' ? keyScopes.length === 1 && keyScopes[0].startsWith(`${endpoint.scope}:`)
          : !takesKeys);
      if (!fits) wrong.push(`${endpoint.method} ${path}`);
    }
    expect(wrong).toEqual([]);
  });
});

describe('the webhooks section', () => {
  const document = buildDocument() as Json;
  const allScopeOnly = /^Sent only to enabled endpoints with scope ALL \(admins\) subscribed to /;

  it("says which event types never reach a customer's endpoints (scope OWN), and why: user.deleted among them", () => {
    // A customer's endpoints are deleted with their account (users-service webhooks), so the
    // catalog must not offer them their own user.deleted as something they will receive.
    expect(document.webhooks['user.deleted'].post.description).toMatch(/^Sent only to enabled endpoints with scope ALL \(admins\) subscribed to user\.deleted: a user's own endpoints are deleted with their account, so they never receive their own user\.deleted\. /);
    // Those whose owner is no customer (users-service webhooks/intake.ts ownerOf answers null) or one who is gone.
    const adminsOnly = Object.keys(document.webhooks).filter((type) => allScopeOnly.test(document.webhooks[type].post.description));
    expect(adminsOnly).toEqual(['user.deleted', 'order.unlinked', 'product.created', 'product.updated', 'product.deleted', 'stock.changed']);
    expect(document.webhooks['order.created'].post.description).toMatch(/^Sent to every enabled endpoint subscribed to order\.created \(yours only, or every one with scope ALL\)\. /);
  });
});
