module.exports = { ...require('../../jest.preset.cjs'), displayName: 'orders-service', rootDir: __dirname };
