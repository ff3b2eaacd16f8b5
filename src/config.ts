import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { PROJECT_ROOT } from './engine/root.js';

/** Repository (or install) root (see engine/root.ts). */
export { PROJECT_ROOT };

/**
 * Everything the service reads from the environment, read once, typed.
 * Nothing set = embedded mode (SQLite + disk under DATA_DIR, in-process queue).
 */
export interface Config {
  port: number;
  host: string;
  dataDir: string;
  publicBaseUrl: string;
  /** `sqlite:<path>` (default `DATA_DIR/pdfedit.sqlite`) or a `postgres://` URL. */
  databaseUrl: string;
  redisUrl: string | undefined;
  /** HMAC key for signed file links; from TOKEN_SECRET, else generated once into DATA_DIR. */
  tokenSecret: Buffer;
  allowPrivateUrls: boolean;
  pdfiumLibPath: string;
  engineThreads: number;
  /** Engine processes (ENGINE_PROCESSES; default: the machine's cores). Each binds PDFium once. */
  engineProcesses: number;
  /** Address-space ceiling of one engine process in MiB (ENGINE_MEMORY_MB; 0: none). */
  engineMemoryMb: number;
  /** An engine process whose resident memory passed this after a call is recycled (MiB). */
  engineRecycleMb: number;
  /** Budget of one synchronous engine call before 504 engine_timeout. */
  syncTimeoutMs: number;
  fetch: { maxBytes: number; timeoutMs: number; maxRedirects: number };
  trustedProxies: string[];
  logLevel: string;
  /** Retention of uploads, outputs and previews (SPEC: 24 hours). */
  fileTtlMs: number;
  /** S3-compatible blob store, chosen when S3_BUCKET is set; disk under DATA_DIR otherwise. */
  s3: S3Config | undefined;
  /** Prefix of the rate-limit counters in Redis (RATE_LIMIT_PREFIX); tests isolate by it. */
  rateLimitPrefix: string;
  /** Multiplies every plan's requests per minute (RATE_LIMIT_FACTOR, default 1). Test suites
   * that send many requests with one key raise it; the rate-limit tests keep 1. */
  rateLimitFactor: number;
  /** Jobs, batches and webhooks (src/queue/, src/net/webhooks.ts). */
  jobs: JobsConfig;
  /** The service's clock (epoch ms). Retention and metering read time through it, so tests
   * can move it (assign `config.now`); production never changes it. */
  now: () => number;
  /** Sign-in mail and payments (issue 16); see README "Accounts and payments". */
  accounts: AccountsConfig;
}

export interface AccountsConfig {
  /** SMTP_URL for the sign-in mail; unset: the link is written to the log. */
  smtpUrl: string | undefined;
  /** MAIL_FROM, the sender of the sign-in mail. */
  mailFrom: string;
  /** STRIPE_SECRET_KEY: payments through Stripe; unset: the local provider. */
  stripeSecretKey: string | undefined;
  /** STRIPE_WEBHOOK_SECRET: verifies Stripe's callbacks. */
  stripeWebhookSecret: string | undefined;
  /** STRIPE_API_BASE (tests: a stub on loopback, e.g. http://127.0.0.1:12111). */
  stripeApiBase: string | undefined;
}

export interface JobsConfig {
  /** Prefix of the BullMQ keys in Redis (QUEUE_PREFIX); tests isolate by it. */
  queuePrefix: string;
  /** Jobs this process runs at once (JOB_WORKERS; default ENGINE_THREADS). 0: the API
   * process only queues, `pdfedit worker` processes run the jobs. */
  workers: number;
  /** A running job or batch record is owned for this long, renewed while it runs; a
   * worker that dies (SIGKILL) loses it after this and another worker resumes the work. */
  leaseMs: number;
  /** How often unfinished jobs in the database are checked against the queue. */
  reconcileMs: number;
  /** Engine budget of one job's edit (one record of a batch): longer than a sync request's,
   * since SPEC sends callers whose sync edit timed out to options.async (JOB_TIMEOUT_MS). */
  timeoutMs: number;
  /** Doorbells per batch: how many workers (threads or processes) share one batch. */
  batchShards: number;
  /** Grace on SIGTERM for running jobs before their leases are released (WORKER_GRACE_MS). */
  shutdownGraceMs: number;
  /** Records of a batch given by records_url: cap on the CSV's size. */
  csvMaxBytes: number;
  webhookTimeoutMs: number;
  /** How often due webhook deliveries are looked for. */
  webhookPollMs: number;
  /** Job records are kept this long (SPEC: 30 days). */
  retentionMs: number;
}

export interface S3Config {
  bucket: string;
  /** Endpoint of an S3-compatible server (MinIO, moto, R2); AWS when unset. */
  endpoint: string | undefined;
  region: string;
  /** Static credentials; when unset the AWS SDK's default chain (env, profile, role) applies. */
  credentials: { accessKeyId: string; secretAccessKey: string } | undefined;
  /** Path-style addressing (`endpoint/bucket/key`), needed by most non-AWS servers. */
  forcePathStyle: boolean;
  /** Key prefix inside the bucket, so several deployments can share one. */
  prefix: string;
}

