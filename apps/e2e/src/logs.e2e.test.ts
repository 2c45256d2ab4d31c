// What the stack logged while every other e2e suite ran (this suite runs last): nothing an
// attacker with the logs could use. No JWT secret, no bearer token, no password, in any line.
import { readFileSync } from 'node:fs';
import { ADMIN, stackState } from './stack';

/** Three base64url parts, the first a JSON header: a JWT, wherever it appears. */
const JWT = /eyJ[\w-]{8,}\.[\w-]{8,}\.[\w-]{8,}/g;

it('holds no JWT secret, token or password in any log line of the whole run', () => {
  const log = readFileSync(stackState().logFile, 'utf8');
  const lines = log.split('\n').filter(Boolean);
  // The suites before this one made thousands of requests; a quiet log would prove nothing.
  expect(lines.filter((line) => line.includes('"msg":"request"')).length).toBeGreaterThan(500);
  const secret = process.env.E2E_JWT_SECRET ?? '';
  expect(secret.length).toBeGreaterThanOrEqual(32);
  const found = {
    jwtSecret: lines.filter((line) => line.includes(secret)).length,
    tokens: lines.flatMap((line) => line.match(JWT) ?? []),
    adminPassword: lines.filter((line) => line.includes(ADMIN.password)).length,
    // The suites' passwords (mostly `<suite>-password-1`), and a password field is only ever "[redacted]".
    passwords: lines.filter((line) => /[a-z]+-password-\d|wrong-guess-123|wrong-password/.test(line) || /"password(?:Hash)?":"(?!\[redacted\])/.test(line)).length,
  };
  expect(found).toEqual({ jwtSecret: 0, tokens: [], adminPassword: 0, passwords: 0 });
});
