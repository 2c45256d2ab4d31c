module.exports = { ...require('../../jest.preset.cjs'), displayName: 'paging', rootDir: __dirname };
