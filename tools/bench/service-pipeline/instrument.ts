// First import of the server: tracing patches http before anything loads it, as in every app.
import { startTracing } from '@platform/tracing';

startTracing('service-pipeline');
