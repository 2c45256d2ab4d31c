module.exports = { ...require('../../jest.preset.cjs'), displayName: 'validation', rootDir: __dirname };
