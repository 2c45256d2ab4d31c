// Pages for people: the API reference at /docs (Redoc) rendered from /v1/openapi.json, and a
// GraphQL IDE (GraphiQL) at GET /v1/graphql for a browser, outside production. Both run from
// files bundled from npm and served here, never from a CDN, so they work offline and under a
// Content-Security-Policy that allows this origin only.
//
// The pages name each script and style by a version, the hash of its content
// (`/docs/assets/<hash>/<name>`): such a URL never changes meaning, so browsers and caches keep it
// for a year without asking again (`immutable`). Every asset carries its hash as a strong ETag,
// so a client that asks again with If-None-Match gets an empty 304 instead of the file; the
// unversioned names still answer, cached only after revalidation. The requests count against the
// client address's rate limit (app.ts).
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ApiError } from '@platform/errors';
import express, { type RequestHandler } from 'express';
import pageAssets from './page-assets.json';

/** Served file name → where npm installs it. The build copies them beside main.js (tools/build/build-app.mjs). */
export type PageAsset = keyof typeof pageAssets;

const ASSET_TYPES: Record<string, string> = { '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8' };

/**
 * Scripts from this origin only, and no inline script: Redoc starts from its `<redoc>` element,
 * GraphiQL from graphiql-start.js. Both style through inline `style` attributes and elements.
 */
const PAGE_POLICY = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; worker-src 'self' blob:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/** A year: the longest a cache is asked to keep anything (RFC 9111 suggests no more). */
const IMMUTABLE = 'public, max-age=31536000, immutable';

interface Asset {
  content: Buffer;
  /** The first 16 hex digits of its SHA-256: its version in URLs, and its ETag. */
  hash: string;
}

const referencePage = (url: (name: string) => string) => `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Order platform API reference</title>
  <link rel="icon" href="data:,">
</head>
<body>
  <redoc spec-url="/v1/openapi.json" hide-download-button="false"></redoc>
  <script src="${url('redoc.standalone.js')}"></script>
</body>
</html>
`;

const idePage = (url: (name: string) => string) => `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Order platform GraphQL</title>
  <link rel="icon" href="data:,">
  <link rel="stylesheet" href="${url('graphiql.min.css')}">
  <style>body { margin: 0; height: 100vh; } #graphiql { height: 100vh; }</style>
</head>
<body>
  <div id="graphiql">Loading GraphiQL…</div>
  <script src="${url('react.production.min.js')}"></script>
  <script src="${url('react-dom.production.min.js')}"></script>
  <script src="${url('graphiql.min.js')}"></script>
  <script src="${url('graphiql-start.js')}"></script>
</body>
</html>
`;

/** Starts GraphiQL against this gateway; the token goes in the Headers tab, and is kept in this browser only. */
const IDE_START = `'use strict';
var EXAMPLE = '# Get a token with POST /v1/tokens, then put it in the Headers tab:\\n# {"Authorization": "Bearer <token>"}\\n\\nquery MyOrders {\\n  orders(first: 5) {\\n    id\\n    amount\\n    user { name }\\n  }\\n}\\n';
var fetcher = GraphiQL.createFetcher({ url: '/v1/graphql' });
ReactDOM.createRoot(document.getElementById('graphiql')).render(
  React.createElement(GraphiQL, { fetcher: fetcher, defaultQuery: EXAMPLE, defaultHeaders: '{"Authorization": "Bearer "}', shouldPersistHeaders: true, isHeadersEditorEnabled: true })
);
`;

/**
 * An installed package file, looked up the way Node looks up packages (the nearest node_modules
 * upwards). Not require.resolve: packages' `exports` maps hide files such as react's UMD build.
 */
function installedFile(npmPath: string): string {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', npmPath);
    if (existsSync(candidate)) return candidate;
    if (dir === path.dirname(dir)) throw new Error(`${npmPath} is not installed: run npm install`);
  }
}

/** Reads every asset once, and hashes it: from `builtDir` (beside main.js in a build), else from node_modules (tests, tools). */
function loadAssets(builtDir: string | undefined): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  const add = (name: string, content: Buffer) => assets.set(name, { content, hash: createHash('sha256').update(content).digest('hex').slice(0, 16) });
  for (const [name, npmPath] of Object.entries(pageAssets)) add(name, readFileSync(builtDir ? path.join(builtDir, name) : installedFile(npmPath)));
  add('graphiql-start.js', Buffer.from(IDE_START));
  return assets;
}

function page(html: string): RequestHandler {
  return (_req, res) => {
    res.set({ 'content-security-policy': PAGE_POLICY, 'cache-control': 'no-cache' }).type('html').send(html);
  };
}

export interface PagesOptions {
  /** Where the build put the assets; unset: node_modules. */
  assetsDir?: string;
  /** The GraphQL IDE: never in production, where introspection is off too. */
  graphqlIde: boolean;
}

export function browserPages(options: PagesOptions): RequestHandler {
  const assets = loadAssets(options.assetsDir);
  const url = (name: string) => `/docs/assets/${assets.get(name)?.hash}/${name}`;
  const router = express.Router({ caseSensitive: true, strict: true });
  router.get(['/docs', '/docs/'], page(referencePage(url)));
  /** One asset, `cacheControl` as its URL allows; 304 when the client holds this version. */
  const serve = (name: string, version: string | undefined, cacheControl: string): RequestHandler => (req, res, next) => {
    const asset = assets.get(name);
    if (!asset || (version !== undefined && version !== asset.hash)) return next(); // → 404 in the error format
    res.set({ 'cache-control': cacheControl, etag: `"${asset.hash}"`, 'x-content-type-options': 'nosniff' }).type(ASSET_TYPES[path.extname(name)]);
    if (req.fresh) return void res.status(304).end();
    res.send(asset.content);
  };
  router.get('/docs/assets/:version/:name', (req, res, next) => serve(req.params.name, req.params.version, IMMUTABLE)(req, res, next));
  router.get('/docs/assets/:name', (req, res, next) => serve(req.params.name, undefined, 'public, no-cache')(req, res, next));
  if (options.graphqlIde) {
    const ide = page(idePage(url));
    // A browser asks for HTML first; GraphQL clients ask for JSON and go on to the graph.
    // Every method is heard here (express would otherwise answer an OPTIONS itself), and only a
    // GET or HEAD may be the IDE's: the graph answers the rest.
    router.all('/v1/graphql', (req, res, next) => {
      if (req.method !== 'GET' && req.method !== 'HEAD') return next();
      res.vary('Accept'); // one URL, the IDE or the graph's answer by Accept: caches must keep them apart
      return req.accepts(['application/json', 'application/graphql-response+json', 'text/html']) === 'text/html' ? ide(req, res, next) : next();
    });
  }
  // The pages are read-only: any other method is 405 in the error format. (Left to express, an
  // OPTIONS got its own 200 text/plain "GET, HEAD", and TRACE a 404.)
  // (A GET of an asset that does not exist goes on to the 404.)
  router.all(['/docs', '/docs/', '/docs/assets/:version/:name', '/docs/assets/:name'], (req, _res, next) =>
    next(req.method === 'GET' || req.method === 'HEAD' ? undefined : new ApiError('METHOD_NOT_ALLOWED', `${req.method} is not supported here.`, { headers: { Allow: 'GET, HEAD' } })),
  );
  return router;
}
