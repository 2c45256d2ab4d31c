// Where the e2e stack listens. It runs on its own ports (PORT_OFFSET) beside any development stack;
// E2E_PORT_OFFSET moves it again, so two checkouts can run their suites side by side.
import { stackPorts } from '@platform/test-kit';

export const PORT_OFFSET = Number(process.env.E2E_PORT_OFFSET ?? 10_000);
export const gatewayUrl = `http://127.0.0.1:${stackPorts(PORT_OFFSET).gateway}`;
export const inventoryAddress = `127.0.0.1:${stackPorts(PORT_OFFSET).grpc}`;
export const ADMIN = { email: 'e2e-admin@example.com', password: 'e2e-admin-password' };
/**
 * The seeded demo catalog first, so every product on the page is stocked: the default order is
 * newest first, and suites create products of their own (unstocked) while others run.
 */
export const STOCKED_PRODUCTS = '/v1/products?size=100&sort=createdAt,asc';
/** Written by the global setup: the JWT secret and the app process ids. */
export const STATE_ENV = 'E2E_STACK_STATE';

export interface StackState {
  pids: Record<string, number>;
  starterPid: number;
  databases: string[];
  logFile: string;
  /** The spans the apps exported, one JSON line each (span-receiver.ts). */
  spansFile: string;
  /**
   * The admin's access token, signed in once by the global setup: the stack allows five token
   * requests per email and minute (so the OWASP suite can reach the limit), fewer than the suites
   * that act as the admin.
   */
  adminToken: string;
}

export function stackState(): StackState {
  return JSON.parse(process.env[STATE_ENV] ?? '{}') as StackState;
}
