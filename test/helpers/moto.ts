import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { PROJECT_ROOT } from '../../src/config.js';

/** moto's S3-compatible server (PyPI `moto[server]`), installed by scripts/setup.sh. */
export const MOTO_BIN = path.join(PROJECT_ROOT, 'vendor/venv/bin/moto_server');
export const HAVE_MOTO = existsSync(MOTO_BIN);

export interface Moto {
  endpoint: string;
  /** Environment for loadConfig selecting the S3 blob store on a fresh bucket. */
  env(): Promise<Record<string, string>>;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

const CREDENTIALS = { accessKeyId: 'testing', secretAccessKey: 'testing' };

/** Starts moto_server on a free loopback port and waits until it answers. */
export async function startMoto(): Promise<Moto> {
  const port = await freePort();
  const endpoint = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(MOTO_BIN, ['-H', '127.0.0.1', '-p', String(port)], {
    stdio: 'ignore',
  });
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`moto_server exited with ${child.exitCode}`);
    const ok = await fetch(`${endpoint}/moto-api/`).then(
      (r) => r.status < 500,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) {
      child.kill('SIGTERM');
      throw new Error('moto_server did not start within 20 s');
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  const client = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: CREDENTIALS,
  });
  return {
    endpoint,
    async env() {
      const bucket = `pdfedit-${randomBytes(5).toString('hex')}`;
      await client.send(new CreateBucketCommand({ Bucket: bucket }));
      return {
        S3_BUCKET: bucket,
        S3_ENDPOINT: endpoint,
        S3_REGION: 'us-east-1',
        S3_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
        S3_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
      };
    },
    async stop() {
      client.destroy();
      if (child.exitCode !== null) return;
      await new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      });
    },
  };
}
