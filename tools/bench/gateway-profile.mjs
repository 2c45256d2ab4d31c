#!/usr/bin/env node
// Where a gateway request's CPU time goes, by pipeline stage: the gateway runs under
// `node --cpu-prof` with every feature on (JWT auth and the revocation check, Redis rate limits,
// metrics, request logs at info, usage recording, tracing to an OTLP endpoint at 10 %), 50
// connections call it for the given seconds after a warm-up, and the samples taken while they did
// are grouped by the stage of the innermost frame that belongs to one (a frame of Node's own
// internals or of express's chain is charged to the stage that called it). Loopback only.
// `minimal` profiles the bench's minimal proxy (gateway.mjs's floor of a hop) instead, in front of the
// same catalog: the CPU a bare hop costs on this host, for the same table. `subgraphs` puts the
// GraphQL load on and profiles the services behind it (orders, users and catalog, one table each);
// `orders` does the same for REST GET /v1/orders/{id} (orders-service's table).
// Usage: node tools/bench/gateway-profile.mjs [seconds, default 20] [rest|graphql|minimal|subgraphs|orders, default rest] [profile.cpuprofile to analyse only]
// BENCH_PORT_OFFSET moves the stack's ports (default that of stack.mjs).
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import autocannon from 'autocannon';
import { benchCaller, FEATURES_ENV, orderSummaryQuery, port, redisUrl, root, startFeatureStack, startMinimalProxy, table } from './stack.mjs';

process.env.APOLLO_TELEMETRY_DISABLED = 'true';
const seconds = Number(process.argv[2] ?? 20);
const mode = process.argv[3] ?? 'rest';
const given = process.argv[4];
const WARM_UP_SECONDS = 5;

/** Packages, by the stage their code serves (the first segment of the path below node_modules). */
const PACKAGE_STAGES = {
  'request context and logging': ['pino', '@pinojs/redact', 'sonic-boom', 'fast-redact', 'thread-stream', 'quick-format-unescaped', 'atomic-sleep', 'on-exit-leak-free', 'safe-stable-stringify', 'fast-safe-stringify'],
  'metrics and caller metrics': ['prom-client', 'tdigest', 'bintrees'],
  CORS: ['cors', 'vary'],
  'credentials and revocation': ['jose'],
  'rate limiting (Redis)': ['ioredis', 'redis-parser', 'denque', 'cluster-key-slot', 'standard-as-callback', 'redis-errors', '@ioredis'],
  compression: ['compression', 'compressible', 'negotiator', 'accepts', 'bytes', 'safe-buffer', 'on-headers'],
  tracing: ['@opentelemetry', 'protobufjs', 'shimmer', 'require-in-the-middle', 'import-in-the-middle', '@protobufjs', 'long'],
  'GraphQL (planning, execution)': ['@apollo', 'graphql', '@graphql-tools', 'graphql-tag', 'lodash.sortby', '@whatwg-node', 'dataloader', 'lru-cache'],
  'express chain (router, req/res helpers)': ['express', 'router', 'finalhandler', 'on-finished', 'parseurl', 'path-to-regexp', 'proxy-addr', 'forwarded', 'ipaddr.js', 'qs', 'content-type', 'type-is', 'mime-types', 'mime-db', 'send', 'depd', 'encodeurl', 'escape-html', 'fresh', 'range-parser', 'statuses', 'utils-merge', 'merge-descriptors', 'methods', 'setprototypeof', 'cookie', 'cookie-signature', 'etag', 'content-disposition', 'debug', 'ms', 'body-parser', 'raw-body', 'iconv-lite', 'unpipe', 'http-errors', 'destroy', 'inherits', 'toidentifier', 'media-typer', 'side-channel', 'call-bind', 'get-intrinsic', 'has-symbols', 'function-bind', 'object-inspect', 'es-errors', 'hasown', 'dunder-proto', 'math-intrinsics', 'es-object-atoms', 'gopd', 'call-bound', 'side-channel-list', 'side-channel-map', 'side-channel-weakmap', 'get-proto', 'is-promise'],
  'validation (zod)': ['zod'],
  'database (Prisma, pg)': ['@prisma/client', '@prisma/adapter-pg', '@prisma/client-runtime-utils', '@prisma/driver-adapter-utils', '@prisma/debug', 'pg', 'pg-protocol', 'pg-pool', 'pg-types', 'pg-int8', 'postgres-array', 'postgres-bytea', 'postgres-date', 'postgres-interval', 'pg-connection-string', 'pgpass', 'split2', 'decimal.js', 'bignumber.js'],
  'usage recording': [],
  proxying: ['undici'],
};
const packageStage = new Map(Object.entries(PACKAGE_STAGES).flatMap(([stage, packages]) => packages.map((name) => [name, stage])));

