// The gate on a copy of this repository's contracts: what it refuses, what may pass (a new major
// version, a completed replacement, an approval) and how it checks the deprecation registry.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { change, specRule } from './changes';
import { runCheck, zeroUseWindow } from './check';
import { judge, namedIn, render, type Approval, type UsageExport } from './gate';
import { diffOpenApi, restElementExists } from './openapi-diff';
import { mayHaveUsed } from '@platform/deprecations';
import { repositoryRoot } from './layout';
// The endpoint declarations the document is generated from: a /v2 endpoint is declared here as a team would.
import type { Endpoint } from '@platform/endpoints';
import { buildDocument } from '../openapi/document';
import { apiEndpoints } from '../openapi/endpoints';

const supergraph = 'apps/gateway/src/graphql/supergraph.graphql';
const ordersSubgraph = 'apps/orders-service/src/graphql/schema.graphql';
const openapi = 'apps/gateway/src/openapi/openapi.json';
const protoFile = 'proto/inventory/v1/inventory.proto';
const restElement = 'rest:GET /v1/orders/{id}/shipment response.200.body.trackingNumber';
// PUT answers the same Shipment representation: its copy of the field is an element of its own.
const putElement = 'rest:PUT /v1/orders/{id}/shipment response.200.body.trackingNumber';
const today = '2026-11-24';

let root: string;

/** A repository holding only what the gate reads: the contracts, their baselines and the registry. */
function copyOfContracts(): string {
  const copy = mkdtempSync(path.join(tmpdir(), 'contract-gate-'));
  const files = [openapi, supergraph, 'proto', 'contracts'];
  for (const app of readdirSync(path.join(repositoryRoot, 'apps'))) {
    if (app.endsWith('-service')) files.push(`apps/${app}/src/graphql/schema.graphql`);
  }
  for (const file of files) {
    mkdirSync(path.dirname(path.join(copy, file)), { recursive: true });
    cpSync(path.join(repositoryRoot, file), path.join(copy, file), { recursive: true });
  }
  return copy;
}

function edit(file: string, change: (text: string) => string): void {
  const target = path.join(root, file);
  const before = readFileSync(target, 'utf8');
  const after = change(before);
  if (after === before) throw new Error(`the edit changed nothing in ${file}`);
  writeFileSync(target, after);
}

/** Removes Shipment.trackingNumber from every contract: the issue's example of an unguarded removal. */
function removeTrackingNumber(): void {
  edit(openapi, (text) => {
    const document = JSON.parse(text);
    delete document.components.schemas.Shipment.properties.trackingNumber;
    return JSON.stringify(document, null, 2);
  });
  for (const file of [supergraph, ordersSubgraph]) edit(file, (text) => text.replace(/\n\s*"+The carrier's tracking number\."+\n\s*trackingNumber: String/, ''));
}

/** `file` (the committed document, or the released one) generated from `endpoints`, as `node tools/openapi/generate.mjs` writes it. */
function generateDocument(file: string, endpoints: Endpoint[]): void {
  writeFileSync(path.join(root, file), `${JSON.stringify(buildDocument(path.join(root, 'contracts/deprecations.yaml'), endpoints), null, 2)}\n`);
}

function writeContractsFile(name: string, text: string): void {
  writeFileSync(path.join(root, 'contracts', name), text);
}

/**
 * The repository's own entries, as YAML list items: their elements are marked deprecated in the
 * contracts (Product.rating's @deprecated, AdjustStockRequest.reason's [deprecated = true]), and a
 * mark without an entry is a registry problem, so a test's registry keeps them beside its own.
 */
const standingEntries = ((parse(readFileSync(path.join(repositoryRoot, 'contracts/deprecations.yaml'), 'utf8')) as { deprecations?: unknown[] } | null)?.deprecations ?? [])
  .map((entry) => stringify([entry]).replace(/^/gm, '  ').trimEnd() + '\n')
  .join('');

/** contracts/deprecations.yaml with `entries` (YAML list items, indented two spaces), then the standing ones. */
function writeRegistry(entries: string): void {
  writeContractsFile('deprecations.yaml', `deprecations:\n${entries}${standingEntries}`);
}

function deprecate(elements: string[], dates: { announced: string; sunset: string }): void {
  const entries = elements.map(
    (element) => `  - element: "${element}"\n    replacement: "none: carriers' links replace it"\n    announced: ${dates.announced}\n    sunset: ${dates.sunset}\n    notice: https://docs.example.com/changes/tracking-number\n`,
  );
  writeRegistry(entries.join(''));
}

function usage(elements: UsageExport['elements'], recordedSince = '2026-09-01'): UsageExport {
  return { generatedAt: `${today}T06:00:00Z`, recordedSince, elements };
}

