import { spawn } from 'node:child_process';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/config.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { freePort } from '../helpers/moto.js';

/** The service listening on a loopback port (its PUBLIC_BASE_URL), with a key. */
export interface LiveApp {
  t: TestApp;
  key: string;
  baseUrl: string;
  close(): Promise<void>;
}

export async function startLiveApp(env: Record<string, string> = {}): Promise<LiveApp> {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const t = await startApp('sqlite', { ALLOW_PRIVATE_URLS: '1', PUBLIC_BASE_URL: baseUrl, ...env });
  await t.app.listen({ port, host: '127.0.0.1' });
  const key = await t.newKey('agent@example.com', 'growth');
  return { t, key, baseUrl, close: () => t.close() };
}

/** The CLI's entry run from source (tsx), as `pdfedit` runs the compiled one. */
export const CLI_ARGS = ['--import', 'tsx', path.join(PROJECT_ROOT, 'src/cli/main.ts')];

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `pdfedit ARGS` as a child process with `env` (stdin given or closed). */
export function runCli(
  args: string[],
  env: Record<string, string>,
  stdin = '',
  cwd = PROJECT_ROOT,
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...CLI_ARGS, ...args], {
      cwd,
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin);
  });
}
