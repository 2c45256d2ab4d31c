import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { covers, loadDeprecations, readDeprecations } from './index';

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
});
