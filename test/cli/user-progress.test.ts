import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../src/config.js';
import { corpusPath } from '../helpers/corpus.js';
import { HAVE_CORPUS } from '../helpers/env.js';
import { CLI_ARGS, type LiveApp, runCli, startLiveApp } from '../mcp/live.js';

const INVOICE = 'doc-invoice-itextsharp-demo.pdf';

function haveTmux(): boolean {
  try {
    execFileSync('tmux', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * Runs the CLI in a pseudo-terminal (a detached tmux session on its own socket): stderr is
 * the terminal, stdout goes to a file. Returns the screen once the command has exited.
 */
async function inTerminal(
  args: string[],
  env: Record<string, string>,
  stdoutFile: string,
  answer?: { prompt: RegExp; typed: string },
): Promise<string> {
  const socket = `pdfedit-test-${randomBytes(4).toString('hex')}`;
  const vars = Object.entries(env).map(([k, v]) => `${k}=${quote(v)}`);
  const command = `cd ${quote(PROJECT_ROOT)} && env ${vars.join(' ')} ${quote(process.execPath)} ${[...CLI_ARGS, ...args].map(quote).join(' ')} > ${quote(stdoutFile)}; echo "EXIT=$?"; sleep 60`;
  execFileSync('tmux', ['-L', socket, 'new-session', '-d', '-x', '150', '-y', '40', command]);
  try {
    const until = Date.now() + 90_000;
    for (;;) {
      const screen = execFileSync('tmux', ['-L', socket, 'capture-pane', '-p'], { encoding: 'utf8' });
      if (/EXIT=\d+/.test(screen)) return screen;
      if (answer?.prompt.test(screen)) {
        execFileSync('tmux', ['-L', socket, 'send-keys', '-l', answer.typed]);
        execFileSync('tmux', ['-L', socket, 'send-keys', 'Enter']);
        answer = undefined;
      }
      if (Date.now() > until) throw new Error(`the command did not finish:\n${screen}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    execFileSync('tmux', ['-L', socket, 'kill-server']);
  }
}

describe.skipIf(!HAVE_CORPUS || !haveTmux())('progress bars: on a terminal, never into a pipe', () => {
  let live: LiveApp;
  let dir: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    live = await startLiveApp();
    dir = mkdtempSync(path.join(tmpdir(), 'pdfedit-pty-'));
    copyFileSync(corpusPath(INVOICE), path.join(dir, 'invoice.pdf'));
    writeFileSync(
      path.join(dir, 'r.csv'),
      `name\n${Array.from({ length: 5 }, (_, i) => `N${i}`).join('\n')}\n`,
    );
    env = {
      HOME: dir,
      PATH: process.env.PATH ?? '',
      PDFEDIT_API_KEY: live.key,
      PDFEDIT_BASE_URL: live.baseUrl,
      TERM: 'xterm',
    };
  });
  afterAll(async () => {
    await live?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const editArgs = () => [
    'edit',
    path.join(dir, 'invoice.pdf'),
    '--replace',
    'Amount Due=Amount Owed',
    '-o',
    path.join(dir, 'out.pdf'),
  ];
  const batchArgs = () => [
    'batch',
    path.join(dir, 'invoice.pdf'),
    '--replace',
    'Bayside Wholesale={name} Wholesale',
    '--records',
    path.join(dir, 'r.csv'),
    '--out',
    path.join(dir, 'b'),
  ];

  it('draws upload, download and job bars on a terminal', async () => {
    const screen = await inTerminal(editArgs(), env, path.join(dir, 'edit.txt'));
    expect(screen).toMatch(/EXIT=0/);
    expect(screen).toMatch(/uploading\s+\[#{30}\] 100% [\d.]+ KB \/ [\d.]+ KB/);
    expect(screen).toMatch(/downloading \[#{30}\] 100%/);
    // stdout (the table) went to the file, not the screen.
    expect(readFileSync(path.join(dir, 'edit.txt'), 'utf8')).toMatch(/status: done/);
    expect(screen).not.toMatch(/status: done/);

    const batch = await inTerminal(batchArgs(), env, path.join(dir, 'batch.txt'));
    expect(batch).toMatch(/EXIT=0/);
    expect(batch).toMatch(/job done\s+\[#{30}\] 100% 5\/5/);
    expect(batch).toMatch(/downloading \[#{30}\] 100% 5\/5/);
  });

  it('login asks for the key on a terminal', async () => {
    const home = path.join(dir, 'login-home');
    const { PDFEDIT_API_KEY: _k, ...rest } = env;
    const screen = await inTerminal(
      ['login', '--base-url', live.baseUrl],
      { ...rest, HOME: home },
      path.join(dir, 'login.txt'),
      { prompt: /API key \(sk_live_… or sk_test_…\):/, typed: live.key },
    );
    expect(screen).toMatch(/EXIT=0/);
    expect(screen).not.toContain(live.key); // typed, not echoed
    expect(readFileSync(path.join(dir, 'login.txt'), 'utf8')).toMatch(
      /Logged in to http:\/\/127\.0\.0\.1:\d+ \(plan growth, live key\)/,
    );
    expect(JSON.parse(readFileSync(path.join(home, '.config/pdfedit/config.json'), 'utf8')).api_key).toBe(
      live.key,
    );
  });

  it('draws nothing when stderr is a pipe', async () => {
    for (const args of [editArgs(), batchArgs()]) {
      const res = await runCli(args, env);
      expect(res.code, res.stderr).toBe(0);
      expect(res.stderr).toBe('');
      expect(res.stdout).not.toMatch(/\r|\[#/);
    }
  });
});
