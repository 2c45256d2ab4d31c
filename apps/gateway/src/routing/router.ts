// Matches a request against the route table: the route, or 405 with the methods the path has,
// or 404; a version no route is declared for is 404 UNSUPPORTED_VERSION. Each version served gets
// its own compiled list (its own routes, and the earlier versions' routes it did not replace), so
// a request costs a few regex tests whatever the number of versions.
import { ApiError } from '@platform/errors';
import type { Deprecation } from '@platform/deprecations';
import { compileRouteDeprecations, type RouteDeprecations } from '../deprecations/rest-deprecations';
import type { HttpMethod } from '@platform/endpoints';
import type { ApiVersion, RouteDefinition } from './route-table';

export interface CompiledRoute extends RouteDefinition {
  /** The version the route was declared for (its service serves it at that version's path). */
  version: ApiVersion;
  /** The version of the path it is served under here: its own, or a later one that kept it. */
  servedAs: ApiVersion;
  regex: RegExp;
  /** Response headers the route always adds (Cache-Control). */
  headers: [string, string][];
  /** The deprecation registry's entries for this route under `servedAs`, by method, compiled once (none: the route has none). */
  deprecations?: Map<string, RouteDeprecations>;
}

const FIRST_VERSION: ApiVersion = 'v1';
const versionNumber = (version: ApiVersion): number => Number(version.slice(1));
const declaredVersion = (route: RouteDefinition): ApiVersion => route.version ?? FIRST_VERSION;
/** `/products/:id` and `/products/:productId` are the same path to a client. */
const pathShape = (pattern: string): string => pattern.replace(/:[A-Za-z]+/g, ':');

function routeHeaders(route: RouteDefinition): [string, string][] {
  // Answers behind a token (and tokens themselves) are personal: no cache keeps them.
  return [['Cache-Control', route.cacheable ? 'public, max-age=300' : 'no-store']];
}

function routeDeprecations(route: RouteDefinition, servedAs: ApiVersion, entries: readonly Deprecation[]): Map<string, RouteDeprecations> | undefined {
  const byMethod = new Map<string, RouteDeprecations>();
  for (const method of route.methods) {
    const compiled = compileRouteDeprecations(`/${servedAs}${route.pattern}`, method, entries);
    if (compiled) byMethod.set(method, compiled);
  }
  return byMethod.size > 0 ? byMethod : undefined;
}

/**
 * What `served` answers: each route of that version or an earlier one, with the methods no later
 * route (up to `served`) of the same path took over.
 */
function routesServedIn(served: ApiVersion, definitions: RouteDefinition[]): RouteDefinition[] {
  const limit = versionNumber(served);
  const upTo = definitions.filter((route) => versionNumber(declaredVersion(route)) <= limit);
  return upTo.flatMap((route) => {
    const own = versionNumber(declaredVersion(route));
    const methods = route.methods.filter(
      (method) => !upTo.some((later) => versionNumber(declaredVersion(later)) > own && pathShape(later.pattern) === pathShape(route.pattern) && later.methods.includes(method)),
    );
    return methods.length > 0 ? [{ ...route, methods }] : [];
  });
}

export class RouteTable {
  private readonly byVersion = new Map<ApiVersion, CompiledRoute[]>();
  /** The versions some route is declared for, oldest first. */
  readonly versions: ApiVersion[];

  /** `deprecations`: the registry (contracts/deprecations.yaml); each route keeps its own entries. */
  constructor(definitions: RouteDefinition[], deprecations: readonly Deprecation[] = []) {
    this.versions = [...new Set(definitions.map(declaredVersion))].sort((a, b) => versionNumber(a) - versionNumber(b));
    for (const servedAs of this.versions) {
      const routes = routesServedIn(servedAs, definitions).map((route): CompiledRoute => {
        const source = route.pattern.replace(/:[A-Za-z]+/g, '[^/]+');
        return { ...route, version: declaredVersion(route), servedAs, regex: new RegExp(`^${source}/?$`), headers: routeHeaders(route), deprecations: routeDeprecations(route, servedAs, deprecations) };
      });
      this.byVersion.set(servedAs, routes);
    }
  }

  /** The route for `method` and `path` (the path after `/<version>`) in `version`. */
  match(version: string, method: string, path: string): CompiledRoute {
    const routes = this.byVersion.get(version as ApiVersion);
    if (!routes) throw new ApiError('UNSUPPORTED_VERSION', `API version ${version} does not exist; the versions served are ${this.versions.join(', ')}.`);
    const wanted = (method === 'HEAD' ? 'GET' : method) as HttpMethod;
    const allow = new Set<string>();
    // The path belongs to the first pattern that matches it, as in the service, whose router stops
    // there: `/orders/search` is not an order id for `/orders/:id`, whatever the method.
    let owner: string | undefined;
    for (const route of routes) {
      if (!route.regex.test(path)) continue;
      owner ??= pathShape(route.pattern);
      if (pathShape(route.pattern) !== owner) continue;
      if (route.methods.includes(wanted)) return route;
      for (const m of route.methods) allow.add(m);
    }
    if (allow.size === 0) throw new ApiError('NOT_FOUND', `No resource at ${method} /${version}${path}.`);
    if (allow.has('GET')) allow.add('HEAD');
    throw new ApiError('METHOD_NOT_ALLOWED', `${method} is not supported here.`, { headers: { Allow: [...allow].join(', ') } });
  }
}
