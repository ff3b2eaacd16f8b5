#!/usr/bin/env node
// Entry of `npx pdfedit`: runs the compiled CLI (npm run build:ts writes it to dist/).
import { existsSync } from 'node:fs';

const entry = new URL('../dist/src/cli/main.js', import.meta.url);
if (!existsSync(entry)) {
  console.error('pdfedit: the compiled CLI (dist/src/cli/main.js) is missing: run npm run build first');
  process.exit(1);
}
const { main } = await import(entry.href);
process.exitCode = await main(process.argv.slice(2));
