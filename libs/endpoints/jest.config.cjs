module.exports = { ...require('../../jest.preset.cjs'), displayName: 'endpoints', rootDir: __dirname };
