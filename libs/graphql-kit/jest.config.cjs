module.exports = { ...require('../../jest.preset.cjs'), displayName: 'graphql-kit', rootDir: __dirname };
