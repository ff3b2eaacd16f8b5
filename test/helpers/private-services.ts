import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { PROJECT_ROOT } from '../../src/config.js';

/**
 * Private Redis and PostgreSQL servers and the service as real child processes, for the
 * fault-injection tests: they restart, flush and kill these, never the shared instances
 * on 6379 and 5432 that other suites use.
 */

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A TCP port free on loopback right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > end) throw new Error(`${what} not ready after ${timeoutMs} ms: ${String(last)}`);
    await sleep(50);
  }
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((r) => child.once('exit', () => r()));
}

export const HAVE_REDIS_SERVER = (() => {
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

export interface PrivateRedis {
  url: string;
  /** SIGKILL and start again on the same port: no persistence, so every key is gone. */
  restart(downMs?: number): Promise<void>;
  kill(): Promise<void>;
  start(): Promise<void>;
  flushAll(): Promise<void>;
  stop(): Promise<void>;
}

/** redis-server on a free port, its own dir, no persistence (a restart loses every key). */
export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), 'pdfedit-redis-'));
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  const ping = async () => {
    const c = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    c.on('error', () => {});
    try {
      await c.connect();
      return (await c.ping()) === 'PONG' ? true : undefined;
    } finally {
      c.disconnect();
    }
  };
  const start = async () => {
    child = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    await until('private redis', 10_000, ping);
  };
  const kill = async () => {
    if (!child) return;
    child.kill('SIGKILL');
    await exited(child);
    child = undefined;
  };
  await start();
  return {
    url,
    start,
    kill,
    restart: async (downMs = 0) => {
      await kill();
      await sleep(downMs);
      await start();
    },
    flushAll: async () => {
      const c = new Redis(url, { maxRetriesPerRequest: 1 });
      try {
        await c.flushall();
      } finally {
        c.disconnect();
      }
    },
    stop: async () => {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function pgBinDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(path.join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? path.join(root, versions[0], 'bin') : undefined;
}

export const PG_BIN = pgBinDir();

export interface PrivatePostgres {
  url: string;
  /** pg_ctl stop -m immediate (as a crash) and, after `downMs`, start again. */
  restart(downMs?: number): Promise<void>;
  stopServer(): Promise<void>;
  startServer(): Promise<void>;
  destroy(): Promise<void>;
}

/** A PostgreSQL cluster of its own (initdb in a temp dir, a free port, trust auth). */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  if (!PG_BIN) throw new Error('no PostgreSQL binaries under /usr/lib/postgresql');
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), 'pdfedit-pg-'));
  const data = path.join(dir, 'data');
  // initdb refuses to run as root: the cluster belongs to the postgres user then.
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(dir, uid, gid);
  }
  const run = (bin: string, args: string[]) => {
    const cmd = path.join(PG_BIN!, bin);
    if (asRoot) execFileSync('runuser', ['-u', 'postgres', '--', cmd, ...args], { stdio: 'ignore' });
    else execFileSync(cmd, args, { stdio: 'ignore' });
  };
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const startServer = async () => {
    run('pg_ctl', [
      '-D',
      data,
      '-l',
      path.join(dir, 'log'),
      '-o',
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=60`,
      '-w',
      'start',
    ]);
    await until('private postgres', 10_000, async () => {
      const c = new pg.Client({ connectionString: url });
      c.on('error', () => {});
      try {
        await c.connect();
        await c.query('SELECT 1');
        return true;
      } finally {
        await c.end().catch(() => {});
      }
    });
  };
  const stopServer = async () => {
    run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
  };
  await startServer();
  return {
    url,
    startServer,
    stopServer,
    restart: async (downMs = 0) => {
      await stopServer();
      await sleep(downMs);
      await startServer();
    },
    destroy: async () => {
      try {
        await stopServer();
      } catch {
        // already stopped
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const MAIN_TS = path.join(PROJECT_ROOT, 'src/cli/main.ts');
const SERVER_TS = path.join(PROJECT_ROOT, 'src/server.ts');

export interface ServiceProcess {
  child: ChildProcess;
  /** Everything the process wrote to stderr and stdout (its log), for failure messages. */
  output(): string;
  /** SIGKILL; resolves with the pids of its child processes (engine processes) at that moment. */
  kill9(): Promise<number[]>;
  /** SIGTERM, then SIGKILL if it has not exited after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

/** Pids of the direct children of `pid` (from /proc). */
export function childPids(pid: number | undefined): number[] {
  if (pid === undefined) return [];
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Field 4 (ppid) follows the command name in parentheses, which may contain spaces.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(entry));
    } catch {
      // the process ended while listing
    }
  }
  return out;
}

/** Whether a process `pid` still runs (a zombie counts as ended). */
export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

function supervise(child: ChildProcess): ServiceProcess {
  let out = '';
  const keep = (b: Buffer) => {
    out = (out + b.toString('utf8')).slice(process.env.FAULTS_DEBUG ? -2_000_000 : -20_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return {
    child,
    output: () => out,
    kill9: async () => {
      const children = childPids(child.pid);
      child.kill('SIGKILL');
      await exited(child);
      return children;
    },
    stop: async (graceMs = 10_000) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited(child);
      clearTimeout(t);
    },
  };
}

/** `node src/server.ts` (through tsx) listening on `env.PORT`; resolves once /healthz answers. */
export async function startApiProcess(env: Record<string, string>): Promise<ServiceProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', SERVER_TS], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const svc = supervise(child);
  const base = `http://127.0.0.1:${env.PORT}`;
  await until('API process', 30_000, async () => {
    if (child.exitCode !== null) throw new Error(`API exited ${child.exitCode}: ${svc.output()}`);
    const res = await fetch(`${base}/healthz`);
    return res.status === 200 ? true : undefined;
  }).catch((err: unknown) => {
    child.kill('SIGKILL');
    throw new Error(`${String(err)}\n${svc.output()}`);
  });
  return svc;
}

/** `pdfedit worker` as its own process; resolves once it reports that it runs. */
export async function startWorkerProcess(env: Record<string, string>): Promise<ServiceProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN_TS, 'worker'], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const svc = supervise(child);
  await until('worker process', 30_000, async () => {
    if (child.exitCode !== null) throw new Error(`worker exited ${child.exitCode}: ${svc.output()}`);
    return svc.output().includes('pdfedit worker: running') ? true : undefined;
  }).catch((err: unknown) => {
    child.kill('SIGKILL');
    throw err;
  });
  return svc;
}
