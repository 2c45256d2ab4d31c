// The CPU one GraphQL document can make the gateway spend before it is refused: the gateway's
// parse path (documentCache with the gateway's limits, as federation.ts builds it) on the
// documents that cost the most per byte, the revision given against the working tree, side by
// side. Each document is new to the cache every time (a refused one is never kept; a parsed one
// is parsed by a fresh cache), as an attacker would send it. In process: no HTTP, no JSON body
// reading, so the figures are the parse path alone.
// Usage: node tools/bench/graphql-documents.mjs [before revision, default HEAD] [repeats, default 15]
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadTs } from '../ts-run.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const [revision = 'HEAD', repeatsArg = '15'] = process.argv.slice(2);
const repeats = Number(repeatsArg);
const kit = path.join(root, 'libs/graphql-kit/src');

/** The gateway's limits, read from federation.ts so the bench follows them. */
function gatewayLimits(source) {
  const number = (name) => {
    const match = new RegExp(`const ${name} = ([0-9_]+);`).exec(source);
    return match ? Number(match[1].replaceAll('_', '')) : undefined;
  };
  return { maxTokens: number('MAX_TOKENS'), maxSourceLength: number('MAX_DOCUMENT_LENGTH') };
}

/** documentCache as it was at `revision` (its own file, with its sibling imports pointed at today's). */
async function documentCacheAt(rev) {
  const text = execFileSync('git', ['show', `${rev}:libs/graphql-kit/src/document-cache.ts`], { cwd: root, encoding: 'utf8' });
  const federation = execFileSync('git', ['show', `${rev}:libs/graphql-gateway/src/federation.ts`], { cwd: root, encoding: 'utf8' });
  const dir = path.join(root, 'tmp/ts-run');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `document-cache-${rev.replace(/[^A-Za-z0-9]/g, '_')}.ts`);
  writeFileSync(file, text.replaceAll(`from './`, `from '${kit}/`));
  return { documentCache: (await loadTs(file)).documentCache, limits: gatewayLimits(federation) };
}

async function documentCacheNow() {
  const { readFileSync } = await import('node:fs');
  return { documentCache: (await loadTs(path.join(kit, 'document-cache.ts'))).documentCache, limits: gatewayLimits(readFileSync(path.join(root, 'libs/graphql-gateway/src/federation.ts'), 'utf8')) };
}

const MIB = 1024 * 1024;
/** One-line comments, then a character no token starts with: no token at all, so no token limit stops it. */
const comments = (length) => `${'# c\n'.repeat(Math.floor((length - 1) / 4))}~`;
/** One block string of short lines, then a lexical error: one token. */
const blockString = (length) => `{ a(b: """${'x\n'.repeat(Math.floor((length - 20) / 2))}""") } ~`;
/** A legal operation near the token limit: a field list parsed and kept. */
const wideOperation = (tokens) => `query Wide {\n${Array.from({ length: tokens - 5 }, (_, i) => `  field${i}`).join('\n')}\n}`;

function cpuMsPerDocument(documentCache, limits, text) {
  const samples = [];
  for (let i = 0; i < repeats; i++) {
    const cache = documentCache(limits);
    const started = process.cpuUsage();
    let code = 'parsed';
    try {
      cache.parse(text);
    } catch (error) {
      code = error?.extensions?.code ?? String(error);
    }
    const spent = process.cpuUsage(started);
    samples.push({ ms: (spent.user + spent.system) / 1000, code });
  }
  samples.sort((a, b) => a.ms - b.ms);
  return samples[Math.floor(samples.length / 2)];
}

const before = await documentCacheAt(revision);
const now = await documentCacheNow();
console.log(`limits before (${revision}): ${JSON.stringify(before.limits)}; now: ${JSON.stringify(now.limits)}; median of ${repeats} per cell, CPU ms (user + system)`);
const cases = [
  ['1 MiB of one-line comments, then a lexical error', comments(MIB)],
  ['1 MiB block string of short lines, then a lexical error', blockString(MIB)],
  ['32 KiB of one-line comments, then a lexical error', comments(32 * 1024)],
  ['32 KiB block string of short lines, then a lexical error', blockString(32 * 1024)],
  ['legal operation of 1,995 tokens (fresh cache)', wideOperation(1_995)],
];
// Every case once on both sides first: the JIT warm for each, so the first rows pay for no compiling.
for (const [, text] of cases) for (const side of [before, now]) cpuMsPerDocument(side.documentCache, side.limits, text);
console.log('| document | chars | before ms | before answer | now ms | now answer |');
console.log('|---|---|---|---|---|---|');
for (const [name, text] of cases) {
  // Alternate, so neither side runs only on a warmer process.
  const a = cpuMsPerDocument(before.documentCache, before.limits, text);
  const b = cpuMsPerDocument(now.documentCache, now.limits, text);
  console.log(`| ${name} | ${text.length.toLocaleString('en')} | ${a.ms.toFixed(1)} | ${a.code} | ${b.ms.toFixed(1)} | ${b.code} |`);
}
