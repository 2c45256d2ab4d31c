// A resource's endpoints, declared in one object keyed by operation id, and the Express routing
// derived from them: each handler gets its input already checked (query, body, If-Match, then
// the path's parameters) and its caller; a path's other methods answer 405. The handlers are given by name, so a declared
// endpoint without a handler (or a handler without a declaration) does not compile.
import { type Request, type RequestHandler, type Response, Router } from 'express';
import type { z } from 'zod';
import { adminOnly, principalOf, type Principal } from '@platform/auth';
import { methodNotAllowed } from '@platform/errors';
import { expectedVersion } from '@platform/service-kit';
import { noQueryParameters, parseBody, parsePath, parseQuery } from '@platform/validation';
import { type Endpoint, type EndpointDeclaration, pathParameterNames, type Upstream } from './endpoint';

// Without `params` there are none: a handler reading one does not compile (nor does the declaration load).
type ParamsOf<D> = D extends { params: infer P extends Record<string, unknown> } ? { readonly [K in keyof P]: string } : Readonly<Record<never, string>>;
type QueryOf<D> = D extends { query: infer Q extends z.ZodType } ? z.output<Q> : undefined;
type BodyOf<D> = D extends { body: infer B extends z.ZodType } ? z.output<B> : undefined;
type CallerOf<D> = D extends { access: 'public' } ? undefined : Principal;

/** What a handler is given: the request's parts, checked against the declaration. */
export interface EndpointCall<D extends EndpointDeclaration> {
  /** The path's parameters, each one that names a resource checked (one that names nothing was answered 404). */
  params: ParamsOf<D>;
  query: QueryOf<D>;
  body: BodyOf<D>;
  /** Who calls (a person, or a person's API key); `undefined` on a public endpoint. */
  principal: CallerOf<D>;
  /** The version If-Match names, on an endpoint declared `ifMatch` (unset: the header was absent or `*`). */
  expectedVersion: number | undefined;
  req: Request;
  res: Response;
}

export type EndpointHandler<D extends EndpointDeclaration> = (call: EndpointCall<D>) => Promise<void> | void;

/**
 * A service's routes for one group: those that need no credential go above the service's token
 * check, the rest below it (service-kit's createService mounts both in their places).
 */
export interface EndpointRoutes {
  withoutToken: Router;
  withToken: Router;
}

export interface EndpointGroup<T extends Record<string, EndpointDeclaration>> {
  /** The declarations with their operation ids, in declaration order: what the document and the gateway's table are built from. */
  readonly endpoints: Endpoint[];
  /** The Express routing of these endpoints, each calling its handler. */
  routes(handlers: { [K in keyof T]: EndpointHandler<T[K]> }): EndpointRoutes;
}

/**
 * Declares `upstream`'s endpoints; each key is its endpoint's operation id. A declaration whose
 * `params` are not its path's parameters, in the path's order, is refused here: nothing about a
 * path parameter is left for the routing or the document to guess.
 */
export function defineEndpoints<const T extends Record<string, EndpointDeclaration>>(upstream: Upstream, declarations: T): EndpointGroup<T> {
  const endpoints = Object.entries(declarations).map(([operationId, declaration]): Endpoint => {
    const inPath = pathParameterNames(declaration.path);
    const declared = Object.keys(declaration.params ?? {});
    if (declared.join() !== inPath.join()) {
      throw new Error(`${operationId}: params must declare ${inPath.length ? inPath.join(', ') : 'nothing'} (the parameters of ${declaration.path}, in order); it declares ${declared.length ? declared.join(', ') : 'none'}`);
    }
    return { ...declaration, operationId, upstream };
  });
  return {
    endpoints,
    routes: (handlers) => routesOf(endpoints, handlers as Record<string, EndpointHandler<EndpointDeclaration>>),
  };
}

/** The path a service serves an endpoint at: a later version's under its prefix, beside the first version's. */
export const servedPathOf = (endpoint: Endpoint): string => (endpoint.version && endpoint.version !== 'v1' ? `/${endpoint.version}${endpoint.path}` : endpoint.path);

function routesOf(endpoints: Endpoint[], handlers: Record<string, EndpointHandler<EndpointDeclaration>>): EndpointRoutes {
  // Case-sensitive, as the gateway's route table is: a path it routed one way is never served as another.
  const withoutToken = Router({ caseSensitive: true });
  const withToken = Router({ caseSensitive: true });
  const paths = [...new Set(endpoints.map(servedPathOf))];
  for (const path of paths) {
    const here = endpoints.filter((endpoint) => servedPathOf(endpoint) === path);
    const publicRoute = here.some((endpoint) => endpoint.access === 'public') ? withoutToken.route(path) : undefined;
    const tokenRoute = here.some((endpoint) => endpoint.access !== 'public') ? withToken.route(path) : undefined;
    for (const endpoint of here) {
      const route = endpoint.access === 'public' ? publicRoute! : tokenRoute!;
      const method = endpoint.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete';
      route[method](...stagesOf(endpoint, handlers[endpoint.operationId]));
    }
    // Other methods: 405 with the methods the path has. Where some of them need a token, the
    // answer waits for the token check (the public router lets the request go on to it).
    (tokenRoute ?? publicRoute!).all(methodNotAllowed);
  }
  return { withoutToken, withToken };
}

function stagesOf(endpoint: Endpoint, handler: EndpointHandler<EndpointDeclaration>): RequestHandler[] {
  const call: RequestHandler = async (req, res) => {
    // A route below the token check has a caller; one above it may not: principalOf is a 401 then.
    const principal = endpoint.access === 'public' ? undefined : principalOf(res);
    // Undeclared, it takes none: a misspelt `?dryRun=true` on a write is refused, not acted on as if absent.
    const query = endpoint.query ? parseQuery(endpoint.query, req.query) : void parseQuery(noQueryParameters, req.query);
    const body = endpoint.body ? parseBody(endpoint.body, req.body) : undefined;
    const version = endpoint.ifMatch ? expectedVersion(req) : undefined;
    // Last, where the services looked their ids up: a refused body is still refused so on a path that names nothing.
    const params = parsePath(endpoint.params ?? {}, req.params as Record<string, string>);
    await handler({ params, query, body, principal, expectedVersion: version, req, res } as EndpointCall<EndpointDeclaration>);
  };
  return endpoint.access === 'admin' ? [adminOnly, call] : [call];
}
