import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Repository (or install) root: the nearest folder above this file with a package.json
 * (two levels up in src/, three in dist/src/). Here, not in config.ts, so the engine worker
 * and the published engine source need none of the gateway's configuration.
 */
export const PROJECT_ROOT = (() => {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, 'package.json')) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  return dir;
})();
