// The policy table's sizes come from the one config loader: the defaults written in its rows,
// overridden by the environment, refused at start when they make no sense.
import { ConfigError } from '@platform/service-kit';
import { loadGatewayConfig } from '../config';
import { addressKeyOf, limitsOf } from './policies';

describe('the rate-limit policy table', () => {
  it('sizes every limit from the config loader, with the documented defaults', () => {
    expect(limitsOf(loadGatewayConfig({ NODE_ENV: 'test' }))).toEqual({
      default: { points: 100, windowS: 10 },
      tokens: { points: 10, windowS: 60 },
      'tokens-email': { points: 100, windowS: 60 },
      'tokens-ip': { points: 100, windowS: 60 },
      'webhook-retries': { points: 10, windowS: 60 },
    });
  });

  it('takes each setting from the environment: one window setting sizes every sign-in limit', () => {
    const config = loadGatewayConfig({ NODE_ENV: 'test', RATE_LIMIT_POINTS: '7', RATE_LIMIT_TOKENS_IP_POINTS: '3', RATE_LIMIT_TOKENS_EMAIL_POINTS: '40', RATE_LIMIT_TOKENS_WINDOW_S: '120' });
    expect(limitsOf(config)).toEqual({
      default: { points: 7, windowS: 10 },
      tokens: { points: 10, windowS: 120 },
      'tokens-email': { points: 40, windowS: 120 },
      'tokens-ip': { points: 3, windowS: 120 },
      'webhook-retries': { points: 10, windowS: 60 },
    });
  });

  it('counts an IPv6 client by its /64, and an IPv4 one (mapped or not) whole', () => {
    expect(addressKeyOf('2001:db8:1:2::1')).toBe('ip:2001:db8:1:2::/64');
    expect(addressKeyOf('2001:0DB8:0001:0002:ffff:1:2:3')).toBe(addressKeyOf('2001:db8:1:2::1'));
    expect(addressKeyOf('2001:db8:1:3::1')).not.toBe(addressKeyOf('2001:db8:1:2::1'));
    expect(addressKeyOf('::1')).toBe('ip:0:0:0:0::/64');
    expect(addressKeyOf('::ffff:198.51.100.7')).toBe('ip:198.51.100.7');
    expect(addressKeyOf('198.51.100.7')).toBe('ip:198.51.100.7');
    expect(addressKeyOf('198.51.100.8')).not.toBe(addressKeyOf('198.51.100.7'));
  });

  it.each([
    ['RATE_LIMIT_TOKENS_POINTS', '0'],
    ['RATE_LIMIT_WINDOW_S', 'ten'],
    ['RATE_LIMIT_TOKENS_IP_POINTS', '1.5'],
  ])('refuses %s=%s at start, naming the variable', (variable, value) => {
    expect(() => loadGatewayConfig({ NODE_ENV: 'test', [variable]: value })).toThrow(ConfigError);
    expect(() => loadGatewayConfig({ NODE_ENV: 'test', [variable]: value })).toThrow(new RegExp(`^\\s+${variable}: `, 'm'));
  });

});
