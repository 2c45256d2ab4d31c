module.exports = { ...require('../../jest.preset.cjs'), displayName: 'tracing', rootDir: __dirname };
