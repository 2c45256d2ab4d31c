module.exports = { ...require('../../jest.preset.cjs'), displayName: 'inventory-contract', rootDir: __dirname };
