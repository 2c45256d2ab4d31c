export {
  createOutgoingCalls,
  type CallCredential,
  type CallHead,
  type HttpAnswer,
  type HttpCall,
  type HttpTarget,
  type OutgoingCalls,
  type OutgoingCallsOptions,
} from './outgoing-calls';
export {
  failureError,
  failureOf,
  grpcFailure,
  grpcFailureKind,
  httpFailureKind,
  malformed,
  RETRY_AFTER_HEADER,
  RETRY_AFTER_SECONDS,
  timedOut,
  unavailable,
  type TransportFailure,
} from './failure-rule';
export { OUTGOING_CALL_METRIC, type CallOutcome, type FinishCall } from './call-metrics';
