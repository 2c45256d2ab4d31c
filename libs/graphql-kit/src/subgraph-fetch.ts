// The gateway's calls to subgraphs: one POST over a keep-alive agent with Node's http client,
// answering with just what Apollo's RemoteGraphQLDataSource reads of a fetch Response (ok,
// status, statusText, url, headers.get, json, text). node-fetch, Apollo's default, wraps every
// call in Request, Headers, Body and stream objects; a query plan makes several calls per client
// request, and this costs the gateway less CPU per call (docs/benchmarks.md).
import { type Agent, type IncomingHttpHeaders, request } from 'node:http';

export interface SubgraphCall {
  method?: string;
  headers: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
}

export interface SubgraphAnswer {
  ok: boolean;
  status: number;
  statusText: string;
  url: string;
  headers: { get(name: string): string | null };
  text(): Promise<string>;
  json(): Promise<unknown>;
}

function headerReader(headers: IncomingHttpHeaders): SubgraphAnswer['headers'] {
  return {
    get: (name) => {
      const value = headers[name.toLowerCase()];
      return Array.isArray(value) ? value.join(', ') : (value ?? null);
    },
  };
}

export function subgraphFetch(agent: Agent): (url: string, call: SubgraphCall) => Promise<SubgraphAnswer> {
  return (url, call) =>
    new Promise((resolve, reject) => {
      const outgoing = request(url, { method: call.method ?? 'POST', headers: call.headers, agent, signal: call.signal }, (incoming) => {
        const chunks: Buffer[] = [];
        incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
        incoming.on('error', reject);
        incoming.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const status = incoming.statusCode ?? 502;
          resolve({
            ok: status >= 200 && status < 300,
            status,
            statusText: incoming.statusMessage ?? '',
            url,
            headers: headerReader(incoming.headers),
            text: async () => text,
            json: async () => JSON.parse(text) as unknown,
          });
        });
      });
      outgoing.on('error', reject);
      outgoing.end(call.body);
    });
}
