// The operation a request runs is chosen after validation (graphql-http), and a choice that fails
// is answered "Unable to detect operation AST", which tells the client nothing. The gateway and
// every subgraph give such a request one more validation rule that says what is wrong, so it is
// answered as any other validation error (GRAPHQL_VALIDATION_FAILED, 400 for
// application/graphql-response+json, 200 for application/json).
import { type DocumentNode, getOperationAST, Kind, type ValidationRule } from 'graphql';
import { graphQLRefusal } from './graphql-errors';

/** The longest name a document may give (operation, fragment, alias, variable); the schemas' own are far shorter. */
export const MAX_NAME_LENGTH = 128;

/** What is wrong when no operation of `document` can run for `operationName`; undefined when one can. */
function unselectableOperation(document: DocumentNode, operationName: string | null | undefined): string | undefined {
  if (getOperationAST(document, operationName)) return undefined;
  const names = document.definitions.flatMap((definition) => (definition.kind === Kind.OPERATION_DEFINITION ? [definition.name?.value ?? '(anonymous)'] : []));
  if (names.length === 0) return 'The document defines no operation.';
  // The name is the client's: quoted, and no longer than a name the document could give.
  if (operationName != null) return `operationName ${JSON.stringify(operationName.slice(0, MAX_NAME_LENGTH))} names no operation in the document (it defines: ${names.join(', ')}).`;
  return `The document defines several operations (${names.join(', ')}): name one in operationName.`;
}

/** Reports `message` once, as a validation error. */
function refusalRule(message: string): ValidationRule {
  return (context) => ({
    Document() {
      context.reportError(graphQLRefusal(message, 'GRAPHQL_VALIDATION_FAILED'));
    },
  });
}

/**
 * `rules`, or, when no operation of the document can run for `operationName`, a fresh list with
 * one more rule saying why (fresh, so a document cache's verdicts for `rules` stay as they are).
 */
export function withOperationChoice(rules: readonly ValidationRule[], document: DocumentNode, operationName: string | null | undefined): readonly ValidationRule[] {
  const problem = unselectableOperation(document, operationName);
  return problem === undefined ? rules : [...rules, refusalRule(problem)];
}
