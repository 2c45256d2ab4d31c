module.exports = { ...require('../../jest.preset.cjs'), displayName: 'inventory-service', rootDir: __dirname };
