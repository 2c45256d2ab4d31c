module.exports = { ...require('../../jest.preset.cjs'), displayName: 'deprecations', rootDir: __dirname };
