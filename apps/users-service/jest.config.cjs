module.exports = { ...require('../../jest.preset.cjs'), displayName: 'users-service', rootDir: __dirname };
