module.exports = { ...require('../../jest.preset.cjs'), displayName: 'usage', rootDir: __dirname };
