module.exports = { ...require('../jest.preset.cjs'), displayName: 'deploy', rootDir: __dirname };
