module.exports = { ...require('../../jest.preset.cjs'), displayName: 'ids', rootDir: __dirname };
