// How long a server takes to answer a request once the request has fully arrived: the time of
// its work, not of the upload. Everything but the last byte is sent and left to settle; the clock
// starts when the last byte goes and stops when the whole answer is in.
import { connect } from 'node:net';

export interface TimedAnswer {
  status: number;
  /** Parsed JSON (undefined when the body is not JSON). */
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  /** From the last byte sent to the last byte of the answer read. */
  ms: number;
}

const SETTLE_MS = 200;

/**
 * The bound a refused hostile body must be answered within. Before the depth limit, one 1 MiB
 * nested body held a service's event loop for minutes; a refusal in well under a second proves
 * the limit holds. A tighter bound would measure the CI machine's load, not the server: 50 ms
 * failed once in CI while four suites shared two cores.
 */
export const PROMPT_REFUSAL_MS = 1_000;

/** Sends `method path` with `body` on a fresh connection to `url` and times the answer (see above). */
export function timeAnswer(url: string, method: string, path: string, headers: Record<string, string>, body: string): Promise<TimedAnswer> {
  const { hostname, port } = new URL(url);
  const payload = Buffer.from(body);
  const head = [`${method} ${path} HTTP/1.1`, `Host: ${hostname}:${port}`, `Content-Length: ${payload.length}`, 'Connection: close', ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)].join('\r\n');
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    let started = 0;
    let ms = 0;
    socket.setTimeout(120_000, () => socket.destroy(new Error('no answer in 120 s')));
    socket.on('error', reject);
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      const received = Buffer.concat(chunks);
      const headEnd = received.indexOf('\r\n\r\n');
      if (headEnd < 0 || ms) return;
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(received.subarray(0, headEnd).toString('latin1'))?.[1] ?? 0);
      if (received.length >= headEnd + 4 + length) ms = performance.now() - started;
    });
    socket.on('close', () => {
      const received = Buffer.concat(chunks).toString('utf8');
      const headEnd = received.indexOf('\r\n\r\n');
      if (!started || headEnd < 0) return reject(new Error(`no answer: ${received.slice(0, 200)}`));
      let parsed: unknown;
      try {
        parsed = JSON.parse(received.slice(headEnd + 4));
      } catch {
        parsed = undefined;
      }
      resolve({ status: Number(received.slice(9, 12)), body: parsed, ms: ms || performance.now() - started });
    });
    socket.write(Buffer.concat([Buffer.from(`${head}\r\n\r\n`), payload.subarray(0, -1)]), () => {
      setTimeout(() => {
        started = performance.now();
        socket.write(payload.subarray(-1));
      }, SETTLE_MS);
    });
  });
}
