import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { PROJECT_ROOT } from '../config.js';
import { type TarEntry, tarArchive } from './tar.js';

/**
 * What GET /source publishes (SPEC "GET /source", AGPL-3.0): the engine and its build,
 * never the gateway. Listed, not globbed from the root, so a new gateway file can never
 * slip in: the crates and the addon's sources by folder; the worker that drives the addon
 * (src/engine) with the four kernel modules it imports (errors, error codes, the blob key
 * rule and the blob file write an engine process writes an output by); the container build file
 * (Dockerfile.engine) with every file it copies (scripts, manifests, lockfiles,
 * TypeScript configs); the licence. test/routes/source-build.test.ts builds the engine
 * from the unpacked archive offline and checks every COPY of Dockerfile.engine.
 */
const TREES = ['crates', 'native/src', 'src/engine'];
const FILES = [
  'native/Cargo.toml',
  'native/build.rs',
  'native/index.d.ts',
  'native/index.js',
  'native/package.json',
  'src/kernel/api-error.ts',
  'src/kernel/error-codes.ts',
  'src/kernel/blob-key.ts',
  'src/kernel/blob-file.ts',
  'scripts/fetch-pdfium.sh',
  'Cargo.toml',
  'Cargo.lock',
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'tsconfig.engine.json',
  'Dockerfile.engine',
  'LICENSE',
];
/** Files run as programs (the container build runs the fetch script directly). */
const EXECUTABLE = new Set(['scripts/fetch-pdfium.sh']);
/** Build output and local state inside the trees are not source. */
const SKIP_DIRS = new Set(['target', 'node_modules', '.git']);

function walk(root: string, rel: string, out: string[]): void {
  const dir = path.join(root, rel);
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name.startsWith('.')) continue;
    const child = `${rel}/${entry.name}`;
    if (entry.isDirectory()) {
      if (!SKIP_DIRS.has(entry.name)) walk(root, child, out);
    } else if (entry.isFile()) {
      out.push(child);
    }
  }
}

/** The archive's paths, sorted (the same tree gives the same archive). */
export function engineSourcePaths(root: string = PROJECT_ROOT): string[] {
  const paths: string[] = [];
  for (const tree of TREES) walk(root, tree, paths);
  for (const file of FILES) if (existsSync(path.join(root, file))) paths.push(file);
  return [...new Set(paths)].sort();
}

/** gzip'd ustar of the engine source, paths relative to the repository root. */
export function buildEngineSourceArchive(root: string = PROJECT_ROOT): Buffer {
  const entries: TarEntry[] = engineSourcePaths(root).map((p) => {
    const full = path.join(root, p);
    return {
      path: p,
      data: readFileSync(full),
      mode: EXECUTABLE.has(p) ? 0o755 : 0o644,
      mtimeSec: Math.floor(statSync(full).mtimeMs / 1000),
    };
  });
  return gzipSync(tarArchive(entries), { level: 9 });
}
