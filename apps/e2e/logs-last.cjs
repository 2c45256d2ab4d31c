// Runs the e2e suites in jest's usual order, with logs.e2e.test.ts last: it reads what the
// stack logged while every other suite ran.
const Sequencer = require('@jest/test-sequencer').default;

class LogsLast extends Sequencer {
  sort(tests) {
    const sorted = super.sort(tests);
    const isLogs = (test) => test.path.endsWith('logs.e2e.test.ts');
    return [...sorted.filter((test) => !isLogs(test)), ...sorted.filter(isLogs)];
  }
}

module.exports = LogsLast;
