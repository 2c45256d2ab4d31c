module.exports = { ...require('../../jest.preset.cjs'), displayName: 'events', rootDir: __dirname };
