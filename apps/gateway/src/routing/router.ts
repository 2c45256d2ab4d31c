// Matches a request against the route table: the route, or 405 with the methods the path has,
// or 404. Patterns compile once; a request costs a few regex tests.
import { ApiError } from '@platform/errors';
import type { RouteDefinition } from './route-table';

export interface CompiledRoute extends RouteDefinition {
  regex: RegExp;
  /** Response headers the route always adds (Cache-Control, Deprecation, Sunset, Link). */
  headers: [string, string][];
}

export interface Deprecation {
  pattern: string;
  methods?: string[];
  deprecation: string;
  sunset?: string;
  link?: string;
}

function routeHeaders(route: RouteDefinition): [string, string][] {
  // Answers behind a token (and tokens themselves) are personal: no cache keeps them.
  const headers: [string, string][] = [['Cache-Control', route.cacheable ? 'public, max-age=300' : 'no-store']];
  // RFC 9745: Deprecation is a structured-field date, "@" + epoch seconds.
  if (route.deprecation) headers.push(['Deprecation', `@${Math.floor(Date.parse(route.deprecation) / 1000)}`]);
  if (route.sunset) headers.push(['Sunset', new Date(route.sunset).toUTCString()]);
  if (route.link) headers.push(['Link', `<${route.link}>; rel="deprecation"; type="text/html"`]);
  return headers;
}

export class RouteTable {
  private readonly routes: CompiledRoute[];

  constructor(definitions: RouteDefinition[], deprecations: Deprecation[] = []) {
    this.routes = definitions.map((definition) => {
      const overlay = deprecations.find((d) => d.pattern === definition.pattern && (!d.methods || d.methods.some((m) => definition.methods.includes(m.toUpperCase()))));
      const route = overlay ? { ...definition, deprecation: overlay.deprecation, sunset: overlay.sunset, link: overlay.link } : definition;
      const source = route.pattern.replace(/:[A-Za-z]+/g, '[^/]+');
      return { ...route, regex: new RegExp(`^${source}/?$`), headers: routeHeaders(route) };
    });
  }

  /** The route for `method` and `path` (the path after `/v1`). */
  match(method: string, path: string): CompiledRoute {
    const wanted = method === 'HEAD' ? 'GET' : method;
    const allow = new Set<string>();
    for (const route of this.routes) {
      if (!route.regex.test(path)) continue;
      if (route.methods.includes(wanted)) return route;
      for (const m of route.methods) allow.add(m);
    }
    if (allow.size === 0) throw new ApiError('NOT_FOUND', `No resource at ${method} /v1${path}.`);
    if (allow.has('GET')) allow.add('HEAD');
    throw new ApiError('METHOD_NOT_ALLOWED', `${method} is not supported here.`, { headers: { Allow: [...allow].join(', ') } });
  }
}
