// Sums the cargo and vitest counts into one closing line: "tests: N passed, N failed".
import { existsSync, readFileSync } from 'node:fs';

let passed = 0;
let failed = 0;
let skipped = 0;
const [cargoLog, vitestJson] = process.argv.slice(2);
if (cargoLog && existsSync(cargoLog)) {
  for (const m of readFileSync(cargoLog, 'utf8').matchAll(/test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored/g)) {
    passed += Number(m[1]);
    failed += Number(m[2]);
    skipped += Number(m[3]);
  }
}
if (vitestJson && existsSync(vitestJson)) {
  const r = JSON.parse(readFileSync(vitestJson, 'utf8'));
  passed += r.numPassedTests ?? 0;
  failed += r.numFailedTests ?? 0;
  skipped += (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
}
console.log(`\ntests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
