// Imported first by main.ts: OpenTelemetry patches http, gRPC and pg before anything loads them.
import { startTracing } from '@platform/tracing';

startTracing('catalog-service');
