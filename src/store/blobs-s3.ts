import { createHash } from 'node:crypto';
import { Readable, Transform } from 'node:stream';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { S3Config } from '../config.js';
import { ApiError } from '../kernel/api-error.js';
import { assertBlobKey, type BlobPutResult, type BlobReadResult, type BlobStore } from './blobs.js';

function tooLarge(maxBytes: number): ApiError {
  return new ApiError('too_large', `The document is larger than the plan allows (${maxBytes} bytes).`);
}

function isNotFound(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e?.name === 'NoSuchKey' || e?.name === 'NotFound' || e?.$metadata?.httpStatusCode === 404;
}

/**
 * Blobs in an S3-compatible bucket (AWS SDK v3), selected when S3_BUCKET is set.
 *
 * A put streams through a meter (size cap and sha256) into lib-storage's Upload, which
 * sends small bodies as one PUT and large ones as a multipart upload. Both become visible
 * only when complete, so a reader never sees half a blob; over the cap the meter fails the
 * stream, the Upload aborts (multipart parts are discarded) and nothing is stored.
 */
export class S3BlobStore implements BlobStore {
  readonly client: S3Client;

  constructor(
    private readonly cfg: S3Config,
    client?: S3Client,
  ) {
    const options: S3ClientConfig = {
      region: cfg.region,
      forcePathStyle: cfg.forcePathStyle,
      ...(cfg.endpoint ? { endpoint: cfg.endpoint } : {}),
      ...(cfg.credentials ? { credentials: cfg.credentials } : {}),
    };
    this.client = client ?? new S3Client(options);
  }

  private keyOf(key: string): string {
    assertBlobKey(key);
    return `${this.cfg.prefix}${key}`;
  }

  async put(key: string, body: Readable | Buffer, opts: { maxBytes: number }): Promise<BlobPutResult> {
    const objectKey = this.keyOf(key);
    if (Buffer.isBuffer(body) && body.length > opts.maxBytes) throw tooLarge(opts.maxBytes);
    const hash = createHash('sha256');
    let size = 0;
    let overLimit = false;
    const meter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        size += chunk.length;
        if (size > opts.maxBytes) {
          overLimit = true;
          return done(tooLarge(opts.maxBytes));
        }
        hash.update(chunk);
        done(null, chunk);
      },
    });
    const source = Buffer.isBuffer(body) ? Readable.from([body]) : body;
    source.on('error', (err) => meter.destroy(err));
    source.pipe(meter);
    const upload = new Upload({
      client: this.client,
      params: {
        Bucket: this.cfg.bucket,
        Key: objectKey,
        Body: meter,
        ContentType: 'application/octet-stream',
      },
      queueSize: 2,
      leavePartsOnError: false,
    });
    try {
      await upload.done();
    } catch (err) {
      source.unpipe(meter);
      if (overLimit) {
        // Like the disk store: the rest of the body is not read. The caller answers 413 and
        // closes the connection; destroying the request here would reset the socket before
        // that answer is written.
        source.pause();
        throw tooLarge(opts.maxBytes);
      }
      source.destroy();
      throw err;
    }
    if (overLimit) {
      // The meter failed after the last part was sent: the object must not stay.
      await this.delete(key);
      throw tooLarge(opts.maxBytes);
    }
    return { size, sha256: hash.digest('hex') };
  }

  async get(key: string): Promise<BlobReadResult | undefined> {
    try {
      const out = await this.client.send(
        new GetObjectCommand({ Bucket: this.cfg.bucket, Key: this.keyOf(key) }),
      );
      if (!out.Body) return undefined;
      return { stream: out.Body as Readable, size: Number(out.ContentLength ?? 0) };
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async stat(key: string): Promise<{ size: number } | undefined> {
    try {
      const out = await this.client.send(
        new HeadObjectCommand({ Bucket: this.cfg.bucket, Key: this.keyOf(key) }),
      );
      return { size: Number(out.ContentLength ?? 0) };
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.cfg.bucket, Key: this.keyOf(key) }));
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  close(): void {
    this.client.destroy();
  }
}