/** Workspace sources, by file (and, where one file holds several stages, by the exported function a line falls in). */
const FILE_STAGES = [
  [/libs\/service-kit\/src\/listen\.ts$/, 'Node HTTP server and sockets (no stage above)'],
  [/libs\/service-kit\/src\/in-order\.ts$/, 'express chain (router, req/res helpers)'],
  [/libs\/service-kit\/src\/(request-context|request-log|logger|request-state)\.ts$/, 'request context and logging'],
  [/libs\/service-kit\/src\/metrics\.ts$|apps\/gateway\/src\/callers\//, 'metrics and caller metrics'],
  [/libs\/service-kit\/src\/(health|json-body)\.ts$/, 'request checks (health, well-formed, size, accept, JSON)'],
  [/apps\/gateway\/src\/browser\/cross-origin\.ts$/, 'CORS'],
  [/apps\/gateway\/src\/browser\//, 'docs pages'],
  [/apps\/gateway\/src\/routing\//, 'routing'],
  [/apps\/gateway\/src\/auth\/|libs\/auth\//, 'credentials and revocation'],
  [/apps\/gateway\/src\/rate-limit\//, 'rate limiting (Redis)'],
  [/apps\/gateway\/src\/proxy\/|libs\/outgoing-calls\//, 'proxying'],
  [/libs\/tracing\//, 'tracing'],
  [/apps\/gateway\/src\/usage\/|libs\/usage\//, 'usage recording'],
  [/apps\/gateway\/src\/deprecations\/|libs\/deprecations\//, 'deprecations'],
  [/libs\/errors\//, 'request checks (health, well-formed, size, accept, JSON)'],
  [/libs\/graphql-gateway\/|libs\/graphql-kit\//, 'GraphQL (planning, execution)'],
  // A service's (subgraphs, orders modes).
  [/libs\/db\/|apps\/[^/]+\/src\/generated\/prisma\//, 'database (Prisma, pg)'],
  [/apps\/(?!gateway\/)[^/]+\/src\//, "the service's own code (routes, resolvers, service, repository)"],
];
/** pipeline.ts's steps, by the name they are exported under. */
const PIPELINE_STEPS = {
  dropInternalHeaders: 'request checks (health, well-formed, size, accept, JSON)',
  strictTransportSecurity: 'request checks (health, well-formed, size, accept, JSON)',
  requireWellFormedRequest: 'request checks (health, well-formed, size, accept, JSON)',
  limitBodySize: 'request checks (health, well-formed, size, accept, JSON)',
  receiveBody: 'request checks (health, well-formed, size, accept, JSON)',
  hasBody: 'request checks (health, well-formed, size, accept, JSON)',
  routeRequest: 'routing',
  identifyCaller: 'credentials and revocation',
  requireApiKeyScope: 'credentials and revocation',
  requireAuthentication: 'credentials and revocation',
  forgetCredentialsAfterUserWrite: 'credentials and revocation',
  keepAccountsFromApiKeys: 'credentials and revocation',
  revokeApiKeysAfterWrite: 'credentials and revocation',
  dispatch: 'proxying',
};

const NODE_IO = 'Node HTTP server and sockets (no stage above)';
/** Stages whose code wraps Node's (res.write and res.end, http.request, express's res.send): Node's work under them goes to what called them, else here. */
const WRAPPERS = { compression: NODE_IO, tracing: 'tracing', 'express chain (router, req/res helpers)': NODE_IO };
/** Node's functions those wrappers stand in front of: http.request, res.end…, and the stream and HTTP listeners a bound emitter calls. */
const WRAPPED = new Set(['request', 'get', 'end', 'write', 'writeHead', '_implicitHeader', 'flushHeaders', 'emit']);
const handsOn = ({ url, functionName }) => url.startsWith('node:') && (WRAPPED.has(functionName) || /^node:(internal\/streams\/|_http_|net$)/.test(url));

function workspaceStage(source, line, sourcesText) {
  if (source.endsWith('apps/gateway/src/pipeline.ts')) {
    const text = sourcesText(source);
    let stage = 'request checks (health, well-formed, size, accept, JSON)';
    for (const [at, name] of text) if (at <= line) stage = PIPELINE_STEPS[name] ?? stage;
    return stage;
  }
  if (source.endsWith('apps/gateway/src/app.ts')) return 'pipeline assembly (app.ts)';
  return FILE_STAGES.find(([pattern]) => pattern.test(source))?.[1] ?? `other workspace code (${source.replace(/^.*?\/(apps|libs)\//, '$1/')})`;
}

/** Groups the samples taken between `from` and `to` (µs, the profile's clock) by stage. */
export function stagesOf(profile, { from = -Infinity, to = Infinity, bundle } = {}) {
  const map = bundle ? new SourceMap(JSON.parse(readFileSync(`${bundle}.map`, 'utf8'))) : undefined;
  const exportsOf = new Map();
  const sourcesText = (source) => {
    if (!exportsOf.has(source)) {
      const file = path.resolve(path.dirname(bundle), source);
      const lines = readFileSync(file, 'utf8').split('\n');
      exportsOf.set(source, lines.flatMap((text, at) => { const name = /^(?:export )?(?:async )?(?:function|const) (\w+)/.exec(text)?.[1]; return name ? [[at, name]] : []; }));
    }
    return exportsOf.get(source);
  };
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const stageOfFrame = new Map();
  const frameStage = (node) => {
    if (stageOfFrame.has(node.id)) return stageOfFrame.get(node.id);
    const { url, functionName, lineNumber, columnNumber } = node.callFrame;
    let stage;
    if (functionName === '(garbage collector)') stage = 'garbage collection';
    else if (functionName === '(idle)') stage = 'idle';
    else if (functionName === '(program)') stage = '(program: V8 and native, unattributed)';
    else if (url.includes('node_modules/')) {
      const [first, second] = url.split('node_modules/').pop().split('/');
      const name = first.startsWith('@') ? `${first}/${second}` : first;
      stage = packageStage.get(name) ?? packageStage.get(first) ?? `other package (${name})`;
    } else if (bundle && url.endsWith(path.basename(bundle)) && map) {
      const entry = map.findEntry(lineNumber, columnNumber);
      stage = entry?.originalSource ? workspaceStage(entry.originalSource, entry.originalLine, sourcesText) : undefined;
    }
    stageOfFrame.set(node.id, stage);
    return stage;
  };
  const totals = new Map();
  const leaves = new Map();
  let time = profile.startTime;
  let counted = 0;
  for (const [index, id] of profile.samples.entries()) {
    time += profile.timeDeltas[index];
    if (time < from || time > to) continue;
    const delta = profile.timeDeltas[index + 1] ?? 0;
    const node = nodes.get(id);
    let stage;
    const leaf = node.callFrame.url;
    // Node's own work (a socket write, a ClientRequest) under a wrapper of compression or tracing
    // is the work of what called the wrapper: the proxy's call, the answer's write.
    // Only Node's own functions the wrapper hands on to (http.request, res.end…): the wrapper's
    // own calls into Node (the instrumentation parsing a URL) stay the wrapper's.
    const nodeWork = (leaf.startsWith('node:') || leaf === '') && !node.callFrame.functionName.startsWith('(');
    let wrapper;
    const passed = new Set();
    let callee;
    for (let at = node; at && !stage; callee = at, at = nodes.get(parent.get(at.id))) {
      stage = frameStage(at);
      if (nodeWork && stage in WRAPPERS && (passed.has(stage) || (callee && handsOn(callee.callFrame)))) {
        wrapper ??= stage;
        passed.add(stage);
        stage = undefined;
      }
    }
    stage ??= wrapper ? WRAPPERS[wrapper] : leaf.startsWith('node:') || leaf === '' ? NODE_IO : 'other';
    totals.set(stage, (totals.get(stage) ?? 0) + delta);
    counted += delta;
    // The leaf frames each stage's time is spent in, for PROFILE_DETAIL.
    const { functionName, url: leafUrl, lineNumber } = node.callFrame;
    const leafKey = `${functionName || '(anonymous)'} ${leafUrl.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*\//, '')}:${lineNumber + 1}`;
    const byLeaf = (leaves.get(stage) ?? leaves.set(stage, new Map()).get(stage));
    byLeaf.set(leafKey, (byLeaf.get(leafKey) ?? 0) + delta);
  }
  return { totals, counted, leaves };
}

export function report({ totals, leaves }, requests, title) {
  const busy = [...totals].filter(([stage]) => stage !== 'idle');
  const total = busy.reduce((sum, [, us]) => sum + us, 0);
  const rows = busy
    .sort((a, b) => b[1] - a[1])
    .map(([stage, us]) => ({ stage, 'µs per request': (us / requests).toFixed(1), share: `${((us / total) * 100).toFixed(1)} %` }));
  rows.push({ stage: 'all (CPU busy)', 'µs per request': (total / requests).toFixed(1), share: '100 %' });
  console.log(`\n${title}\n\n${table(rows)}`);
  const detail = Number(process.env.PROFILE_DETAIL ?? 0);
  // PROFILE_STAGE=<text>: the leaves of the stages whose name contains it, whatever their rank.
  const shown = process.env.PROFILE_STAGE ? busy.filter(([stage]) => stage.includes(process.env.PROFILE_STAGE)) : busy.slice(0, detail);
  for (const [stage] of shown) {
    const top = [...leaves.get(stage)].sort((a, b) => b[1] - a[1]).slice(0, 12);
    console.log(`\n${stage}:\n${top.map(([leaf, us]) => `  ${(us / requests).toFixed(1).padStart(7)} µs  ${leaf}`).join('\n')}`);
  }
}

/** Which app a profile is of: the bundle its frames run (the minimal proxy has none). */
function appOf(profile) {
  return profile.nodes.map((node) => /dist\/apps\/([^/]+)\/main\.js$/.exec(node.callFrame.url)?.[1]).find(Boolean);
}

// Run as a script (service-pipeline.mjs imports stagesOf and report).
if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (given) {
    const profile = JSON.parse(readFileSync(given, 'utf8'));
    // WINDOW=from,to (µs, printed by a run) keeps the samples of the measured load alone.
    const [from, to] = (process.env.WINDOW ?? '-Infinity,Infinity').split(',').map(Number);
    const app = appOf(profile);
    report(stagesOf(profile, { from, to, bundle: app && path.join(root, `dist/apps/${app}/main.js`) }), Number(process.env.REQUESTS ?? 1), `${given} (${app ?? 'no app bundle'}): µs per ${process.env.REQUESTS ?? 1} requests`);
  } else {
    const profileDir = mkdtempSync(path.join(tmpdir(), 'gateway-profile-'));
    const profiling = ['--cpu-prof', `--cpu-prof-dir=${profileDir}`];
    const services = mode === 'subgraphs' || mode === 'orders';
    const stack = await startFeatureStack({ apps: ['inventory-service', 'catalog-service', 'users-service', 'orders-service'], nodeFlags: services ? profiling : [] });
    let gateway;
    let minimal;
    try {
      const upstream = (base) => `http://127.0.0.1:${port(base)}`;
      gateway = spawn(process.execPath, [...JSON.parse(readFileSync(path.join(root, 'tools/start/node-flags.json'), 'utf8')), ...(mode === 'rest' || mode === 'graphql' ? profiling : []), path.join(root, 'dist/apps/gateway/main.js')], {
        cwd: root,
        env: { ...process.env, NODE_ENV: 'production', ...FEATURES_ENV, JWT_SECRET: stack.jwtSecret, REDIS_URL: redisUrl, RATE_LIMIT_POINTS: '100000000', RATE_LIMIT_TOKENS_IP_POINTS: '100000', PORT: String(port(8080)), METRICS_PORT: String(port(9464)), USERS_URL: upstream(3001), ORDERS_URL: upstream(3002), CATALOG_URL: upstream(3003), INVENTORY_URL: upstream(3004), USAGE_KEY_PREFIX: `usage:bench:${process.pid}` },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      // Request logs are read as a log shipper would, and dropped.
      gateway.stdout.resume();
      const base = `http://127.0.0.1:${port(8080)}`;
      const { auth, product, order } = await benchCaller(base);
      if (mode === 'minimal') minimal = await startMinimalProxy(port(9001), port(3003), profiling);
      const request =
        mode === 'graphql' || mode === 'subgraphs'
          ? { url: `${base}/v1/graphql`, method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ query: orderSummaryQuery(order.id) }) }
          : mode === 'minimal'
            ? { url: `http://127.0.0.1:${port(9001)}/products/${product.id}`, headers: auth }
            : mode === 'orders'
              ? { url: `${base}/v1/orders/${order.id}`, headers: auth }
              : { url: `${base}/v1/products/${product.id}`, headers: auth };
      await autocannon({ ...request, connections: 50, duration: WARM_UP_SECONDS });
      // Every process reads CLOCK_MONOTONIC: V8's profile clock and hrtime agree (µs).
      const from = Number(process.hrtime.bigint() / 1000n);
      const result = await autocannon({ ...request, connections: 50, duration: seconds });
      const to = Number(process.hrtime.bigint() / 1000n);
      if (result.non2xx || result.errors) throw new Error(`${result.non2xx} non-2xx, ${result.errors} errors`);
      // A profile is written when its process exits, and a large one takes a moment after start.js has gone.
      if (services) {
        // The gateway first: the services' graceful stop would otherwise wait out its open connections.
        await new Promise((resolve) => {
          gateway.once('exit', resolve);
          gateway.kill('SIGTERM');
        });
        gateway = undefined;
        await stack.stop();
        const written = () => readdirSync(profileDir).filter((file) => file.endsWith('.cpuprofile')).length;
        for (const deadline = Date.now() + 30_000; written() < 4 && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 200));
        await new Promise((resolve) => setTimeout(resolve, 1_000)); // the last one's writing to end
      } else {
        const profiled = minimal ?? gateway;
        await new Promise((resolve) => {
          profiled.once('exit', resolve);
          profiled.kill('SIGTERM');
        });
        if (minimal) minimal = undefined;
        else gateway = undefined;
      }
      const load = { graphql: 'GraphQL order(id) through the gateway', subgraphs: 'GraphQL order(id) through the gateway', minimal: 'GET /products/{id} through the minimal proxy', orders: 'GET /v1/orders/{id} through the gateway' }[mode] ?? 'GET /v1/products/{id} through the gateway';
      let counted = 0;
      for (const name of readdirSync(profileDir).filter((file) => file.endsWith('.cpuprofile')).sort()) {
        const file = path.join(profileDir, name);
        const profile = JSON.parse(readFileSync(file, 'utf8'));
        const app = appOf(profile);
        // The services the load reaches: the three subgraphs, or orders-service alone.
        if (services && !(mode === 'orders' ? ['orders-service'] : ['orders-service', 'users-service', 'catalog-service']).includes(app)) continue;
        const stages = stagesOf(profile, { from, to, bundle: app && path.join(root, `dist/apps/${app}/main.js`) });
        report(stages, result.requests.total, `${app ?? 'the minimal proxy'}, ${load}, 50 connections, ${seconds} s, ${result.requests.total} requests (${Math.round(result.requests.average)} req/s), profile ${file}, ${new Date().toISOString()}`);
        console.log(`\nCPU-busy share of the window: ${((stages.counted - (stages.totals.get('idle') ?? 0)) / (to - from) * 100).toFixed(0)} % (of one core)`);
        counted++;
      }
      if (!counted) throw new Error(`no profile in ${profileDir}`);
      console.log(`\nREQUESTS=${result.requests.total} WINDOW=${from},${to} to analyse one again`);
    } finally {
      gateway?.kill('SIGTERM');
      minimal?.kill('SIGTERM');
      await stack.stop();
    }
  }
}
