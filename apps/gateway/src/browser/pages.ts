// Pages for people: the API reference at /docs (Redoc) rendered from /v1/openapi.json, and a
// GraphQL IDE (GraphiQL) at GET /v1/graphql for a browser, outside production. Both run from
// files bundled from npm and served here, never from a CDN, so they work offline and under a
// Content-Security-Policy that allows this origin only.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
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

const REFERENCE_PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Order platform API reference</title>
  <link rel="icon" href="data:,">
</head>
<body>
  <redoc spec-url="/v1/openapi.json" hide-download-button="false"></redoc>
  <script src="/docs/assets/redoc.standalone.js"></script>
</body>
</html>
`;

const IDE_PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Order platform GraphQL</title>
  <link rel="icon" href="data:,">
  <link rel="stylesheet" href="/docs/assets/graphiql.min.css">
  <style>body { margin: 0; height: 100vh; } #graphiql { height: 100vh; }</style>
</head>
<body>
  <div id="graphiql">Loading GraphiQL…</div>
  <script src="/docs/assets/react.production.min.js"></script>
  <script src="/docs/assets/react-dom.production.min.js"></script>
  <script src="/docs/assets/graphiql.min.js"></script>
  <script src="/docs/assets/graphiql-start.js"></script>
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

/** Reads every asset once: from `builtDir` (beside main.js in a build), else from node_modules (tests, tools). */
function loadAssets(builtDir: string | undefined): Map<string, Buffer> {
  const assets = new Map<string, Buffer>();
  for (const [name, npmPath] of Object.entries(pageAssets)) assets.set(name, readFileSync(builtDir ? path.join(builtDir, name) : installedFile(npmPath)));
  assets.set('graphiql-start.js', Buffer.from(IDE_START));
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
  const router = express.Router({ caseSensitive: true, strict: true });
  router.get(['/docs', '/docs/'], page(REFERENCE_PAGE));
  router.get('/docs/assets/:name', (req, res, next) => {
    const asset = assets.get(req.params.name);
    if (!asset) return next(); // → 404 in the error format
    res.set({ 'cache-control': 'public, max-age=3600', 'x-content-type-options': 'nosniff' }).type(ASSET_TYPES[path.extname(req.params.name)]).send(asset);
  });
  if (options.graphqlIde) {
    const ide = page(IDE_PAGE);
    // A browser asks for HTML first; GraphQL clients ask for JSON and go on to the graph.
    router.get('/v1/graphql', (req, res, next) => (req.accepts(['application/json', 'application/graphql-response+json', 'text/html']) === 'text/html' ? ide(req, res, next) : next()));
  }
  return router;
}
