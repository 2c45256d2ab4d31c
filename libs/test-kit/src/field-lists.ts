// One field list for REST and GraphQL: each subgraph's answers.test.ts compares the types its
// schema.graphql declares with the zod shapes REST answers and takes, less the differences it
// declares (each with why), so a field added to one side only, or renamed on one, fails there.
import { type DocumentNode, type FieldDefinitionNode, type InputValueDefinitionNode, Kind } from 'graphql';
import type { z } from '@platform/validation';

/** The fields on one side only, each with why (REST-only) or what answers it (graph-only). */
export interface FieldDifferences {
  restOnly: Readonly<Record<string, string>>;
  graphOnly: Readonly<Record<string, string>>;
}

/** The fields (or input fields) the SDL declares for `typeName`. */
export function sdlFields(sdl: DocumentNode, typeName: string): string[] {
  const definition = sdl.definitions.find((node) => (node.kind === Kind.OBJECT_TYPE_DEFINITION || node.kind === Kind.INPUT_OBJECT_TYPE_DEFINITION) && node.name.value === typeName);
  if (!definition || !('fields' in definition)) throw new Error(`schema.graphql has no type ${typeName}`);
  return (definition.fields as readonly (FieldDefinitionNode | InputValueDefinitionNode)[]).map((field) => field.name.value).sort();
}

/** What the SDL should declare: the zod shape's fields, less the REST-only, plus the graph-only. */
export function expectedFields(shape: z.ZodObject, differences: FieldDifferences): string[] {
  const restOnly = Object.keys(differences.restOnly);
  for (const field of restOnly) expect(Object.keys(shape.shape)).toContain(field); // a declared difference that no longer exists goes too
  return [...Object.keys(shape.shape).filter((field) => !restOnly.includes(field)), ...Object.keys(differences.graphOnly)].sort();
}
