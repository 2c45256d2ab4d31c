// The services' common pipeline (service-kit's createService: request context, request log,
// metrics, health, 406, JSON body, the token check) around an empty handler, served by
// service-kit's listen as every service is. Started by tools/bench/service-pipeline.mjs.
import './instrument';
import { issueAccessToken, TokenVerifier } from '@platform/auth';
import { defineEndpoints } from '@platform/endpoints';
import { createLogger, createMetrics, createService, Health, listen } from '@platform/service-kit';

const secret = process.env.JWT_SECRET ?? 'service-pipeline-bench-secret-0123456789';

/** One endpoint declared as a service declares its own, with nothing to do: the pipeline's cost alone. */
const emptyEndpoints = defineEndpoints('catalog', {
  getEmpty: { method: 'GET', path: '/empty', summary: 'Answers {}', access: 'signed-in', responses: { 200: { description: 'Nothing' } } },
});

async function main() {
  const app = createService({
    logger: createLogger('service-pipeline', process.env.LOG_LEVEL ?? 'info'),
    health: new Health(),
    metrics: createMetrics('service-pipeline'),
    requestTimeoutMs: 5_000,
    graphql: (_req, res) => void res.status(404).end(),
    internal: [],
    verifier: new TokenVerifier(secret),
    resources: [emptyEndpoints.routes({ getEmpty: ({ res }) => void res.json({}) })],
    outages: [],
  });
  const server = await listen(app, Number(process.env.PORT ?? 0), '127.0.0.1');
  const { accessToken } = await issueAccessToken(secret, { userId: '00000000-0000-4000-8000-000000000001', role: 'customer' });
  // Read by the bench from stderr: stdout carries the request log.
  process.stderr.write(`listening ${server.port} ${accessToken}\n`);
  process.once('SIGTERM', () => void server.close().then(() => process.exit(0)));
}

void main();
