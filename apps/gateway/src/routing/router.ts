// Matches a request against the route table: the route, or 405 with the methods the path has,
// or 404. Patterns compile once; a request costs a few regex tests.
import { ApiError } from '@platform/errors';
import type { Deprecation } from '@platform/deprecations';
import { compileRouteDeprecations, type RouteDeprecations } from '../deprecations/rest-deprecations';
import type { RouteDefinition } from './route-table';

export interface CompiledRoute extends RouteDefinition {
  regex: RegExp;
  /** Response headers the route always adds (Cache-Control). */
  headers: [string, string][];
  /** The deprecation registry's entries for this route, by method, compiled once (none: the route has none). */
  deprecations?: Map<string, RouteDeprecations>;
}

function routeHeaders(route: RouteDefinition): [string, string][] {
  // Answers behind a token (and tokens themselves) are personal: no cache keeps them.
  return [['Cache-Control', route.cacheable ? 'public, max-age=300' : 'no-store']];
}

function routeDeprecations(route: RouteDefinition, entries: readonly Deprecation[]): Map<string, RouteDeprecations> | undefined {
  const byMethod = new Map<string, RouteDeprecations>();
  for (const method of route.methods) {
    const compiled = compileRouteDeprecations(route.pattern, method, entries);
    if (compiled) byMethod.set(method, compiled);
  }
  return byMethod.size > 0 ? byMethod : undefined;
}

export class RouteTable {
  private readonly routes: CompiledRoute[];

  /** `deprecations`: the registry (contracts/deprecations.yaml); each route keeps its own entries. */
  constructor(definitions: RouteDefinition[], deprecations: readonly Deprecation[] = []) {
    this.routes = definitions.map((route) => {
      const source = route.pattern.replace(/:[A-Za-z]+/g, '[^/]+');
      return { ...route, regex: new RegExp(`^${source}/?$`), headers: routeHeaders(route), deprecations: routeDeprecations(route, deprecations) };
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
