// The policy table's sizes come from the one config loader: the defaults written in its rows,
// overridden by the environment, refused at start when they make no sense.
import { ConfigError } from '@platform/service-kit';
import { loadGatewayConfig } from '../config';
import { limitsOf } from './policies';

describe('the rate-limit policy table', () => {
  it('sizes every limit from the config loader, with the documented defaults', () => {
    expect(limitsOf(loadGatewayConfig({ NODE_ENV: 'test' }))).toEqual({
      default: { points: 100, windowS: 10 },
      tokens: { points: 10, windowS: 60 },
      'tokens-email': { points: 100, windowS: 60 },
      'tokens-ip': { points: 100, windowS: 60 },
    });
  });

  it('takes each setting from the environment: one window setting sizes every sign-in limit', () => {
    const config = loadGatewayConfig({ NODE_ENV: 'test', RATE_LIMIT_POINTS: '7', RATE_LIMIT_TOKENS_IP_POINTS: '3', RATE_LIMIT_TOKENS_EMAIL_POINTS: '40', RATE_LIMIT_TOKENS_WINDOW_S: '120' });
    expect(limitsOf(config)).toEqual({
      default: { points: 7, windowS: 10 },
      tokens: { points: 10, windowS: 120 },
      'tokens-email': { points: 40, windowS: 120 },
      'tokens-ip': { points: 3, windowS: 120 },
    });
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
