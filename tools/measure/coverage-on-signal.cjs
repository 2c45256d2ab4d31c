// Preloaded (NODE_OPTIONS=--require) into every app of a stack that runs with NODE_V8_COVERAGE:
// SIGUSR2 writes the functions run since the last signal (v8.takeCoverage resets the counts), and
// each app says which it is, so tools/measure/files-visited.mjs can count what one request runs.
'use strict';
const { writeFileSync } = require('node:fs');
const path = require('node:path');
const v8 = require('node:v8');

const app = /dist\/apps\/([^/]+)\/main\.js$/.exec(process.argv[1] ?? '')?.[1];
if (app && process.env.NODE_V8_COVERAGE) {
  writeFileSync(path.join(process.env.NODE_V8_COVERAGE, `app-${process.pid}.name`), app);
  let taken = 0;
  process.on('SIGUSR2', () => {
    v8.takeCoverage(); // written whole before it returns; the marker says so
    taken += 1;
    writeFileSync(path.join(process.env.NODE_V8_COVERAGE, `taken-${process.pid}-${taken}`), '');
  });
}
