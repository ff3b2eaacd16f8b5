import { Type } from '@sinclair/typebox';

/** GET /v1/limits (API-DECISIONS "Endpoint bodies"). Open object: members may be added. */
export const LimitsResponse = Type.Object(
  {
    plan: Type.String({ description: 'free, starter, growth or scale; keyless for anonymous use.' }),
    mode: Type.String({ description: 'live or test (the key mode).' }),
    monthly_pages: Type.Integer({ description: 'Pages a month; test keys have the free plan allowance.' }),
    requests_per_minute: Type.Integer(),
    concurrency: Type.Integer(),
    max_file_bytes: Type.Integer(),
    max_pages: Type.Integer(),
    sync_page_limit: Type.Integer({ description: 'Documents over it are answered 202 as a job.' }),
    max_batch_records: Type.Integer(),
    watermark_off_allowed: Type.Boolean(),
  },
  { $id: 'Limits', additionalProperties: true, description: 'What the calling key may do.' },
);

/** GET /v1/usage (API-DECISIONS "Endpoint bodies"). Open object. */
export const UsageResponse = Type.Object(
  {
    period_start: Type.String({ format: 'date-time', description: 'Start of the calendar month (UTC).' }),
    period_end: Type.String({ format: 'date-time', description: 'Start of the next month (exclusive).' }),
    pages_used: Type.Integer({ description: 'Billing units charged this period (an OCR page counts five).' }),
    allowance: Type.Integer({ description: "The period's allowance before credit packs." }),
    credit_pages: Type.Integer({ description: 'Credit-pack pages left (never expire; live mode only).' }),
    remaining: Type.Integer({ description: 'Allowance left plus credit pages.' }),
    overage_pages: Type.Integer({ description: 'Pages beyond allowance and credits (Starter overage).' }),
  },
  { $id: 'Usage', additionalProperties: true, description: 'Pages used and remaining.' },
);
