// Who can reach a port: loopback, or the machine's other addresses too (an app listening on
// 0.0.0.0 answers on every interface).
import { createConnection } from 'node:net';
import { networkInterfaces } from 'node:os';

/** The machine's IPv4 addresses other than loopback (an app on 0.0.0.0, the default LISTEN_HOST, is not on IPv6 either). */
export function otherAddresses(): string[] {
  return Object.values(networkInterfaces())
    .flatMap((entries) => entries ?? [])
    .filter((entry) => !entry.internal && entry.family === 'IPv4')
    .map((entry) => entry.address);
}

/** Whether a TCP connection to `host`:`port` is accepted within 2 s. */
export function connects(host: string, port: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const socket = createConnection({ host, port, timeout: 2_000 });
    const settle = (connected: boolean) => {
      socket.destroy();
      resolve(connected);
    };
    socket.once('connect', () => settle(true));
    socket.once('error', () => settle(false));
    socket.once('timeout', () => settle(false));
  });
}
