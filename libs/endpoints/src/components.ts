// The names representations are published under: `component('Product', schema)`, where a
// representation is defined, names it once; the OpenAPI document refers to it by that name
// wherever an endpoint answers it or another representation holds it.
import type { z } from 'zod';

const names = new Map<z.ZodType, string>();

/** Names `schema` in the published document; returns it unchanged. */
export function component<S extends z.ZodType>(name: string, schema: S): S {
  for (const [named, id] of names) if (id === name && named !== schema) throw new Error(`Two schemas are named ${name} in the API document`);
  names.set(schema, name);
  return schema;
}

/** The name `schema` is published under, if it has one. */
export function componentNameOf(schema: z.ZodType): string | undefined {
  return names.get(schema);
}

/** Every named schema, in the order named. */
export function namedComponents(): [string, z.ZodType][] {
  return [...names].map(([schema, name]) => [name, schema]);
}
