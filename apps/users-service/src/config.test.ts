// The settings users-service refuses to start with.
import { loadUsersConfig } from './config';

const JWT_SECRET = 'users-config-secret-users-config-0123456789';

describe('loadUsersConfig', () => {
  it('refuses WEBHOOK_ALLOW_LOOPBACK=true in production, naming the variable', () => {
    expect(() => loadUsersConfig({ NODE_ENV: 'production', JWT_SECRET, WEBHOOK_ALLOW_LOOPBACK: 'true' })).toThrow(
      expect.objectContaining({ problems: [{ variable: 'WEBHOOK_ALLOW_LOOPBACK', problem: expect.stringContaining('NODE_ENV=production') }] }),
    );
  });

  it('accepts it outside production, and production without it', () => {
    expect(loadUsersConfig({ NODE_ENV: 'test', WEBHOOK_ALLOW_LOOPBACK: 'true' }).WEBHOOK_ALLOW_LOOPBACK).toBe(true);
    expect(loadUsersConfig({ NODE_ENV: 'production', JWT_SECRET }).WEBHOOK_ALLOW_LOOPBACK).toBe(false);
  });

  it('reads WEBHOOK_ALLOWED_PORTS as a list of ports, unset as any port, and refuses what is not one', () => {
    expect(loadUsersConfig({ NODE_ENV: 'test', WEBHOOK_ALLOWED_PORTS: '443, 80' }).WEBHOOK_ALLOWED_PORTS).toEqual([443, 80]);
    expect(loadUsersConfig({ NODE_ENV: 'test' }).WEBHOOK_ALLOWED_PORTS).toBeUndefined();
    for (const unreadable of ['https', '443;80', '0', '70000', '']) {
      expect(() => loadUsersConfig({ NODE_ENV: 'test', WEBHOOK_ALLOWED_PORTS: unreadable })).toThrow(expect.objectContaining({ problems: [expect.objectContaining({ variable: 'WEBHOOK_ALLOWED_PORTS' })] }));
    }
  });
});
