module.exports = { ...require('../../jest.preset.cjs'), displayName: 'graphql-gateway', rootDir: __dirname };
