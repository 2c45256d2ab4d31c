import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { parse } from 'yaml';
import { covers, type Deprecation, deprecationHeaders, goneMessage, loadDeprecations, mayHaveUsed, phaseAt, readDeprecations } from './index';

const entry = (extra = '') =>
  `deprecations:\n  - element: "graphql:Shipment.carrier"\n    replacement: "graphql:Shipment.carrierCode"\n    announced: 2026-11-01\n    sunset: 2027-05-01\n    notice: https://docs.example.com/n\n${extra}`;

describe('the deprecation registry', () => {
  it('reads an entry with its brownout windows, dry run included', () => {
    const { entries, problems } = readDeprecations(
      parse(entry('    brownouts:\n      - start: 2027-03-01T14:00:00Z\n        end: 2027-03-01T15:00:00Z\n      - start: "2027-02-01T14:00:00Z"\n        end: "2027-02-01T14:30:00Z"\n        dryRun: true\n')),
    );
    expect(problems).toEqual([]);
    expect(entries).toEqual([
      {
        element: 'graphql:Shipment.carrier',
        replacement: 'graphql:Shipment.carrierCode',
        announced: '2026-11-01',
        sunset: '2027-05-01',
        notice: 'https://docs.example.com/n',
        brownouts: [
          { start: '2027-03-01T14:00:00.000Z', end: '2027-03-01T15:00:00.000Z', dryRun: false },
          { start: '2027-02-01T14:00:00.000Z', end: '2027-02-01T14:30:00.000Z', dryRun: true },
        ],
      },
    ]);
  });

  it('refuses a brownout that ends before it starts, and an element the contracts lack', () => {
    const { entries, problems } = readDeprecations(parse(entry('    brownouts:\n      - start: 2027-03-01T15:00:00Z\n        end: 2027-03-01T14:00:00Z\n')), () => false);
    expect(entries).toEqual([]);
    expect(problems).toEqual([
      'deprecations.yaml entry 1 (graphql:Shipment.carrier): names an element that is not in the contract',
      'deprecations.yaml entry 1 (graphql:Shipment.carrier): brownout 1 needs start and end (ISO date-times, end after start)',
    ]);
  });

  it('loads a file, treats a missing one as empty, and throws on a malformed one', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'deprecations-'));
    const file = path.join(dir, 'deprecations.yaml');
    expect(loadDeprecations(file)).toEqual([]);
    writeFileSync(file, entry());
    expect(loadDeprecations(file).map((item) => item.sunset)).toEqual(['2027-05-01']);
    writeFileSync(file, 'deprecations:\n  - element: "graphql:Shipment.carrier"\n');
    expect(() => loadDeprecations(file)).toThrow(/no sunset date/);
  });

  it('lets an operation cover its parameters and fields, not a sibling with a longer name', () => {
    expect(covers('rest:GET /v1/orders', 'rest:GET /v1/orders query.offset')).toBe(true);
    expect(covers('graphql:Shipment.carrier', 'graphql:Shipment.carrierCode')).toBe(false);
  });

  describe('what a call meets, by date', () => {
    const retiring: Deprecation = {
      element: 'rest:GET /v1/orders query.offset',
      replacement: 'rest:GET /v1/orders query.cursor',
      announced: '2026-12-01',
      sunset: '2027-06-01',
      notice: 'https://docs.example.com/changes/offset',
      brownouts: [
        { start: '2027-03-01T14:00:00.000Z', end: '2027-03-01T15:00:00.000Z', dryRun: false },
        { start: '2027-02-01T14:00:00.000Z', end: '2027-02-01T14:30:00.000Z', dryRun: true },
      ],
    };
    it.each([
      ['2027-01-15T10:00:00Z', 'deprecated'],
      ['2027-02-01T14:00:00Z', 'dry-run'],
      ['2027-02-01T14:30:00Z', 'deprecated'],
      ['2027-03-01T14:59:59Z', 'brownout'],
      ['2027-05-31T23:59:59Z', 'deprecated'],
      ['2027-06-01T00:00:00Z', 'sunset'],
    ])('at %s: %s', (at, phase) => {
      expect(phaseAt(retiring, new Date(at))).toBe(phase);
    });

    it('names the replacement, the window and the sunset in the refusal', () => {
      expect(goneMessage(retiring, 'brownout', new Date('2027-03-01T14:10:00Z'))).toBe(
        'GET /v1/orders query.offset is deprecated and unavailable during a brownout until 2027-03-01T15:00:00.000Z: use GET /v1/orders query.cursor instead. It stops working on 2027-06-01; see https://docs.example.com/changes/offset.',
      );
      expect(goneMessage(retiring, 'sunset')).toBe('GET /v1/orders query.offset was retired on 2027-06-01: use GET /v1/orders query.cursor instead. See https://docs.example.com/changes/offset.');
    });

    it('never sends a Sunset before the Deprecation, whatever entries a call used', () => {
      const day = fc.integer({ min: Date.parse('2020-01-01'), max: Date.parse('2035-12-31') }).map((ms) => new Date(ms).toISOString().slice(0, 10));
      const anEntry = fc.tuple(day, day, fc.webUrl()).map(([a, b, notice]): Deprecation => ({ ...retiring, announced: a < b ? a : b, sunset: a < b ? b : a, notice }));
      fc.assert(
        fc.property(fc.array(anEntry, { minLength: 1, maxLength: 5 }), (entries) => {
          const headers = deprecationHeaders(entries);
          const deprecation = Number(/^@(\d+)$/.exec(headers.Deprecation)?.[1]) * 1000;
          expect(Date.parse(headers.Sunset)).toBeGreaterThanOrEqual(deprecation);
          expect(headers.Link.split(', <').length).toBe(new Set(entries.map((entry) => entry.notice)).size);
        }),
      );
    });
  });
});

describe('what counts as use of an element', () => {
  const sku = 'rest:GET /v1/orders/{id} response.200.body.items[].sku';
  it('counts use of the answer or of a field holding it, never of the operation alone for a request part', () => {
    expect(mayHaveUsed(sku, sku)).toBe(true);
    expect(mayHaveUsed(sku, 'rest:GET /v1/orders/{id} response.200.body.items')).toBe(true);
    expect(mayHaveUsed(sku, 'rest:GET /v1/orders/{id} response.200')).toBe(true);
    expect(mayHaveUsed(sku, 'rest:GET /v1/orders/{id} response.200.body.status')).toBe(false);
    expect(mayHaveUsed('rest:GET /v1/orders query.offset', 'rest:GET /v1/orders')).toBe(false);
    expect(mayHaveUsed('rest:GET /v1/orders', 'rest:GET /v1/orders query.offset')).toBe(true);
  });

  it('names header parameters without regard to case, as HTTP does', () => {
    expect(mayHaveUsed('rest:POST /v1/orders header.idempotency-key', 'rest:POST /v1/orders header.Idempotency-Key')).toBe(true);
  });
});
