// The limits on a document, as validation rules: its shape (depth, aliases and directives, counted
// by graphql-armor) and a name's length. Each refusal carries its own code and, beside it, the count
// and the limit (`depth: {requested, limit}`), as the cost limit carries `cost` (query-cost.ts).
import { ApolloArmor } from '@escape.tech/graphql-armor';
import type { ValidationContext, ValidationRule } from 'graphql';
import { graphQLRefusal, MAX_NAME_LENGTH } from '@platform/graphql-kit';
import type { GraphQLErrorCode } from '@platform/errors';

export const MAX_DEPTH = 10;
export const MAX_ALIASES = 15;
export const MAX_DIRECTIVES = 20;


/**
 * A name is refused past MAX_NAME_LENGTH: the query plan copies an operation's name into every
 * subgraph fetch (twice), so a long one could push a fetch past the subgraph's body limit and come
 * back as BAD_GATEWAY, and names reach logs and metric labels.
 */
export const NameLengthLimit: ValidationRule = (context) => ({
  Name(node) {
    if (node.value.length > MAX_NAME_LENGTH) {
      context.reportError(graphQLRefusal(`A name is at most ${MAX_NAME_LENGTH} characters; this one has ${node.value.length}.`, 'NAME_LENGTH_LIMIT_EXCEEDED', { nodes: [node], extensions: { nameLength: { requested: node.value.length, limit: MAX_NAME_LENGTH } } }));
    }
  },
});

/**
 * One of armor's counts held to our limit. Armor is given no limit of its own (n: Infinity): it
 * only counts, by its rules (a fragment spread or an inline fragment is a level, `__typename`
 * aliases are free), and hands each operation's count to onAccept as `{ n }`. We compare and
 * refuse: armor's refusal would carry the count only in its message ("… exceeded, found 13."),
 * and a message is never read for what it means.
 */
function armorLimit(code: GraphQLErrorCode, extension: string, limit: number, message: (requested: number) => string) {
  return {
    n: Infinity,
    propagateOnRejection: false, // nor, should it ever refuse after all, a BAD_USER_INPUT of its own
    onAccept: [
      (context: ValidationContext | null, { n: requested }: { n: number }) => {
        if (requested > limit) context?.reportError(graphQLRefusal(message(requested), code, { extensions: { [extension]: { requested, limit } } }));
      },
    ],
  };
}

/** Depth, aliases and directives, as validation rules. */
export function shapeLimitRules(): ValidationRule[] {
  const armor = new ApolloArmor({
    maxDepth: armorLimit('QUERY_DEPTH_LIMIT_EXCEEDED', 'depth', MAX_DEPTH, (found) => `Query depth limit exceeded: this operation nests ${found} levels deep and the limit is ${MAX_DEPTH}.`),
    maxAliases: armorLimit('QUERY_ALIAS_LIMIT_EXCEEDED', 'aliases', MAX_ALIASES, (found) => `Query alias limit exceeded: this operation has ${found} aliases and the limit is ${MAX_ALIASES}.`),
    maxDirectives: armorLimit('QUERY_DIRECTIVE_LIMIT_EXCEEDED', 'directives', MAX_DIRECTIVES, (found) => `Query directive limit exceeded: this operation has ${found} directives and the limit is ${MAX_DIRECTIVES}.`),
    maxTokens: { enabled: false }, // the parser's own (documentCache, @platform/graphql-kit)
    costLimit: { enabled: false }, // ours (query-cost.ts): the same computation gives the limit and extensions.cost
    blockFieldSuggestion: { enabled: false }, // an error-formatting plugin graphql-http does not run: formatGraphQLError hides suggestions
  });
  return armor.protect().validationRules ?? [];
}