beforeEach(() => {
  root = copyOfContracts();
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('contract:check', () => {
  it('passes the contracts as released', async () => {
    const result = await runCheck({ root, today, zeroUseDays: 14 });
    expect(result.text).toMatch(/0 breaking, 0 dangerous, 0 safe; 0 refused, 0 registry problems: passed/);
    expect(result.passed).toBe(true);
  });

  it('refuses a removed response field in REST and GraphQL, naming element, class and rule', async () => {
    removeTrackingNumber();
    const result = await runCheck({ root, today, zeroUseDays: 14 });
    expect(result.passed).toBe(false);
    expect(result.text).toContain(
      `BREAKING  rest:#/components/schemas/Shipment.trackingNumber (2 places)\n          field-removed: response field removed | §Versioning 3: removing or renaming a field\n          REFUSED: not allowed: deprecate it first (contracts/deprecations.yaml: a replacement, a sunset at least 30 days on) and remove it after the sunset once no use is recorded for 14 days (docs/evolving-the-api.md, "Replacing a field: the four steps today"); or ship it as a new major version, or approve it (contracts/approvals.yaml)\n          at ${restElement}\n          at ${putElement}\n`,
    );
    expect(result.text).toContain(`BREAKING  graphql:Shipment.trackingNumber (${supergraph})`);
    expect(result.text).toContain(`BREAKING  graphql:Shipment.trackingNumber (${ordersSubgraph})`);
    expect(result.text).toContain('FIELD_REMOVED');
  });

  it('passes a field one subgraph stops serving while the supergraph still serves it (moved to another subgraph)', async () => {
    // The orders subgraph drops it; the composed supergraph (kept current by check-generated) still has it, from another subgraph.
    edit(ordersSubgraph, (text) => text.replace(/\n\s*"+The carrier's tracking number\."+\n\s*trackingNumber: String/, ''));
    const result = await runCheck({ root, today, zeroUseDays: 14 });
    expect(result.text).toContain(`SAFE      graphql:Shipment.trackingNumber (${ordersSubgraph})\n          served-by-another-subgraph: Field 'trackingNumber' was removed from object type 'Shipment'; the supergraph still serves it, from another subgraph: clients see no change`);
    expect(result.text).not.toContain('REFUSED');
    expect(result.passed).toBe(true);
  });

  it('lets an approved change pass until the approval expires', async () => {
    removeTrackingNumber();
    const approvals = (expires: string) =>
      `approvals:\n  - element: "rest:GET /v1/orders/{id}/shipment"\n    reason: "never filled; both callers agreed"\n    approvedBy: "@api-owner"\n    approved: 2026-11-20\n    expires: ${expires}\n  - element: "${putElement}"\n    rule: field-removed\n    reason: "never filled; both callers agreed"\n    approvedBy: "@api-owner"\n    approved: 2026-11-20\n    expires: ${expires}\n  - element: "graphql:Shipment.trackingNumber"\n    rule: FIELD_REMOVED\n    reason: "never filled; both callers agreed"\n    approvedBy: "@api-owner"\n    approved: 2026-11-20\n    expires: ${expires}\n`;
    writeContractsFile('approvals.yaml', approvals('2026-12-15'));
    const approved = await runCheck({ root, today, zeroUseDays: 14 });
    expect(approved.text).toContain('allowed: approved until 2026-12-15: never filled; both callers agreed');
    expect(approved.passed).toBe(true);

    writeContractsFile('approvals.yaml', approvals('2026-11-23'));
    const expired = await runCheck({ root, today, zeroUseDays: 14 });
    expect(expired.text).toContain('REFUSED: not allowed (the approval expired 2026-11-23)');
    expect(expired.passed).toBe(false);
  });

  it('tells a team that a change in place ships beside the old element, not by deprecating it (a deprecated element may only be removed)', async () => {
    edit(openapi, (text) => {
      const document = JSON.parse(text);
      document.paths['/orders/{id}/cancellation'].post.requestBody.content['application/json'].schema.properties.reason.maxLength = 200;
      return JSON.stringify(document, null, 2);
    });
    const result = await runCheck({ root, today, zeroUseDays: 14 });
    expect(result.text).toContain(
      'BREAKING  rest:POST /v1/orders/{id}/cancellation request.body.reason\n          request-constraint-tightened: maxLength 500 -> 200 | §Versioning 1 and 3: a request an old client sends is refused (tighter constraint)\n' +
        '          REFUSED: not allowed: it cannot change in place: add the changed one beside it (a new field, parameter or operation), deprecate this one (contracts/deprecations.yaml: the new one as replacement, a sunset at least 30 days on) and remove it after the sunset (docs/evolving-the-api.md, "Replacing a field: the four steps today"); or ship it as a new major version, or approve it (contracts/approvals.yaml)\n',
    );
    expect(result.passed).toBe(false);
  });

  it('tells a team that a header, status or error code no registry entry can name ships in a new operation', async () => {
    edit(openapi, (text) => {
      const document = JSON.parse(text);
      delete document.paths['/orders'].post.responses['201'].headers.ETag;
      return JSON.stringify(document, null, 2);
    });
    const result = await runCheck({ root, today, zeroUseDays: 14 });
    expect(result.text).toContain(
      'BREAKING  rest:POST /v1/orders response.201.header.ETag\n          response-header-removed: header ETag no longer sent | §Versioning 3: removing or renaming a field\n' +
        '          REFUSED: not allowed: the deprecation registry cannot name rest:POST /v1/orders response.201.header.ETag: ship the change in a new operation beside rest:POST /v1/orders, deprecate the old one (contracts/deprecations.yaml: the new one as replacement, a sunset at least 30 days on) and remove it after the sunset (docs/evolving-the-api.md, "Replacing a field: the four steps today"); or ship it as a new major version, or approve it (contracts/approvals.yaml)\n',
    );
    expect(result.passed).toBe(false);
  });

  it('refuses an approval that names nothing in the contracts, which would allow every change under it', async () => {
    removeTrackingNumber();
    const approval = (element: string) => `  - element: "${element}"\n    reason: "cleanup"\n    approvedBy: "@api-owner"\n    approved: 2026-11-20\n    expires: 2026-12-15\n`;
    writeContractsFile('approvals.yaml', `approvals:\n${approval('rest:GET')}${approval('rest:PUT')}${approval('graphql:Shipment.trackingNumber')}`);
    const result = await runCheck({ root, today, zeroUseDays: 14 });
    expect(result.text).toContain('REGISTRY  approvals.yaml: "rest:GET" names nothing in the contracts');
    expect(result.text).toContain('REGISTRY  approvals.yaml: "rest:PUT" names nothing in the contracts');
    expect(result.text).toContain('REFUSED: not allowed: deprecate it first');
    expect(result.text).not.toContain('"graphql:Shipment.trackingNumber" names nothing');
    expect(result.passed).toBe(false);
  });

  it('refuses an approval without a reason, an approver, an approval date or an expiry date', async () => {
    const whole = { element: '"graphql:Shipment.trackingNumber"', reason: '"never filled"', approvedBy: '"@api-owner"', approved: '2026-11-20', expires: '2026-12-15' };
    for (const missing of Object.keys(whole).filter((key) => key !== 'element')) {
      const entry = Object.entries(whole).filter(([key]) => key !== missing);
      writeContractsFile('approvals.yaml', `approvals:\n${entry.map(([key, value], index) => `${index === 0 ? '  - ' : '    '}${key}: ${value}`).join('\n')}\n`);
      const result = await runCheck({ root, today, zeroUseDays: 14 });
      expect({ missing, text: result.text }).toEqual({ missing, text: expect.stringContaining('REGISTRY  approvals.yaml entry 1: needs element, reason, approvedBy, approved (YYYY-MM-DD) and expires (YYYY-MM-DD)') });
      expect(result.passed).toBe(false);
    }
  });

  it('refuses an approval dated after today, one that expires before it was given, and one that lasts more than 90 days', async () => {
    removeTrackingNumber();
    const approval = (approved: string, expires: string) => `approvals:\n  - element: "rest:GET /v1/orders/{id}/shipment"\n    reason: "never filled"\n    approvedBy: "@api-owner"\n    approved: ${approved}\n    expires: ${expires}\n`;
    for (const [approved, expires, problem] of [
      ['2026-11-25', '2026-12-15', 'approved 2026-11-25 is after today (2026-11-24)'],
      ['2026-11-20', '2026-11-19', 'expires 2026-11-19 before it was approved (2026-11-20)'],
      ['2026-11-20', '2027-02-19', 'expires 2027-02-19, more than 90 days after it was approved (2026-11-20)'],
    ]) {
      writeContractsFile('approvals.yaml', approval(approved, expires));
      const result = await runCheck({ root, today, zeroUseDays: 14 });
      expect(result.text).toContain(`REGISTRY  approvals.yaml entry 1: ${problem}`);
      expect(result.text).not.toContain('allowed: approved until');
      expect(result.passed).toBe(false);
    }
    writeContractsFile('approvals.yaml', approval('2026-11-20', '2027-02-18'));
    expect((await runCheck({ root, today, zeroUseDays: 14 })).text).toContain('allowed: approved until 2027-02-18: never filled');
  });

  describe('the last step of a replacement', () => {
    beforeEach(() => removeTrackingNumber());
    const restOnly = (): void => {
      // GraphQL's copy of the field is approved away, so each case below is about the REST element.
      writeContractsFile('approvals.yaml', 'approvals:\n  - element: "graphql:Shipment.trackingNumber"\n    reason: "covered by the REST case"\n    approvedBy: "@api-owner"\n    approved: 2026-11-20\n    expires: 2027-01-01\n');
    };

    it('refuses a removal before the sunset date', async () => {
      restOnly();
      deprecate([restElement, putElement], { announced: '2026-10-01', sunset: '2026-12-01' });
      const result = await runCheck({ root, today, zeroUseDays: 14, usage: usage({}) });
      expect(result.text).toContain(`REFUSED: deprecated (${restElement}), but its sunset 2026-12-01 has not passed`);
      expect(result.passed).toBe(false);
    });

    it('refuses when use is unknown: no usage export is not zero use', async () => {
      restOnly();
      deprecate([restElement, putElement], { announced: '2026-09-01', sunset: '2026-11-01' });
      const result = await runCheck({ root, today, zeroUseDays: 14 });
      expect(result.text).toContain('sunset passed, but use is unknown: give the usage export with --usage <file>');
      expect(result.passed).toBe(false);
    });

    it('refuses when the export does not cover the whole window', async () => {
      restOnly();
      deprecate([restElement, putElement], { announced: '2026-09-01', sunset: '2026-11-01' });
      const result = await runCheck({ root, today, zeroUseDays: 14, usage: usage({}, '2026-11-20') });
      expect(result.text).toContain('use is unknown before 2026-11-20: the usage export must cover 14 days (since 2026-11-10)');
      expect(result.passed).toBe(false);
    });

    it('refuses while a caller still uses the element within the window, naming it', async () => {
      restOnly();
      deprecate([restElement, putElement], { announced: '2026-09-01', sunset: '2026-11-01' });
      const used = usage({ [putElement]: { lastUsed: '2026-11-20T08:00:00Z', callers: [{ caller: 'shop-app/4.2 (key ak_live_7f3)', lastUsed: '2026-11-20T08:00:00Z', calls: 12 }] } });
      const result = await runCheck({ root, today, zeroUseDays: 14, usage: used });
      expect(result.text).toContain('REFUSED: still used within 14 days (last 2026-11-20T08:00:00Z) by shop-app/4.2 (key ak_live_7f3)');
      expect(result.passed).toBe(false);
    });

    it('refuses on a stale or malformed usage export', async () => {
      restOnly();
      deprecate([restElement, putElement], { announced: '2026-09-01', sunset: '2026-11-01' });
      const stale = await runCheck({ root, today, zeroUseDays: 14, usage: { ...usage({}), generatedAt: '2026-11-20T06:00:00Z' } });
      expect(stale.text).toContain('REFUSED: use is unknown since 2026-11-20T06:00:00Z: the usage export is stale (older than 1 day), export it again');
      expect(stale.passed).toBe(false);
      const malformed = await runCheck({ root, today, zeroUseDays: 14, usage: { elements: {} } });
      expect(malformed.text).toContain('REGISTRY  usage export: needs generatedAt (ISO time), recordedSince (YYYY-MM-DD) and elements (an object by element name)');
      expect(malformed.passed).toBe(false);
    });

    it('reads the usage export committed with the removal as contracts/usage-export.json (CI runs without --usage)', async () => {
      restOnly();
      deprecate([restElement, putElement], { announced: '2026-09-01', sunset: '2026-11-01' });
      const commitExport = (exported: unknown) => writeContractsFile('usage-export.json', JSON.stringify(exported));
      commitExport(usage({ [putElement]: { lastUsed: '2026-11-20T08:00:00Z', callers: [{ caller: 'key:ak_7f3 (shop-app/4.2, owner user:u1)' }] } }));
      const used = await runCheck({ root, today, zeroUseDays: 14 });
      expect(used.text).toContain('REFUSED: still used within 14 days (last 2026-11-20T08:00:00Z) by key:ak_7f3 (shop-app/4.2, owner user:u1)');
      expect(used.passed).toBe(false);

      commitExport({ ...usage({}), generatedAt: '2026-11-21T06:00:00Z' });
      const stale = await runCheck({ root, today, zeroUseDays: 14 });
      expect(stale.text).toContain('REFUSED: use is unknown since 2026-11-21T06:00:00Z: the usage export is stale (older than 1 day), export it again');
      expect(stale.passed).toBe(false);

      commitExport({ ...usage({}), generatedAt: '2026-12-24T06:00:00Z' });
      const future = await runCheck({ root, today, zeroUseDays: 14 });
      expect(future.text).toContain('REFUSED: the usage export says it was generated 2026-12-24T06:00:00Z, after today (2026-11-24): export it again');
      expect(future.passed).toBe(false);

      commitExport(usage({}));
      const unused = await runCheck({ root, today, zeroUseDays: 14 });
      expect(unused.text).toContain('allowed: replacement complete: sunset 2026-11-01 passed and no recorded use for 14 days');
      expect(unused.passed).toBe(true);
    });

    it('lets the removal pass after the sunset with zero use for the window (shortened for this test)', async () => {
      restOnly();
      deprecate([restElement, putElement], { announced: '2026-09-01', sunset: '2026-11-01' });
      const lastUse = usage({ [putElement]: { lastUsed: '2026-11-20T08:00:00Z', callers: [{ caller: 'shop-app/4.2' }] } });
      const within14 = await runCheck({ root, today, zeroUseDays: 14, usage: lastUse });
      expect(within14.passed).toBe(false);
      const within3 = await runCheck({ root, today, zeroUseDays: 3, usage: lastUse });
      expect(within3.text).toContain('allowed: replacement complete: sunset 2026-11-01 passed and no recorded use for 3 days');
      expect(within3.passed).toBe(true);
    });
  });

  describe('the last step of a webhook payload field\'s replacement', () => {
    const element = 'webhook:order.created body.data.couponCode';
    beforeEach(() =>
      edit(openapi, (text) => {
        const document = JSON.parse(text);
        // As the generator removes a field: from the payload's properties and from its required list
        // (left required in a closed object, no payload would fit: breaking on its own).
        const data = document.components.schemas.OrderCreatedEvent.properties.data;
        delete data.properties.couponCode;
        data.required = data.required.filter((name: string) => name !== 'couponCode');
        return JSON.stringify(document, null, 2);
      }),
    );

    it('refuses the removal of a payload field as breaking for every receiver, deprecated or not, before the sunset', async () => {
      const plain = await runCheck({ root, today, zeroUseDays: 14 });
      expect(plain.text).toContain(`BREAKING  ${element}`);
      expect(plain.passed).toBe(false);
      deprecate([element], { announced: '2026-10-01', sunset: '2026-12-01' });
      const early = await runCheck({ root, today, zeroUseDays: 14 });
      expect(early.text).toContain(`REFUSED: deprecated (${element}), but its sunset 2026-12-01 has not passed`);
      expect(early.passed).toBe(false);
    });

    it('lets it pass after the sunset with no usage export: a receiver cannot be measured, and was told in every delivery', async () => {
      deprecate([element], { announced: '2026-09-01', sunset: '2026-11-01' });
      const result = await runCheck({ root, today, zeroUseDays: 14 });
      expect(result.text).toContain('allowed: replacement complete: sunset 2026-11-01 passed; receivers were told in every delivery carrying it since 2026-09-01');
      expect(result.passed).toBe(true);
    });
  });

  it('passes a whole replacement: deprecate, release, then after the sunset with zero use remove and drop the entry, release', async () => {
    const element = 'rest:GET /v1/orders query.offset';
    const registryFile = path.join(root, 'contracts/deprecations.yaml');
    /** The OpenAPI document as `nx run gateway:generate` writes it from the registry, less `offset` once removed. */
    const generate = (removed: boolean) =>
      edit(openapi, () => {
        const document = buildDocument(registryFile) as { paths: Record<string, Record<string, { parameters: { name?: string }[] }>> };
        if (removed) document.paths['/orders'].get.parameters = document.paths['/orders'].get.parameters.filter((parameter) => parameter.name !== 'offset');
        return `${JSON.stringify(document, null, 2)}\n`;
      });
    /** `npm run contract:release`: the contracts and the registry become the baseline. */
    const release = () => {
      cpSync(path.join(root, openapi), path.join(root, 'contracts/v1/openapi.json'));
      cpSync(registryFile, path.join(root, 'contracts/v1/deprecations.yaml'));
    };

    deprecate([element], { announced: '2026-09-01', sunset: '2026-11-01' });
    generate(false);
    const deprecated = await runCheck({ root, today: '2026-09-01', zeroUseDays: 14 });
    expect(deprecated.text).toContain('SAFE      rest:GET /v1/orders response.410');
    expect(deprecated.passed).toBe(true);
    release();

    // After the sunset, with no recorded use for 14 days: the removal and the dropped entry in one change.
    writeContractsFile('usage-export.json', JSON.stringify(usage({ 'rest:GET /v1/orders query.size': { lastUsed: '2026-11-23T10:00:00Z', callers: [{ caller: 'user:u1 (web/1.0)' }] } })));
    writeRegistry('');
    generate(true);
    const removed = await runCheck({ root, today, zeroUseDays: 14 });
    expect(removed.text).toContain(`BREAKING  ${element}\n          parameter-removed`);
    expect(removed.text).toContain('allowed: replacement complete: sunset 2026-11-01 passed and no recorded use for 14 days');
    expect(removed.text).toContain('SAFE      rest:GET /v1/orders response.410\n          deprecation-gone-removed');
    expect(removed.passed).toBe(true);

    release();
    rmSync(path.join(root, 'contracts/usage-export.json'));
    const released = await runCheck({ root, today, zeroUseDays: 14 });
    expect(released.text).toContain('0 breaking, 0 dangerous, 0 safe; 0 refused, 0 registry problems: passed');
  });

  it('refuses to release contracts with changes not committed (their baseline would name a commit they are not), unless told to', () => {
    const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=gate', '-c', 'user.email=gate@example.com', ...args], { cwd: root, encoding: 'utf8' });
    git('init', '-q');
    git('add', '-A');
    git('commit', '-q', '-m', 'contracts');
    const release = (...flags: string[]) => {
      try {
        execFileSync(process.execPath, ['tools/ts-run.mjs', 'tools/contracts/release.ts', '--root', root, ...flags], { cwd: repositoryRoot, encoding: 'utf8', stdio: 'pipe' });
        return { status: 0, stderr: '' };
      } catch (error) {
        const failed = error as { status: number; stderr: string };
        return { status: failed.status, stderr: failed.stderr };
      }
    };
    expect(release().status).toBe(0);
    const releaseFile = path.join(root, 'contracts/v1/release.json');
    expect(JSON.parse(readFileSync(releaseFile, 'utf8'))).toMatchObject({ commit: git('rev-parse', 'HEAD').trim(), uncommittedChanges: false });
    git('add', '-A');
    git('commit', '-q', '-m', 'released');

    const released = readFileSync(releaseFile, 'utf8');
    removeTrackingNumber();
    writeContractsFile('CHANGELOG.md', '# Contract changelog\n\n## 2026-11-28\n- not committed\n');
    const refused = release();
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain('contract:release: refused: not committed: apps/gateway/src/graphql/supergraph.graphql, apps/gateway/src/openapi/openapi.json, apps/orders-service/src/graphql/schema.graphql, contracts/CHANGELOG.md.');
    expect(readFileSync(releaseFile, 'utf8')).toBe(released);
    expect(readFileSync(path.join(root, 'contracts/v1/subgraphs/orders.graphql'), 'utf8')).toContain('trackingNumber');

    expect(release('--allow-dirty').status).toBe(0);
    expect(JSON.parse(readFileSync(releaseFile, 'utf8'))).toMatchObject({ uncommittedChanges: true });
    expect(readFileSync(path.join(root, 'contracts/v1/subgraphs/orders.graphql'), 'utf8')).not.toContain('trackingNumber');
  });

  it('passes dropping a fulfilled entry after the removal was released: its 410 goes with it', async () => {
    type Document = { paths: Record<string, Record<string, { parameters: { name?: string }[] }>> };
    const withoutOffset = (document: Document) => {
      document.paths['/orders'].get.parameters = document.paths['/orders'].get.parameters.filter((parameter) => parameter.name !== 'offset');
      return JSON.stringify(document);
    };
    writeRegistry('  - element: "rest:GET /v1/orders query.offset"\n    replacement: "rest:GET /v1/orders query.cursor"\n    announced: 2026-09-01\n    sunset: 2026-11-01\n    notice: https://docs.example.com/n\n');
    writeFileSync(path.join(root, 'contracts/v1/openapi.json'), withoutOffset(buildDocument(path.join(root, 'contracts/deprecations.yaml')) as Document));
    writeRegistry('');
    edit(openapi, () => withoutOffset(buildDocument(path.join(root, 'contracts/deprecations.yaml')) as Document));
    const result = await runCheck({ root, today, zeroUseDays: 14 });
    expect(result.text).toContain('SAFE      rest:GET /v1/orders response.410\n          deprecation-gone-removed');
    expect(result.passed).toBe(true);
  });

  describe('use of what holds a removed element', () => {
    const past = { announced: '2026-09-01', sunset: '2026-11-01' };

    it('lets a completed replacement remove its element, never change it: a request field nobody sends made required refuses every caller', () => {
      const couponCode = 'rest:POST /v1/orders request.body.couponCode';
      const verdicts = judge({
        changes: [
          change('rest', 'breaking', couponCode, 'request-field-became-required', specRule.requiredParameter, 'request field is required now'),
          change('rest', 'breaking', couponCode, 'request-constraint-tightened', specRule.tighterRequest, 'null is no longer accepted'),
          change('rest', 'breaking', couponCode, 'field-removed', specRule.removed, 'request field removed'),
        ],
        deprecations: [{ element: couponCode, replacement: 'none', notice: 'https://docs.example.com/n', brownouts: [], ...past }],
        approvals: [],
        usage: usage({ 'rest:POST /v1/orders': { lastUsed: '2026-11-23T10:00:00Z', callers: [{ caller: 'user:u1 (shop-app/4.2)', lastUsed: '2026-11-23T10:00:00Z', calls: 5000 }] } }),
        changelog: '',
        today,
        zeroUseDays: 14,
      });
      expect(verdicts.map((verdict) => [verdict.change.rule, verdict.allowed])).toEqual([
        ['request-field-became-required', false],
        ['request-constraint-tightened', false],
        ['field-removed', true],
      ]);
      expect(verdicts[0].reason).toBe(`deprecated (${couponCode}), but a completed replacement lets it be removed, not changed (request-field-became-required): remove it, ship the change as a new major version, or approve it (contracts/approvals.yaml)`);
    });

    it('refuses removing a nested response field while a caller reads the top-level field that holds it', () => {
      const nested = 'rest:GET /v1/orders/{id} response.200.body.items[].sku';
      const verdicts = judge({
        changes: [change('rest', 'breaking', nested, 'field-removed', specRule.removed, 'response field removed')],
        deprecations: [{ element: nested, replacement: 'none', notice: 'https://docs.example.com/n', brownouts: [], ...past }],
        approvals: [],
        usage: usage({ 'rest:GET /v1/orders/{id} response.200.body.items': { lastUsed: '2026-11-22T10:00:00Z', callers: [{ caller: 'key:ak_7f3 (shop-app/4.2, owner user:u1)', lastUsed: '2026-11-22T10:00:00Z', calls: 40 }] } }),
        changelog: '',
        today,
        zeroUseDays: 14,
      });
      expect(verdicts[0]).toMatchObject({ allowed: false, reason: 'still used within 14 days (last 2026-11-22T10:00:00Z) by key:ak_7f3 (shop-app/4.2, owner user:u1)' });
    });

    it('refuses removing a nested response field while callers read the whole answer (no fields=)', () => {
      const nested = 'rest:GET /v1/orders/{id} response.200.body.amountDetail.tax';
      const verdicts = judge({
        changes: [change('rest', 'breaking', nested, 'field-removed', specRule.removed, 'response field removed')],
        deprecations: [{ element: nested, replacement: 'none', notice: 'https://docs.example.com/n', brownouts: [], ...past }],
        approvals: [],
        usage: usage({ 'rest:GET /v1/orders/{id} response.200': { lastUsed: '2026-11-22T10:00:00Z', callers: [{ caller: 'user:u9 (web/1.0)', lastUsed: '2026-11-22T10:00:00Z', calls: 3 }] } }),
        changelog: '',
        today,
        zeroUseDays: 14,
      });
      expect(verdicts[0]).toMatchObject({ allowed: false, reason: expect.stringContaining('by user:u9 (web/1.0)') });
    });

    it('refuses removing a proto reply field while its RPC is called, naming the caller', async () => {
      const element = 'proto:inventory.v1.ReserveReply.remaining';
      edit(protoFile, (text) => text.replace(/\n\s*\/\/ Stock left for other orders right after this reservation\.\n\s*int32 remaining = 4;/, '\n  reserved 4;\n  reserved "remaining";'));
      deprecate([element], past);
      const used = usage({ 'proto:inventory.v1.Inventory.Reserve': { lastUsed: '2026-11-21T09:00:00Z', callers: [{ caller: 'service:orders-service (orders-service/1.0)', lastUsed: '2026-11-21T09:00:00Z', calls: 900 }] } });
      const result = await runCheck({ root, today, zeroUseDays: 14, usage: used });
      expect(result.text).toContain(`BREAKING  ${element}\n          field-removed: field removed or renamed | §Versioning 3: removing or renaming a field\n          REFUSED: still used within 14 days (last 2026-11-21T09:00:00Z) by service:orders-service (orders-service/1.0)`);
      expect(result.passed).toBe(false);

      const unused = await runCheck({ root, today, zeroUseDays: 14, usage: usage({ 'proto:inventory.v1.Inventory.GetStock': { lastUsed: '2026-11-21T09:00:00Z', callers: [] } }) });
      expect(unused.text).toContain('allowed: replacement complete');
      expect(unused.passed).toBe(true);
    });
  });

  describe('a completed replacement of a proto field', () => {
    // contracts/deprecations.yaml replaces AdjustStockRequest.reason (field 3), sunset 2027-06-01.
    const element = 'proto:inventory.v1.AdjustStockRequest.reason';
    const after = '2027-06-20';
    const unused: UsageExport = { generatedAt: `${after}T06:00:00Z`, recordedSince: '2027-05-01', elements: {} };
    const removeReason = (reserved: string) =>
      edit(protoFile, (text) => text.replace(/\n {2}\/\/ Why \(a delivery, a count, breakage\); kept with the change\. At most 200 characters\.\n {2}string reason = 3 \[deprecated = true\];\n/, `\n${reserved}`));

    it('refuses the removal until the field number and name are reserved, so no later field reuses them', async () => {
      removeReason('');
      const result = await runCheck({ root, today: after, zeroUseDays: 14, usage: unused });
      expect(result.text).toContain(
        `BREAKING  ${element}\n          field-removed: field removed or renamed | §Versioning 3: removing or renaming a field\n          REFUSED: replacement complete: sunset 2027-06-01 passed and no recorded use for 14 days, but a removed field's number and name stay reserved: reserve 3 and "reason" in inventory.v1.AdjustStockRequest (reserved 3; reserved "reason";)`,
      );
      expect(result.passed).toBe(false);
    });

    it('refuses it with only the number reserved, naming the name', async () => {
      removeReason('  reserved 3;\n');
      const result = await runCheck({ root, today: after, zeroUseDays: 14, usage: unused });
      expect(result.text).toContain('reserve "reason" in inventory.v1.AdjustStockRequest (reserved "reason";)');
      expect(result.passed).toBe(false);
    });

    it('lets it pass with both reserved', async () => {
      removeReason('  reserved 3;\n  reserved "reason";\n');
      const result = await runCheck({ root, today: after, zeroUseDays: 14, usage: unused });
      expect(result.text).toContain(`BREAKING  ${element}\n          field-removed: field removed or renamed | §Versioning 3: removing or renaming a field\n          allowed: replacement complete: sunset 2027-06-01 passed and no recorded use for 14 days`);
      expect(result.passed).toBe(true);
    });
  });

  describe('the zero-use window', () => {
    it('refuses to run on this checkout with a window under 14 days, as CI runs it', () => {
      for (const shortening of [{ CONTRACT_ZERO_USE_DAYS: '3' }, { CONTRACT_ZERO_USE_SECONDS: '25' }]) {
        let failure: { status?: number; stderr?: string } = {};
        try {
          execFileSync(process.execPath, ['tools/ts-run.mjs', 'tools/contracts/check.ts'], { cwd: repositoryRoot, env: { ...process.env, CI: 'true', ...shortening }, encoding: 'utf8', stdio: 'pipe' });
        } catch (error) {
          failure = error as typeof failure;
        }
        expect(failure.status).toBe(2);
        expect(failure.stderr).toContain('contract:check: a zero-use window under 14 days (CONTRACT_ZERO_USE_DAYS/CONTRACT_ZERO_USE_SECONDS) is for tests on a copy of the contracts (--root <copy>), not for this checkout in CI');
      }
    });

    it('takes a shorter window only on a copy of the contracts (--root), and a longer one anywhere', () => {
      expect(zeroUseWindow({ CONTRACT_ZERO_USE_DAYS: '3' }, repositoryRoot)).toEqual({ error: expect.stringContaining('not for this checkout') });
      expect(zeroUseWindow({ CONTRACT_ZERO_USE_DAYS: '3' }, root)).toEqual({ days: 3, shortened: true });
      expect(zeroUseWindow({ CONTRACT_ZERO_USE_SECONDS: '25' }, root)).toMatchObject({ days: 14, shortened: true, since: expect.any(String) });
      expect(zeroUseWindow({ CONTRACT_ZERO_USE_DAYS: '30' }, undefined)).toEqual({ days: 30, shortened: false });
      expect(zeroUseWindow({}, undefined)).toEqual({ days: 14, shortened: false });
    });
  });

  describe('the deprecation registry', () => {
    it.each([
      ['no sunset date', '  - element: "graphql:Shipment.carrier"\n    replacement: "graphql:Shipment.carrierCode"\n    announced: 2026-11-01\n    notice: https://docs.example.com/n\n', 'no sunset date (YYYY-MM-DD)'],
      ['a sunset before the announcement', '  - element: "graphql:Shipment.carrier"\n    replacement: "graphql:Shipment.carrierCode"\n    announced: 2026-11-01\n    sunset: 2026-10-01\n    notice: https://docs.example.com/n\n', 'sunset 2026-10-01 is before the announcement 2026-11-01'],
      ['an element not in the contract', '  - element: "graphql:Shipment.carrierName"\n    replacement: "graphql:Shipment.carrier"\n    announced: 2026-11-01\n    sunset: 2027-05-01\n    notice: https://docs.example.com/n\n', 'names an element that is not in the contract'],
      ['a REST field not in the contract', '  - element: "rest:GET /v1/orders/{id}/shipment response.200.body.trackingCode"\n    replacement: "none"\n    announced: 2026-11-01\n    sunset: 2027-05-01\n    notice: https://docs.example.com/n\n', 'names an element that is not in the contract'],
      ['an RPC not in the contract', '  - element: "proto:inventory.v1.Inventory.Restock"\n    replacement: "proto:inventory.v1.Inventory.AdjustStock"\n    announced: 2026-11-01\n    sunset: 2027-05-01\n    notice: https://docs.example.com/n\n', 'names an element that is not in the contract'],
      ['a webhook payload field not in the contract', '  - element: "webhook:order.created body.data.couponName"\n    replacement: "none"\n    announced: 2026-11-01\n    sunset: 2027-05-01\n    notice: https://docs.example.com/n\n', 'names an element that is not in the contract'],
    ])('refuses an entry with %s', async (_label, entry, problem) => {
      writeRegistry(entry);
      const result = await runCheck({ root, today, zeroUseDays: 14 });
      expect(result.text).toContain(problem);
      expect(result.text).toMatch(/1 registry problems: FAILED/);
      expect(result.passed).toBe(false);
    });

    it('refuses a sunset or a brownout set with less notice than clients need, for an element still served', async () => {
      const entry = (sunset: string, brownout = '') => `  - element: "rest:GET /v1/orders query.hasCoupon"\n    replacement: "none"\n    announced: ${today}\n    sunset: ${sunset}\n    notice: https://docs.example.com/n\n${brownout}`;
      writeRegistry(entry(today));
      const atOnce = await runCheck({ root, today, zeroUseDays: 14 });
      expect(atOnce.text).toContain(`sunset ${today} gives clients less than 30 days' notice from ${today}; set it on 2026-12-24 or later`);
      expect(atOnce.passed).toBe(false);
      writeRegistry(entry('2026-12-24', '    brownouts:\n      - start: 2026-11-25T10:00:00Z\n        end: 2026-11-25T11:00:00Z\n'));
      const brownoutTomorrow = await runCheck({ root, today, zeroUseDays: 14 });
      expect(brownoutTomorrow.text).toContain("the brownout from 2026-11-25T10:00:00.000Z gives clients less than 7 days' notice");
      expect(brownoutTomorrow.text).not.toContain("days' notice from 2026-11-24; set it");
      expect(brownoutTomorrow.passed).toBe(false);
      writeRegistry(entry('2026-12-24', '    brownouts:\n      - start: 2026-12-01T10:00:00Z\n        end: 2026-12-01T11:00:00Z\n'));
      const enough = await runCheck({ root, today, zeroUseDays: 14 });
      expect(enough.text).toMatch(/0 registry problems: passed/);
      expect(enough.passed).toBe(true);
    });


    const markSources = (sunset = '2027-05-01') => {
      edit(supergraph, (text) => text.replace(/\n(\s*)trackingNumber: String\n/, `\n$1trackingNumber: String @deprecated(reason: "Use trackingUrl; removed on ${sunset}.")\n`).replace('  CANCELED @join__enumValue(graph: ORDERS)', `  CANCELED @join__enumValue(graph: ORDERS) @deprecated(reason: "Use VOIDED; removed on ${sunset}.")`));
      edit(protoFile, (text) => text.replace('  rpc Reserve(ReserveRequest) returns (ReserveReply);', '  rpc Reserve(ReserveRequest) returns (ReserveReply) {\n    option deprecated = true;\n  }').replace('  string sku = 4;', '  string sku = 4 [deprecated = true];'));
    };
    const everyKind: [string, string][] = [
      ['rest:GET /v1/orders query.offset', 'rest:GET /v1/orders query.cursor'],
      ['rest:GET /v1/orders response.200.body.items[].status', 'none'],
      ['rest:POST /v1/orders request.body.items[].quantity', 'none'],
      [restElement, 'none'],
      ['rest:POST /v1/orders', 'none'],
      ['graphql:Shipment.trackingNumber', 'graphql:Shipment.trackingUrl'],
      ['graphql:OrderStatus.CANCELED', 'graphql:OrderStatus.VOIDED'],
      ['proto:inventory.v1.Inventory.Reserve', 'proto:inventory.v1.Inventory.ReserveStream'],
      ['proto:inventory.v1.ReserveRequest.sku', 'none'],
      ['webhook:order.created body.data.couponCode', 'webhook:order.created body.data.coupon'],
      ['webhook:user.deleted', 'none'],
    ];
    const registryOf = (entries: [string, string][]) =>
      `${entries.map(([element, replacement]) => `  - element: "${element}"\n    replacement: "${replacement}"\n    announced: 2026-11-01\n    sunset: 2027-05-01\n    notice: https://docs.example.com/n\n`).join('')}`;

    it('accepts entries naming existing elements of every kind, marked deprecated in their sources', async () => {
      markSources();
      writeRegistry(registryOf(everyKind));
      const result = await runCheck({ root, today, zeroUseDays: 14 });
      expect(result.text).toMatch(/0 registry problems: passed/);
      expect(result.passed).toBe(true);
    });

    it('refuses a GraphQL entry whose SDL does not say @deprecated with the replacement and the sunset date', async () => {
      writeRegistry(registryOf(everyKind.filter(([element]) => element.startsWith('graphql:Shipment'))));
      const unmarked = await runCheck({ root, today, zeroUseDays: 14 });
      expect(unmarked.text).toContain('REGISTRY  deprecations.yaml entry 1 (graphql:Shipment.trackingNumber): the subgraph SDL must mark it @deprecated(reason: "Use Shipment.trackingUrl; removed on 2027-05-01.")');
      expect(unmarked.passed).toBe(false);
      markSources('2027-06-01');
      const wrongDate = await runCheck({ root, today, zeroUseDays: 14 });
      expect(wrongDate.text).toContain(', not "Use trackingUrl; removed on 2027-06-01."');
      expect(wrongDate.passed).toBe(false);
    });

    it('asks a GraphQL entry without a replacement for a reason that says why, not "Use none"', async () => {
      writeRegistry(registryOf([['graphql:Shipment.trackingNumber', 'none: the carrier page has it']]));
      const unmarked = await runCheck({ root, today, zeroUseDays: 14 });
      expect(unmarked.text).toContain('REGISTRY  deprecations.yaml entry 1 (graphql:Shipment.trackingNumber): the subgraph SDL must mark it @deprecated(reason: "No replacement: the carrier page has it; removed on 2027-05-01.")');
      expect(unmarked.text).not.toContain('Use none');
      expect(unmarked.passed).toBe(false);
    });

    it('refuses a proto entry whose .proto does not mark it deprecated', async () => {
      writeRegistry(registryOf(everyKind.filter(([element]) => element.startsWith('proto:'))));
      const result = await runCheck({ root, today, zeroUseDays: 14 });
      expect(result.text).toContain('REGISTRY  deprecations.yaml entry 1 (proto:inventory.v1.Inventory.Reserve): the .proto must mark it deprecated');
      expect(result.text).toContain('REGISTRY  deprecations.yaml entry 2 (proto:inventory.v1.ReserveRequest.sku): the .proto must mark it deprecated');
      expect(result.passed).toBe(false);
    });

    // The registry is the one place a deprecation is declared: a mark with no entry tracks no
    // sunset, sends no Deprecation header and leaves the removal ungated by use.
    it('refuses a GraphQL @deprecated or a proto [deprecated = true] with no registry entry, naming the element and the files', async () => {
      const markTrackingNumber = (text: string) => text.replace(/\n(\s*)trackingNumber: String\n/, '\n$1trackingNumber: String @deprecated(reason: "Use trackingUrl; removed on 2027-05-01.")\n');
      edit(ordersSubgraph, markTrackingNumber);
      edit(supergraph, markTrackingNumber);
      edit(protoFile, (text) => text.replace('  string sku = 4;', '  string sku = 4 [deprecated = true];'));
      const unregistered = await runCheck({ root, today, zeroUseDays: 14 });
      expect(unregistered.text).toContain(`REGISTRY  graphql:Shipment.trackingNumber is marked deprecated in ${ordersSubgraph}, ${supergraph} but has no registry entry: add an entry to contracts/deprecations.yaml (element, replacement, announced, a sunset at least 30 days on, notice), or take the mark away`);
      expect(unregistered.text).toContain(`REGISTRY  proto:inventory.v1.ReserveRequest.sku is marked deprecated in ${protoFile} but has no registry entry: add an entry to contracts/deprecations.yaml`);
      expect(unregistered.text).toMatch(/2 registry problems: FAILED/);
      expect(unregistered.passed).toBe(false);

      writeRegistry(registryOf([['graphql:Shipment.trackingNumber', 'graphql:Shipment.trackingUrl'], ['proto:inventory.v1.ReserveRequest.sku', 'none']]));
      const registered = await runCheck({ root, today, zeroUseDays: 14 });
      expect(registered.text).toMatch(/0 refused, 0 registry problems: passed/);
      expect(registered.passed).toBe(true);
    });

    it('asks each mark for an entry naming it or what holds it: one for an RPC does not cover a field of its request message', async () => {
      edit(protoFile, (text) => text.replace('  rpc Reserve(ReserveRequest) returns (ReserveReply);', '  rpc Reserve(ReserveRequest) returns (ReserveReply) {\n    option deprecated = true;\n  }').replace('  string sku = 4;', '  string sku = 4 [deprecated = true];'));
      writeRegistry(registryOf([['proto:inventory.v1.Inventory.Reserve', 'proto:inventory.v1.Inventory.ReserveStream']]));
      const result = await runCheck({ root, today, zeroUseDays: 14 });
      expect(result.text).toContain('REGISTRY  proto:inventory.v1.ReserveRequest.sku is marked deprecated in proto/inventory/v1/inventory.proto but has no registry entry');
      expect(result.text).toMatch(/1 registry problems: FAILED/);
    });

    it('refuses an OpenAPI `deprecated: true` the registry did not generate (set in a declaration), naming its place', async () => {
      edit(openapi, (text) => {
        const document = JSON.parse(text);
        document.components.schemas.Shipment.properties.trackingNumber.deprecated = true;
        document.paths['/orders'].get.parameters.find((parameter: { name: string }) => parameter.name === 'hasCoupon').deprecated = true;
        return JSON.stringify(document, null, 2);
      });
      const result = await runCheck({ root, today, zeroUseDays: 14 });
      expect(result.text).toContain(`REGISTRY  #/components/schemas/Shipment/properties/trackingNumber is marked deprecated in ${openapi} (at #/components/schemas/Shipment/properties/trackingNumber) by its declaration, not by the registry: REST marks are generated from contracts/deprecations.yaml; drop the hand-made mark and add an entry to contracts/deprecations.yaml`);
      expect(result.text).toMatch(new RegExp(`REGISTRY  rest:GET /v1/orders query\\.hasCoupon is marked deprecated in ${openapi} \\(at #/paths/~1orders/get/parameters/\\d+\\) by its declaration, not by the registry`));
      expect(result.text).toMatch(/2 registry problems: FAILED/);
      expect(result.passed).toBe(false);
    });
  });

  it.each([
    {
      change: 'a field description changes',
      edit: (text: string) => text.replace('"""The carrier\'s tracking number."""', '"""The carrier\'s tracking URL."""'),
      element: 'graphql:Shipment.trackingNumber',
      refused: 'a changed description may change the meaning',
      entry: 'now holds the tracking URL.',
      allowed: 'meaning change',
    },
    {
      change: 'an enum clients read gains a value',
      edit: (text: string) => text.replace('  SHIPPED @join__enumValue(graph: ORDERS)\n', '  SHIPPED @join__enumValue(graph: ORDERS)\n\n  """Lost by the carrier."""\n  LOST @join__enumValue(graph: ORDERS)\n'),
      element: 'graphql:OrderStatus.LOST',
      refused: 'clients will read a value they have not seen: say what it means',
      entry: ': the carrier lost the parcel; a new order is the remedy.',
      allowed: 'new response value',
    },
  ])('asks for a changelog entry when $change', async ({ edit: change, element, refused, entry, allowed }) => {
    edit(supergraph, change);
    const result = await runCheck({ root, today, zeroUseDays: 14 });
    expect(result.text).toContain(`DANGEROUS ${element} (${supergraph})`);
    expect(result.text).toContain(`REFUSED: ${refused}: name it in contracts/CHANGELOG.md as printed above`);
    expect(result.passed).toBe(false);

    writeContractsFile('CHANGELOG.md', `# Contract changelog\n\n## 2026-11-24\n- \`${element}\` ${entry}\n`);
    const logged = await runCheck({ root, today, zeroUseDays: 14 });
    expect(logged.text).toContain(`allowed: ${allowed} recorded in contracts/CHANGELOG.md`);
    expect(logged.passed).toBe(true);
  });

  it('asks for a changelog entry when a union clients read gains a member', async () => {
    // A __typename old clients have not seen, as an enum's new value is (before, DANGEROUS and passed).
    const parcel = (members: string) => `union Parcel\n  @join__type(graph: ORDERS)\n${members.split(' | ').map((member) => `  @join__unionMember(graph: ORDERS, member: "${member}")\n`).join('')} = ${members}\n\n`;
    for (const [file, members] of [['contracts/v1/supergraph.graphql', 'Shipment'], [supergraph, 'Shipment | Order']]) edit(file, (text) => text.replace(/\ntype Query\b/, `\n${parcel(members)}type Query`));
    const result = await runCheck({ root, today, zeroUseDays: 14 });
    expect(result.text).toContain(`DANGEROUS graphql:Parcel (${supergraph})`);
    expect(result.text).toContain('REFUSED: clients will read a value they have not seen: say what it means: name it in contracts/CHANGELOG.md as printed above');
    expect(result.passed).toBe(false);
    writeContractsFile('CHANGELOG.md', '# Contract changelog\n\n## 2026-11-24\n- `graphql:Parcel` may be an Order now: one shipped whole.\n');
    expect((await runCheck({ root, today, zeroUseDays: 14 })).passed).toBe(true);
  });

  it('takes a changelog entry naming the element whole, not one naming a longer element it begins', () => {
    expect(namedIn('- `graphql:Order.status` may be LOST.', 'graphql:Order.status')).toBe(true);
    expect(namedIn('- Order.status may be LOST.', 'Order.status')).toBe(true);
    expect(namedIn('- the carrier lost it: graphql:Order.status.', 'graphql:Order.status')).toBe(true);
    expect(namedIn('- `graphql:Order.statusReason` is new.', 'graphql:Order.status')).toBe(false);
    expect(namedIn('- `rest:GET /v1/orders/{id} response.200.body.status.code` changed.', 'rest:GET /v1/orders/{id} response.200.body.status')).toBe(false);
    expect(namedIn('- `rest:GET /v1/orders/{id} response.200.body.items[].status` changed.', 'rest:GET /v1/orders/{id} response.200.body.items')).toBe(false);
    expect(namedIn('- `graphql:MyOrder.status` changed.', 'Order.status')).toBe(false);
  });

  it('takes only a changelog entry added since the release, not an older one naming the element', async () => {
    edit(supergraph, (text) => text.replace('"""The carrier\'s tracking number."""', '"""The carrier\'s tracking URL."""'));
    const released = '# Contract changelog\n\n## 2026-10-02\n- `graphql:Shipment.trackingNumber` is filled once the parcel ships.\n';
    writeContractsFile('v1/CHANGELOG.md', released);
    writeContractsFile('CHANGELOG.md', released);
    const old = await runCheck({ root, today, zeroUseDays: 14 });
    expect(old.text).toContain('REFUSED: a changed description may change the meaning: name it in contracts/CHANGELOG.md as printed above, in an entry added since the baseline was released (an older entry does not count)');
    expect(old.passed).toBe(false);

    writeContractsFile('CHANGELOG.md', released.replace('\n\n## 2026-10-02', '\n\n## 2026-11-24\n- `graphql:Shipment.trackingNumber` now holds the tracking URL.\n\n## 2026-10-02'));
    const added = await runCheck({ root, today, zeroUseDays: 14 });
    expect(added.text).toContain('allowed: meaning change recorded in contracts/CHANGELOG.md');
    expect(added.passed).toBe(true);
  });

  it('without a released copy of the changelog, takes entries dated on or after the release day only', async () => {
    // A baseline released on the test's day, before releases kept a copy of the changelog.
    rmSync(path.join(root, 'contracts/v1/CHANGELOG.md'), { force: true });
    const releaseFile = path.join(root, 'contracts/v1/release.json');
    writeFileSync(releaseFile, JSON.stringify({ ...JSON.parse(readFileSync(releaseFile, 'utf8')), releasedAt: `${today}T00:00:00.000Z` }));
    edit(supergraph, (text) => text.replace('"""The carrier\'s tracking number."""', '"""The carrier\'s tracking URL."""'));
    const older = '## 2026-10-02\n- `graphql:Shipment.trackingNumber` is filled once the parcel ships.\n';
    writeContractsFile('CHANGELOG.md', `# Contract changelog\n\n${older}`);
    const old = await runCheck({ root, today, zeroUseDays: 14 });
    expect(old.passed).toBe(false);
    writeContractsFile('CHANGELOG.md', `# Contract changelog\n\n## 2026-11-24\n- \`graphql:Shipment.trackingNumber\` now holds the tracking URL.\n\n${older}`);
    const dated = await runCheck({ root, today, zeroUseDays: 14 });
    expect(dated.passed).toBe(true);
  });

  it('reports a change to a shared schema once, and takes the schema name in the changelog', async () => {
    edit(openapi, (text) => {
      const document = JSON.parse(text);
      document.components.schemas.Problem.properties.code.description = 'Stable; clients branch on it.';
      return JSON.stringify(document, null, 2);
    });
    const result = await runCheck({ root, today, zeroUseDays: 14 });
    expect(result.text).toMatch(/DANGEROUS rest:#\/components\/schemas\/Problem\.code \(\d+ places\)\n {10}description-changed: /);
    expect(result.text).toMatch(/\n {10}at rest:DELETE \/v1\/\S+ response\.400\.body\(application\/problem\+json\)\.code\n/); // the first places, in order
    expect(result.passed).toBe(false);

    writeContractsFile('CHANGELOG.md', '# Contract changelog\n\n## 2026-11-24\n- `rest:#/components/schemas/Problem.code`: unknown codes are no longer promised default handling.\n');
    const logged = await runCheck({ root, today, zeroUseDays: 14 });
    expect(logged.passed).toBe(true);
  });

  it('reports a new response enum value as dangerous, refused only for want of its changelog entry', async () => {
    edit(supergraph, (text) => text.replace(/(enum ShipmentStatus[^}]*?)\n}/, '$1\n\n  """Lost by the carrier."""\n  LOST\n}'));
    const result = await runCheck({ root, today, zeroUseDays: 14 });
    expect(result.text).toContain('DANGEROUS graphql:ShipmentStatus.LOST');
    expect(result.text).toMatch(/0 breaking, 1 dangerous, 0 safe; 1 refused, 0 registry problems: FAILED/);
    writeContractsFile('CHANGELOG.md', '# Contract changelog\n\n## 2026-11-24\n- `graphql:ShipmentStatus.LOST`: the carrier lost the parcel.\n');
    expect((await runCheck({ root, today, zeroUseDays: 14 })).passed).toBe(true);
  });

  describe('proto (buf breaking folded in)', () => {
    it('refuses a renumbered field', async () => {
      edit(protoFile, (text) => text.replace('string sku = 4;', 'string sku = 5;'));
      const result = await runCheck({ root, today, zeroUseDays: 14 });
      expect(result.text).toContain('BREAKING  proto:inventory.v1.ReserveRequest.sku\n          field-number-changed: field number 4 -> 5');
      expect(result.passed).toBe(false);
    });

    it("judges by the released baseline's buf rules: a change cannot loosen them to pass itself", async () => {
      edit(protoFile, (text) => text.replace('  string sku = 4;', '  string sku = 4 [json_name = "stockKeepingUnit"];'));
      edit('proto/buf.yaml', (text) => `${text.trimEnd()}\n  except:\n    - FIELD_SAME_JSON_NAME\n`);
      const result = await runCheck({ root, today, zeroUseDays: 14 });
      expect(result.text).toContain('BREAKING  proto:inventory.v1.ReserveRequest.sku\n          FIELD_SAME_JSON_NAME');
      expect(result.passed).toBe(false);
    });

    it('refuses reusing the reserved number of the former item_id', async () => {
      edit(protoFile, (text) => text.replace('  reserved 2;\n  reserved "item_id";\n', '  string item_ref = 2;\n'));
      const result = await runCheck({ root, today, zeroUseDays: 14 });
      expect(result.text).toContain('BREAKING  proto:inventory.v1.ReserveRequest\n          RESERVED_MESSAGE_NO_DELETE: buf: Previously present reserved');
      expect(result.passed).toBe(false);
    });

    it('passes a field added with a new number', async () => {
      edit(protoFile, (text) => text.replace('  string sku = 4;\n}', '  string sku = 4;\n  string warehouse = 5;\n}'));
      const result = await runCheck({ root, today, zeroUseDays: 14 });
      expect(result.text).toContain('SAFE      proto:inventory.v1.ReserveRequest.warehouse\n          field-added');
      expect(result.passed).toBe(true);
    });

    it('passes a new package version next to inventory.v1', async () => {
      mkdirSync(path.join(root, 'proto/inventory/v2'));
      writeFileSync(path.join(root, 'proto/inventory/v2/inventory.proto'), readFileSync(path.join(root, protoFile), 'utf8').replace('package inventory.v1;', 'package inventory.v2;').replace('string sku = 4;', 'string sku = 5;')
          // v1's deprecation is v1's: a mark copied into v2 would need a registry entry of its own.
          .replace(' [deprecated = true]', ''));
      const result = await runCheck({ root, today, zeroUseDays: 14 });
      expect(result.text).toContain('SAFE      proto:inventory.v2\n          major-version-added');
      expect(result.passed).toBe(true);
    });
  });

  describe('a /v2 of one resource next to /v1', () => {
    const getProduct = apiEndpoints.find((endpoint) => endpoint.operationId === 'getProduct')!;
    // The product's read without its ETag: a removal, breaking for a client that reads it.
    const withoutETag: Endpoint = { ...getProduct, responses: { 200: { ...getProduct.responses[200]!, headers: [] } } };
    const generate = (endpoints: Endpoint[]): void => generateDocument(openapi, endpoints);

    it('passes a removal in /v2, /v1 unchanged, as the new major version', async () => {
      generate([...apiEndpoints, { ...withoutETag, version: 'v2', operationId: 'getProductV2' }]);
      const result = await runCheck({ root, today, zeroUseDays: 14 });
      expect(result.text).toContain('SAFE      rest:GET /v2/products/{id}\n          major-version-added: operation added in the new major version v2');
      expect(result.text).toContain(
        'SAFE      rest:GET /v2/products/{id} response.200.header.ETag\n          changed-in-new-major: response-header-removed relative to rest:GET /v1/products/{id}: header ETag no longer sent; allowed only because v2 is a new major version',
      );
      expect(result.text).toMatch(/0 breaking, 0 dangerous, 2 safe; 0 refused, 0 registry problems: passed/);
      expect(result.passed).toBe(true);
    });

    it('refuses the same removal made to /v1', async () => {
      generate(apiEndpoints.map((endpoint) => (endpoint === getProduct ? withoutETag : endpoint)));
      const result = await runCheck({ root, today, zeroUseDays: 14 });
      expect(result.text).toContain('BREAKING  rest:GET /v1/products/{id} response.200.header.ETag\n          response-header-removed: header ETag no longer sent');
      expect(result.passed).toBe(false);
    });
  });

  describe('a check JSON Schema cannot state (a zod refine)', () => {
    const createOrder = apiEndpoints.find((endpoint) => endpoint.operationId === 'createOrder')!;
    const withSundayRule: Endpoint = { ...createOrder, body: createOrder.body!.refine(() => true, { message: 'must not be placed on a Sunday' }) };

    it('refuses one added to a request once the released document lists checks (x-checks)', async () => {
      generateDocument('contracts/v1/openapi.json', apiEndpoints);
      generateDocument(openapi, apiEndpoints.map((endpoint) => (endpoint === createOrder ? withSundayRule : endpoint)));
      const result = await runCheck({ root, today, zeroUseDays: 14 });
      expect(result.text).toContain('BREAKING  rest:POST /v1/orders request.body\n          request-constraint-tightened: checks added: "must not be placed on a Sunday"');
      expect(result.passed).toBe(false);
    });

    it('refuses a check made stricter under the same message once it declares so (params.check), and passes a looser one', () => {
      // The order rule's function declares its version 2 tighter; the released document listed it
      // by its message alone (version 1), and a looser version 2 is the same listing otherwise.
      const check = { version: 2, history: { 2: 'tighter' } };
      const current = buildDocument(path.join(root, 'contracts/deprecations.yaml'), apiEndpoints.map((endpoint) => (endpoint === createOrder ? { ...createOrder, body: createOrder.body!.refine(() => true, { message: 'must not be placed on a Sunday', params: { code: 'NOT_ALLOWED', check } }) } : endpoint)));
      const listed = JSON.stringify({ message: 'must not be placed on a Sunday', ...check });
      expect(JSON.stringify(current)).toContain(listed);
      const rewritten = (entry: string) => JSON.parse(JSON.stringify(current).replace(listed, entry));
      const findings = (before: Record<string, unknown>, after: Record<string, unknown>) => diffOpenApi(before, after).map((found) => `${found.class} ${found.rule} ${found.element}: ${found.message}`);
      const released = rewritten(JSON.stringify('must not be placed on a Sunday'));
      expect(findings(released, current)).toEqual(['breaking request-constraint-tightened rest:POST /v1/orders request.body: check "must not be placed on a Sunday" version 1 -> 2 (tighter)']);
      expect(findings(released, rewritten(listed.replace('tighter', 'looser')))).toEqual(['safe request-constraint-loosened rest:POST /v1/orders request.body: check "must not be placed on a Sunday" version 1 -> 2 (looser)']);
    });

    it('takes a check reworded with its released message in `formerly` (params.check) as the same check, safe; reworded without it, as one dropped and one added', () => {
      const document = (message: string, check?: object) =>
        buildDocument(path.join(root, 'contracts/deprecations.yaml'), apiEndpoints.map((endpoint) => (endpoint === createOrder ? { ...createOrder, body: createOrder.body!.refine(() => true, { message, params: { code: 'NOT_ALLOWED', ...(check ? { check } : {}) } }) } : endpoint)));
      const findings = (before: Record<string, unknown>, after: Record<string, unknown>) => diffOpenApi(before, after).map((found) => `${found.class} ${found.rule} ${found.element}: ${found.message}`);
      const released = document('must not be placed on a Sunday');
      const reworded = document('must not be placed on a Sunday (UTC)', { formerly: ['must not be placed on a Sunday'] });
      expect(JSON.stringify(reworded)).toContain(JSON.stringify({ message: 'must not be placed on a Sunday (UTC)', formerly: ['must not be placed on a Sunday'] }));
      expect(findings(released, reworded)).toEqual(['safe check-reworded rest:POST /v1/orders request.body: check reworded: "must not be placed on a Sunday" -> "must not be placed on a Sunday (UTC)"']);
      expect(findings(released, document('must not be placed on a Sunday (UTC)'))).toContain('breaking request-constraint-tightened rest:POST /v1/orders request.body: checks added: "must not be placed on a Sunday (UTC)"');
      // A version declared beside it is still compared: reworded and made stricter is breaking.
      expect(findings(released, document('must not be placed on a Sunday (UTC)', { formerly: ['must not be placed on a Sunday'], version: 2, history: { 2: 'tighter' } }))).toContain(
        'breaking request-constraint-tightened rest:POST /v1/orders request.body: check "must not be placed on a Sunday (UTC)" version 1 -> 2 (tighter)',
      );
    });

    it('passes the checks a released document did not list, as documented: the server made them before', async () => {
      // Released before the document listed checks: today's document without x-checks.
      const released = buildDocument(path.join(root, 'contracts/deprecations.yaml'), apiEndpoints);
      writeFileSync(path.join(root, 'contracts/v1/openapi.json'), `${JSON.stringify(released, (key, value) => (key === 'x-checks' ? undefined : value), 2)}\n`);
      generateDocument(openapi, apiEndpoints);
      const result = await runCheck({ root, today, zeroUseDays: 14 });
      expect(result.text).toContain('SAFE      rest:POST /v1/orders request.body.items\n          checks-documented: checks added: "must name each product once"');
      expect(result.passed).toBe(true);
    });
  });
});

describe('a breaking change inside one alternative (oneOf/anyOf)', () => {
  // The card's brand may be 10 characters now, 20 before: the card alternative takes no old card,
  // so the change is found on the payment as a whole (type-changed), and an approval may name
  // what changed inside the alternative instead of the whole payment. The alternative is named by
  // the kind that tells it apart (`payment<kind=card>`), not its position: in the second case the
  // bank account is written first now, and the same approval still names the card.
  const approval = (element: string, rule?: string): Approval => ({ element, reason: 'brands are 10 characters at most at the card network', approvedBy: 'api-owner', approved: today, expires: '2026-12-24', ...(rule ? { rule } : {}) });
  describe.each(['request-alternative-field-tightened', 'request-alternative-field-tightened-reordered'])('%s', (name) => {
    const fixture = path.join(__dirname, 'fixtures/rest', name);
    const [before, after] = ['before', 'after'].map((side) => JSON.parse(readFileSync(path.join(fixture, `${side}.json`), 'utf8')));
    const changes = diffOpenApi(before, after).filter((found) => found.class === 'breaking');
    const verdictWith = (approvals: Approval[]) => judge({ changes, deprecations: [], approvals, changelog: '', today, zeroUseDays: 14 });

    it('is one refused finding on the whole payment without an approval', () => {
      expect(changes.map((found) => `${found.rule} ${found.element}`)).toEqual(['type-changed rest:POST /v1/things request.body.payment']);
      expect(verdictWith([]).map((verdict) => verdict.allowed)).toEqual([false]);
      // The report names what to approve instead of the whole payment.
      expect(render(verdictWith([]), []).text).toContain('          inside: rest:#/components/schemas/ThingInput.payment<kind=card>.brand (request-constraint-tightened)\n          REFUSED: not allowed');
    });

    it('passes with an approval naming the changed field inside the alternative, by its place or its schema', () => {
      for (const element of ['rest:POST /v1/things request.body.payment<kind=card>.brand', 'rest:#/components/schemas/ThingInput.payment<kind=card>.brand', 'rest:POST /v1/things request.body.payment<kind=card>', 'rest:POST /v1/things request.body.payment']) {
        const [verdict] = verdictWith([approval(element)]);
        expect({ element, allowed: verdict.allowed, reason: verdict.reason }).toEqual({ element, allowed: true, reason: 'approved until 2026-12-24: brands are 10 characters at most at the card network' });
      }
      expect(verdictWith([approval('rest:POST /v1/things request.body.payment<kind=card>.brand', 'request-constraint-tightened')])[0].allowed).toBe(true);
    });

    it('refuses with an approval of another alternative, another field, or another rule', () => {
      for (const approved of [approval('rest:POST /v1/things request.body.payment<kind=bank>.iban'), approval('rest:POST /v1/things request.body.payment<kind=bank>'), approval('rest:POST /v1/things request.body.payment<kind=card>.kind'), approval('rest:POST /v1/things request.body.payment<kind=card>.brand', 'field-removed')]) {
        expect({ approved: approved.element, allowed: verdictWith([approved])[0].allowed }).toEqual({ approved: approved.element, allowed: false });
      }
    });

    it('lets the registry name a place inside an alternative by that name, and nothing the alternatives do not hold', () => {
      for (const element of ['rest:POST /v1/things request.body.payment<kind=card>.brand', 'rest:POST /v1/things request.body.payment<kind=bank>.iban', 'rest:POST /v1/things request.body.payment<kind=card>']) expect({ element, exists: restElementExists(after, element) }).toEqual({ element, exists: true });
      for (const element of ['rest:POST /v1/things request.body.payment<kind=bank>.brand', 'rest:POST /v1/things request.body.payment<kind=cash>', 'rest:POST /v1/things request.body.payment<0>.brand']) expect({ element, exists: restElementExists(after, element) }).toEqual({ element, exists: false });
    });
  });

  it('takes no changelog entry naming a place inside an alternative for the whole field', () => {
    expect(namedIn('- `rest:POST /v1/things request.body.payment<kind=card>.brand` is shorter.', 'rest:POST /v1/things request.body.payment')).toBe(false);
    expect(namedIn('- `rest:POST /v1/things request.body.payment<kind=card>.brand` is shorter.', 'rest:POST /v1/things request.body.payment<kind=card>.brand')).toBe(true);
  });

  it('counts use of the field path, whichever alternative it was sent in, as use of a place inside one (the gateway records paths)', () => {
    expect(mayHaveUsed('rest:POST /v1/things request.body.payment<kind=card>.brand', 'rest:POST /v1/things request.body.payment.brand')).toBe(true);
    expect(mayHaveUsed('rest:POST /v1/things request.body.payment<kind=card>.brand', 'rest:POST /v1/things request.body.payment.iban')).toBe(false);
  });
});

describe('who reviews the contracts', () => {
  /**
   * The owners GitHub would ask for `file`: the last CODEOWNERS line whose pattern matches it. Only
   * the patterns this repository uses are understood: `*`, and a path from the root (`/contracts/`,
   * a folder and everything under it; `/contracts/approvals.yaml`, one file).
   */
  function ownersOf(codeowners: string, file: string): string[] {
    let owners: string[] = [];
    for (const line of codeowners.split('\n')) {
      const [pattern, ...names] = line.replace(/#.*/, '').trim().split(/\s+/);
      if (!pattern) continue;
      const matches = pattern === '*' || (pattern.startsWith('/') && (pattern.endsWith('/') ? `/${file}`.startsWith(pattern) : `/${file}` === pattern));
      if (matches) owners = names;
    }
    return owners;
  }

  it("gives the approvals, the deprecation registry, the released baselines and the proto's breaking rules to the API owners (.github/CODEOWNERS)", () => {
    const codeowners = readFileSync(path.join(repositoryRoot, '.github/CODEOWNERS'), 'utf8');
    for (const file of ['contracts/approvals.yaml', 'contracts/deprecations.yaml', 'contracts/CHANGELOG.md', 'contracts/v1/openapi.json', 'contracts/v1/supergraph.graphql', 'contracts/v1/proto/inventory/v1/inventory.proto', 'proto/buf.yaml']) {
      expect({ file, owners: ownersOf(codeowners, file) }).toEqual({ file, owners: ['@order-platform/api-owners'] });
    }
  });
});
