import './request-state';
export { baseConfigShape, ConfigError, configOrExit, demoDataSetting, DEVELOPMENT_JWT_SECRET, loadConfig, portSetting, seedsDemoData, type BaseConfig, type LoadedConfig } from './config';
export { createLogger, type Logger } from './logger';
export {
  currentContext,
  remainingMs,
  requestContext,
  TIMEOUT_HEADER,
  traceIdFrom,
  outgoingTraceparent,
  outgoingBudgetMs,
  type RequestContext,
} from './request-context';
export { requestLog, routeOf } from './request-log';
export { inOrder } from './in-order';
export { ClientChosenLabel, createMetrics, dropSeries, type Metrics } from './metrics';
export { Health, type ReadinessCheck } from './health';
export { createStopper, stopOnSignals, stoppableHttpServer, type GracefulStopOptions, type Stoppable } from './graceful-stop';
export { type ConnectionLimits, listen, type Listening, type ListenOptions } from './listen';
export { expectedVersion, ifMatchesAnyExisting, ifMatchesNoneExisting, requireExpectedVersion, unchangedAtVersion, updateAtVersion } from './conditional';
export { createService, type Mount, type ResourceRoutes, type ServiceParts } from './create-service';
export { runService, type BuiltService, type DatabaseOpener, type OpenDatabase, type ServiceContext, type ServiceDefinition } from './run-service';
export { escapedLoneSurrogate, escapesLoneSurrogate, jsonBody, MAX_JSON_NESTING, nestsDeeperThan, parseJsonBody, readForwardedJson, type ForwardedJson, requireJsonBody, requireReadableBody, tooDeeplyNested } from './json-body';
