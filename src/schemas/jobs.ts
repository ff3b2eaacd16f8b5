import { type Static, Type } from '@sinclair/typebox';
import { Iso, Link } from './common.js';
import { OPEN, ref } from './ref.js';
import { Change, EditStatus, Flags, resultFields } from './results.js';

const JobStatus = Type.Union(
  ['queued', 'running', 'done', 'partial', 'failed'].map((s) => Type.Literal(s)),
  { description: 'queued → running → done | partial | failed.' },
);

const ErrorBody = Type.Object({ code: Type.String(), message: Type.String(), hint: Type.String() }, OPEN);

const jobFields = {
  job_id: Type.String(),
  status: JobStatus,
  kind: Type.Union([Type.Literal('edit'), Type.Literal('batch')]),
  created_at: Iso,
  started_at: Type.Union([Iso, Type.Null()]),
  finished_at: Type.Union([Iso, Type.Null()]),
  pages_billed: Type.Integer(),
  changes_count: Type.Integer(),
  progress: Type.Object(
    { done: Type.Integer(), total: Type.Integer() },
    { ...OPEN, description: 'Pages for an edit (done when it finishes), records for a batch.' },
  ),
};

/** A job list entry. */
export const Job = Type.Object(jobFields, { $id: 'Job', ...OPEN, description: 'A job list entry.' });

/** One record of a batch: its own output document. */
export const BatchRecord = Type.Object(
  {
    index: Type.Integer({ description: '0-based position of the record (CSV: data row, header excluded).' }),
    status: EditStatus,
    ...resultFields,
    flags: Type.Optional(Flags),
    error: Type.Optional(
      Type.Object(ErrorBody.properties, {
        ...OPEN,
        description: 'Why this record failed as a whole (a missing placeholder: invalid_request).',
      }),
    ),
  },
  { $id: 'BatchRecord', ...OPEN, description: 'One record of a batch: its own output document.' },
);

const jobDetailFields = {
  ...jobFields,
  changes: Type.Optional(Type.Array(ref(Change))),
  unmatched: Type.Optional(resultFields.unmatched),
  failed: Type.Optional(resultFields.failed),
  warnings: Type.Optional(resultFields.warnings),
  flatten_skipped: resultFields.flatten_skipped,
  removed: resultFields.removed,
  residual: resultFields.residual,
  output: Type.Optional(Type.Union([Link, Type.Null()])),
  usage: Type.Optional(
    Type.Object({ pages_billed: Type.Integer(), remaining: Type.Union([Type.Integer(), Type.Null()]) }, OPEN),
  ),
  records: Type.Optional(Type.Array(Type.Union([ref(BatchRecord), Type.Null()]))),
  error: Type.Optional(
    Type.Object(ErrorBody.properties, {
      ...OPEN,
      description: 'A job that could not run at all (its input expired, the engine refused the document).',
    }),
  ),
};

const jobDetailDescription =
  'While queued or running: the job fields. Finished: also the body a synchronous edit returns ' +
  '(for a batch the top level sums up and each record has its own output in `records`).';

/** GET /v1/jobs/{job_id}. */
export const JobDetail = Type.Object(jobDetailFields, {
  $id: 'JobDetail',
  ...OPEN,
  description: jobDetailDescription,
});

/** The body of the `job.done` webhook. */
export const JobDone = Type.Object(
  { ...jobDetailFields, event: Type.Literal('job.done') },
  { $id: 'JobDone', ...OPEN, description: 'The finished job (GET /v1/jobs/{job_id}) plus `event`.' },
);

/** GET /v1/jobs. */
export const JobList = Type.Object(
  {
    data: Type.Array(ref(Job)),
    next_cursor: Type.Union([Type.String(), Type.Null()], {
      description: 'Pass as `cursor` for the next page; null on the last page.',
    }),
  },
  { $id: 'JobList', ...OPEN },
);

export const JobListQuery = Type.Object(
  {
    since: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'ISO 8601 date-time: jobs created at or after it.',
      }),
    ),
    status: Type.Optional(
      Type.String({ minLength: 1, maxLength: 32, description: 'queued, running, done, partial or failed.' }),
    ),
    cursor: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        description: 'job_id of the last row of the previous page.',
      }),
    ),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  },
  { additionalProperties: false },
);
export type JobListQuery = Static<typeof JobListQuery>;

// No length limit: an id that is not one of the caller's jobs answers 404.
export const JobParams = Type.Object({ job_id: Type.String() });
