module.exports = { ...require('../jest.preset.cjs'), displayName: 'tools', rootDir: __dirname, testMatch: ['<rootDir>/contracts/**/*.test.ts', '<rootDir>/openapi/**/*.test.ts'] };
