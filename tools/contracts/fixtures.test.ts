// The labelled fixture set: each case is a before/after pair of one contract kind and the changes
// the gate must report for it (class, rule, element), exactly: nothing missing, nothing extra.
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ContractChange } from './changes';
import { diffGraphQL } from './graphql-diff';
import { diffOpenApi } from './openapi-diff';
import { diffProto } from './proto-diff';

const fixtures = path.join(__dirname, 'fixtures');

interface Expected {
  case: string;
  changes: { class: string; rule: string; element: string }[];
}

function casesOf(kind: string): string[] {
  return readdirSync(path.join(fixtures, kind)).sort();
}

function expectedOf(dir: string): string[] {
  const expected = JSON.parse(readFileSync(path.join(dir, 'expected.json'), 'utf8')) as Expected;
  return expected.changes.map((item) => `${item.class} ${item.rule} ${item.element}`).sort();
}

function reported(changes: ContractChange[]): string[] {
  return changes.map((item) => `${item.class} ${item.rule} ${item.element}`).sort();
}

const bufConfig = 'version: v2\nbreaking:\n  use:\n    - WIRE_JSON\n';

/** A buf module of one fixture side: a single `<side>.proto`, or a `<side>/` tree of files. */
function protoModule(caseDir: string, side: 'before' | 'after', into: string): string {
  const dir = path.join(into, side);
  if (existsSync(path.join(caseDir, side))) cpSync(path.join(caseDir, side), dir, { recursive: true });
  else cpSync(path.join(caseDir, `${side}.proto`), path.join(dir, 'things.proto'));
  writeFileSync(path.join(dir, 'buf.yaml'), bufConfig);
  return dir;
}

describe('contract gate fixtures', () => {
  it('has at least 40 cases of each kind', () => {
    for (const kind of ['rest', 'graphql', 'proto']) expect(casesOf(kind).length).toBeGreaterThanOrEqual(40);
  });

  describe('rest (OpenAPI 3.1)', () => {
    it.each(casesOf('rest'))('%s', (name) => {
      const dir = path.join(fixtures, 'rest', name);
      const before = JSON.parse(readFileSync(path.join(dir, 'before.json'), 'utf8'));
      const after = JSON.parse(readFileSync(path.join(dir, 'after.json'), 'utf8'));
      expect(reported(diffOpenApi(before, after))).toEqual(expectedOf(dir));
    });
  });

  describe('graphql', () => {
    it.each(casesOf('graphql'))('%s', async (name) => {
      const dir = path.join(fixtures, 'graphql', name);
      const changes = await diffGraphQL(readFileSync(path.join(dir, 'before.graphql'), 'utf8'), readFileSync(path.join(dir, 'after.graphql'), 'utf8'), name);
      expect(reported(changes)).toEqual(expectedOf(dir));
    });
  });

  describe('proto', () => {
    let scratch: string;
    beforeAll(() => {
      scratch = mkdtempSync(path.join(tmpdir(), 'contract-fixtures-'));
    });
    afterAll(() => rmSync(scratch, { recursive: true, force: true }));

    it.each(casesOf('proto'))('%s', (name) => {
      const dir = path.join(fixtures, 'proto', name);
      const into = path.join(scratch, name);
      const changes = diffProto(protoModule(dir, 'before', into), protoModule(dir, 'after', into));
      expect(reported(changes)).toEqual(expectedOf(dir));
    });

    // What an allowed removal still owes (the gate refuses it until then): the number and name reserved.
    it.each([
      ['field-removed', 'a removed field\'s number and name stay reserved: reserve 4 and "price" in shop.v1.Thing (reserved 4; reserved "price";)'],
      ['field-removed-and-reserved', undefined],
      ['enum-value-removed', 'a removed enum value\'s number and name stay reserved: reserve 2 and "THING_STATUS_ARCHIVED" in shop.v1.ThingStatus (reserved 2; reserved "THING_STATUS_ARCHIVED";)'],
      ['enum-value-removed-and-reserved', undefined],
      // Renamed: the number stays in use by the new name (reserving it would not compile).
      ['field-renamed', 'a removed field\'s number and name stay reserved: reserve "name" in shop.v1.Thing (reserved "name";)'],
      ['enum-value-renamed', 'a removed enum value\'s number and name stay reserved: reserve "THING_STATUS_ARCHIVED" in shop.v1.ThingStatus (reserved "THING_STATUS_ARCHIVED";)'],
    ])('%s owes: %s', (name, owed) => {
      const dir = path.join(fixtures, 'proto', name);
      const into = path.join(scratch, `owed-${name}`);
      const removal = diffProto(protoModule(dir, 'before', into), protoModule(dir, 'after', into)).find((change) => change.rule.endsWith('-removed'));
      expect(removal?.unmet).toBe(owed);
    });
  });
});
