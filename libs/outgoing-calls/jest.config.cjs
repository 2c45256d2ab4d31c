module.exports = { ...require('../../jest.preset.cjs'), displayName: 'outgoing-calls', rootDir: __dirname };
