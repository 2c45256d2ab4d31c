// The SDK as a client outside the repository gets it: built, packed with npm, installed from the
// tarball into a scratch project offline, type-checked there with `strict` against the code blocks
// of the README, and loaded in Node.
//
// Offline: the SDK's dependencies (openapi-fetch and what it needs) come from npm's cache, which
// the repository's own install filled. That install followed package-lock.json, so the cache holds
// their tarballs but not the registry's metadata that resolving a range (`^0.17.0`) needs; the
// scratch project therefore pins each of them to its tarball's registry URL at the version the
// lockfile has, which npm reads from the cache, and the SDK's own range is then already met.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const root = path.resolve(__dirname, '../../..');
const sdkDir = path.join(root, 'libs/sdk');
const tsc = path.join(root, 'node_modules/typescript/bin/tsc');
const run = (command: string, args: string[], cwd: string) => execFileSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });

/** The SDK's dependencies and theirs, each at the lockfile's version, as registry tarball URLs. */
function pinnedDependencies(): Record<string, string> {
  const locked = (JSON.parse(readFileSync(path.join(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version: string; dependencies?: Record<string, string> }> }).packages;
  const registry = run('npm', ['config', 'get', 'registry'], root).trim().replace(/\/+$/, '');
  const pinned: Record<string, string> = {};
  const pin = (name: string) => {
    if (pinned[name]) return;
    const entry = locked[`node_modules/${name}`];
    if (!entry) throw new Error(`${name} is not in package-lock.json: add it to the repository's dependencies`);
    pinned[name] = `${registry}/${name}/-/${name.split('/').pop()}-${entry.version}.tgz`;
    for (const dependency of Object.keys(entry.dependencies ?? {})) pin(dependency);
  };
  const sdk = JSON.parse(readFileSync(path.join(sdkDir, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  for (const name of Object.keys(sdk.dependencies)) pin(name);
  return pinned;
}

let scratch: string;
let tarball: string;
let packed: { files: { path: string }[]; version: string };

beforeAll(() => {
  scratch = mkdtempSync(path.join(tmpdir(), 'sdk-client-'));
  run(process.execPath, [tsc, '-p', path.join(sdkDir, 'tsconfig.lib.json')], root);
  [packed] = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', scratch], sdkDir));
  tarball = path.join(scratch, (packed as unknown as { filename: string }).filename);
  writeFileSync(path.join(scratch, 'package.json'), JSON.stringify({ name: 'sdk-client', private: true, type: 'module', dependencies: pinnedDependencies() }));
  run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--loglevel=error', tarball], scratch);
});

afterAll(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

it('packs JavaScript, declarations and the README, versioned after the API', () => {
  const files = packed.files.map((file) => file.path);
  expect(files).toEqual(expect.arrayContaining(['package.json', 'README.md', 'dist/index.js', 'dist/index.d.ts', 'dist/openapi-types.d.ts', 'dist/paging.js', 'dist/errors.d.ts']));
  expect(files.filter((file) => !file.startsWith('dist/') && !['package.json', 'README.md'].includes(file))).toEqual([]);
  const document = JSON.parse(readFileSync(path.join(root, 'apps/gateway/src/openapi/openapi.json'), 'utf8')) as { info: { version: string } };
  expect(packed.version.split('.').slice(0, 2)).toEqual(document.info.version.split('.').slice(0, 2));
});

it('type-checks every code block of the README, and refuses an undocumented code, in a project outside the repository', () => {
  const readme = readFileSync(path.join(sdkDir, 'README.md'), 'utf8');
  const blocks = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map(([, code]) => code);
  expect(blocks.length).toBeGreaterThanOrEqual(2);
  blocks.forEach((code, i) => writeFileSync(path.join(scratch, `readme-${i + 1}.ts`), `${code}\nexport {};\n`));
  writeFileSync(
    path.join(scratch, 'typed-errors.ts'),
    `import { ApiRequestError, type GraphQLErrorCode } from '@platform/sdk';
declare const error: ApiRequestError;
if (error.is('OUT_OF_STOCK')) { const code: 'OUT_OF_STOCK' = error.code; void code; }
// @ts-expect-error a code the document does not list is no ErrorCode
error.is('NO_SUCH_CODE');
const limit: GraphQLErrorCode = 'QUERY_DEPTH_LIMIT_EXCEEDED';
// @ts-expect-error a code of the REST format alone is no GraphQLErrorCode
const rest: GraphQLErrorCode = 'OUT_OF_STOCK';
void [limit, rest];
export {};
`,
  );
  writeFileSync(
    path.join(scratch, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { strict: true, noEmit: true, target: 'ES2022', module: 'nodenext', moduleResolution: 'nodenext', lib: ['ES2022', 'DOM'], types: [], skipLibCheck: false }, include: ['*.ts'] }),
  );
  let output = '';
  try {
    output = run(process.execPath, [tsc, '-p', scratch], scratch);
  } catch (error) {
    output = `${(error as { stdout?: string }).stdout ?? ''}${(error as { stderr?: string }).stderr ?? ''}` || String(error);
  }
  expect(output).toBe('');
});

it('loads in Node and pages through a list with allItems', () => {
  // Two pages from a fetch of our own: the SDK sends the first nextCursor back and stops at null.
  const script = `
const { allItems, createApiClient, errorCodes, graphqlErrorCodes, isGraphQLErrorCode, ApiRequestError, orThrow } = require('@platform/sdk');
const asked = [];
const fetch = async (request) => {
  const url = new URL(request.url);
  asked.push(url.pathname + url.search);
  const page = url.searchParams.get('cursor') ? { items: [{ id: 'b' }], nextCursor: null } : { items: [{ id: 'a' }], nextCursor: 'next' };
  return new Response(JSON.stringify(page), { headers: { 'content-type': 'application/json' } });
};
const api = createApiClient('http://127.0.0.1:1', { token: 't', fetch });
(async () => {
  const ids = [];
  for await (const order of allItems((cursor) => api.GET('/orders', { params: { query: { size: 1, cursor } } }))) ids.push(order.id);
  const refused = new Response(JSON.stringify({ code: 'OUT_OF_STOCK', message: 'Sold out.', traceId: 'abc', errors: [] }), { status: 409 });
  let thrown;
  try { orThrow({ error: await refused.clone().json(), response: refused }); } catch (error) { thrown = error; }
  console.log(JSON.stringify({ ids, asked, known: errorCodes.includes('OUT_OF_STOCK'), graphql: [graphqlErrorCodes.includes('QUERY_DEPTH_LIMIT_EXCEEDED'), isGraphQLErrorCode('GRAPHQL_PARSE_FAILED'), isGraphQLErrorCode('OUT_OF_STOCK')], error: [thrown instanceof ApiRequestError, thrown.code, thrown.status, thrown.is('OUT_OF_STOCK')] }));
})();
`;
  expect(JSON.parse(run(process.execPath, ['-e', script], scratch))).toEqual({
    ids: ['a', 'b'],
    asked: ['/v1/orders?size=1', '/v1/orders?size=1&cursor=next'],
    known: true,
    graphql: [true, true, false],
    error: [true, 'OUT_OF_STOCK', 409, true],
  });
});
