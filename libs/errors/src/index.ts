import './request-state';
export { ApiError, MAX_BODY_BYTES } from './api-error';
export { Conflict, type ConflictCode, DomainError, Forbidden, Invalid, NotFound, OutOfStock, Unauthenticated, VersionMismatch } from './domain';
export { errorCatalog, fieldErrorCodes, graphqlErrorCatalog, type ErrorCode, type FieldError, type FieldErrorCode, type GraphQLErrorCode } from './codes';
export { asApiError, errorBodySchema, PROBLEM_JSON, problemBodySchema, toErrorBody, toProblemBody, type ErrorBody, type ProblemBody } from './render';
export {
  errorHandler,
  methodNotAllowed,
  notFoundHandler,
  requireAcceptableResponse,
  sendError,
} from './express';