function s3Config(env: NodeJS.ProcessEnv): S3Config | undefined {
  if (!env.S3_BUCKET) return undefined;
  const accessKeyId = env.S3_ACCESS_KEY_ID;
  const secretAccessKey = env.S3_SECRET_ACCESS_KEY;
  if (Boolean(accessKeyId) !== Boolean(secretAccessKey))
    throw new Error('S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY are set together or not at all');
  return {
    bucket: env.S3_BUCKET,
    endpoint: env.S3_ENDPOINT || undefined,
    region: env.S3_REGION || env.AWS_REGION || 'us-east-1',
    credentials: accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey } : undefined,
    forcePathStyle: env.S3_FORCE_PATH_STYLE ? env.S3_FORCE_PATH_STYLE === '1' : Boolean(env.S3_ENDPOINT),
    prefix: env.S3_PREFIX || '',
  };
}

function int(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  return n;
}

function tokenSecret(env: NodeJS.ProcessEnv, dataDir: string): Buffer {
  if (env.TOKEN_SECRET) {
    if (env.TOKEN_SECRET.length < 32) throw new Error('TOKEN_SECRET must be at least 32 characters');
    return Buffer.from(env.TOKEN_SECRET, 'utf8');
  }
  // Embedded mode: one random secret kept beside the data, never in the repository.
  const file = path.join(dataDir, '.token-secret');
  if (!existsSync(file)) {
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(file, randomBytes(32).toString('hex'), { flag: 'wx', mode: 0o600 });
  }
  chmodSync(file, 0o600);
  return Buffer.from(readFileSync(file, 'utf8').trim(), 'utf8');
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = int(env, 'PORT', 8080);
  const host = env.HOST || '127.0.0.1';
  const dataDir = path.resolve(env.DATA_DIR || './data');
  const publicBaseUrl = (
    env.PUBLIC_BASE_URL || `http://${host.includes(':') ? `[${host}]` : host}:${port}`
  ).replace(/\/+$/, '');
  if (!/^https?:\/\//.test(publicBaseUrl))
    throw new Error('PUBLIC_BASE_URL must start with http:// or https://');
  const databaseUrl = env.DATABASE_URL || `sqlite:${path.join(dataDir, 'pdfedit.sqlite')}`;
  return {
    port,
    host,
    dataDir,
    publicBaseUrl,
    databaseUrl,
    redisUrl: env.REDIS_URL || undefined,
    tokenSecret: tokenSecret(env, dataDir),
    allowPrivateUrls: env.ALLOW_PRIVATE_URLS === '1' || env.ALLOW_PRIVATE_URLS === 'true',
    pdfiumLibPath: path.resolve(
      env.PDFIUM_LIB_PATH || path.join(PROJECT_ROOT, 'vendor/pdfium/lib/libpdfium.so'),
    ),
    engineThreads: int(env, 'ENGINE_THREADS', 2),
    engineProcesses: Math.max(1, int(env, 'ENGINE_PROCESSES', availableParallelism())),
    engineMemoryMb: Math.max(0, int(env, 'ENGINE_MEMORY_MB', 2048)),
    engineRecycleMb: Math.max(64, int(env, 'ENGINE_RECYCLE_MB', 400)),
    syncTimeoutMs: int(env, 'SYNC_TIMEOUT_MS', 60_000),
    fetch: {
      maxBytes: int(env, 'FETCH_MAX_BYTES', 200 * 1024 * 1024),
      timeoutMs: int(env, 'FETCH_TIMEOUT_MS', 30_000),
      maxRedirects: 5,
    },
    trustedProxies: (env.TRUSTED_PROXIES || '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    logLevel: env.LOG_LEVEL || 'info',
    fileTtlMs: int(env, 'FILE_TTL_MS', 24 * 60 * 60 * 1000),
    s3: s3Config(env),
    rateLimitPrefix: env.RATE_LIMIT_PREFIX || 'pdfedit:rl:',
    rateLimitFactor: Math.max(1, int(env, 'RATE_LIMIT_FACTOR', 1)),
    jobs: {
      queuePrefix: env.QUEUE_PREFIX || 'pdfedit',
      workers: int(env, 'JOB_WORKERS', int(env, 'ENGINE_THREADS', 2)),
      leaseMs: Math.max(1_000, int(env, 'JOB_LEASE_MS', 30_000)),
      reconcileMs: Math.max(100, int(env, 'JOB_RECONCILE_MS', 15_000)),
      timeoutMs: Math.max(1_000, int(env, 'JOB_TIMEOUT_MS', 15 * 60_000)),
      batchShards: Math.max(1, int(env, 'BATCH_SHARDS', 4)),
      shutdownGraceMs: int(env, 'WORKER_GRACE_MS', 20_000),
      csvMaxBytes: int(env, 'CSV_MAX_BYTES', 20 * 1024 * 1024),
      webhookTimeoutMs: Math.max(100, int(env, 'WEBHOOK_TIMEOUT_MS', 10_000)),
      webhookPollMs: Math.max(50, int(env, 'WEBHOOK_POLL_MS', 5_000)),
      retentionMs: 30 * 24 * 60 * 60 * 1000,
    },
    now: Date.now,
    accounts: {
      smtpUrl: env.SMTP_URL || undefined,
      mailFrom: env.MAIL_FROM || 'pdfedit <no-reply@localhost>',
      stripeSecretKey: env.STRIPE_SECRET_KEY || undefined,
      stripeWebhookSecret: env.STRIPE_WEBHOOK_SECRET || undefined,
      stripeApiBase: env.STRIPE_API_BASE || undefined,
    },
  };
}
