import type { TSchema } from '@sinclair/typebox';
import { LimitsResponse, UsageResponse } from './account.js';
import { BatchBody } from './batch.js';
import { Ack, CheckoutRequest, CheckoutResult } from './billing.js';
import { EditBody } from './edit.js';
import { ErrorEnvelope } from './errors.js';
import { FileReservation } from './files.js';
import { FontsResponse } from './fonts.js';
import { Health } from './health.js';
import { BatchRecord, Job, JobDetail, JobDone, JobList } from './jobs.js';
import { PreviewBody } from './preview.js';
import { Change, EditResult, Queued } from './results.js';
import { TextBody, TextResult } from './text.js';
import { WebhookSecret } from './webhook-secret.js';

/**
 * Every schema with an `$id`: added to Fastify once (plugins/app/schemas.ts) and named so
 * in the OpenAPI document. A new named schema is added here; `ref(schema)` refers to it.
 */
export const NAMED_SCHEMAS: TSchema[] = [
  ErrorEnvelope,
  EditBody,
  EditResult,
  Change,
  Queued,
  Job,
  JobDetail,
  JobDone,
  BatchRecord,
  JobList,
  BatchBody,
  TextBody,
  TextResult,
  PreviewBody,
  LimitsResponse,
  UsageResponse,
  FileReservation,
  FontsResponse,
  CheckoutRequest,
  CheckoutResult,
  Health,
  Ack,
  WebhookSecret,
];
