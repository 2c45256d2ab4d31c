import type { NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * Several pipeline steps run as one express middleware, in the order given, with express's own
 * rules for each step: `next()` goes on to the following step, `next(error)` skips the rest and
 * hands the error to express's error middleware, and a step that throws or whose promise rejects
 * does the same. After the last step, express's next layer runs.
 *
 * Why: express's router spends about 1.5 µs per layer per request matching its path, restoring
 * `req.url` and `baseUrl` and walking its stack, for steps that are mounted on every path anyway.
 * The gateway runs twenty of them on every request (docs/benchmarks.md has the profile). Steps
 * mounted on a path, routers and error middleware stay express layers.
 */
export function inOrder(steps: readonly RequestHandler[]): RequestHandler {
  return (req: Request, res: Response, done: NextFunction) => {
    let index = 0;
    const next = (error?: unknown): void => {
      if (error) return done(error);
      const step = steps[index++];
      if (!step) return done();
      try {
        const result: unknown = step(req, res, next);
        if (result instanceof Promise) result.then(undefined, (rejection: unknown) => next(rejection ?? new Error('Rejected promise')));
      } catch (thrown) {
        next(thrown ?? new Error('a pipeline step threw nothing'));
      }
    };
    next();
  };
}
