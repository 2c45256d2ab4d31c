// Writes a generated file, or with `--check` fails when the committed one differs (CI).
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export function writeOrCheck(root, target, content, regenerate) {
  const name = path.relative(root, target);
  if (process.argv.includes('--check')) {
    if (readFileSync(target, 'utf8') !== content) {
      console.error(`${name} is stale: run \`${regenerate}\` and commit it.`);
      process.exit(1);
    }
    console.log(`${name} matches its sources`);
  } else {
    writeFileSync(target, content);
    console.log(`wrote ${name}`);
  }
}
