import type { MultipartFile, MultipartValue } from '@fastify/multipart';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerHookHandler } from 'fastify';
import { quotaCheck } from '../billing/meter.js';
import { isAccountPlan, PLANS } from '../billing/plans.js';
import { toEngineEdits } from '../domain/edit-request.js';
import { runEdit } from '../domain/run-edit.js';
import { selfDb } from '../domain/sessions.js';
import { ApiError } from '../kernel/api-error.js';
import { esc, layout, messagePage } from './account-pages-view.js';

const MAX_PHRASE = 500;

/**
 * "Try it" on the account page: upload a PDF, find a phrase, replace it, see the before
 * and after previews of each change, download the output. A plain multipart form (no
 * JavaScript), run as the account's live key would run it: the same quota, plan limits,
 * concurrency and billing. The CSRF token rides in the action's query (the multipart body
 * is read only by the handler), checked before anything is read.
 */
export function tryItRoutes(
  fastify: FastifyInstance,
  guard: {
    signedIn: preHandlerHookHandler;
    html: (reply: FastifyReply, status: number, body: string) => FastifyReply;
  },
): void {
  const csrfFromQuery = async (request: FastifyRequest) => {
    request.body = { _csrf: (request.query as { _csrf?: string })._csrf };
  };
  fastify.post(
    '/account/try',
    {
      schema: {
        hide: true,
        querystring: Type.Object({ _csrf: Type.Optional(Type.String({ maxLength: 200 })) }),
      },
      preHandler: [csrfFromQuery, fastify.csrfProtection, guard.signedIn],
    },
    async (request, reply) => {
      const accountId = request.sessionAccountId!;
      const now = fastify.config.now();
      const a = await selfDb(fastify.db)
        .selectFrom('accounts')
        .select('plan')
        .where('id', '=', accountId)
        .executeTakeFirstOrThrow();
      const planName = isAccountPlan(a.plan) ? a.plan : 'free';
      const plan = PLANS[planName];
      let file: Buffer | undefined;
      const fields: Record<string, string> = {};
      try {
        for await (const part of request.parts({
          limits: { fileSize: plan.maxFileBytes, files: 1, fields: 3, fieldSize: 4 * MAX_PHRASE },
        })) {
          if (part.type === 'file') {
            if (part.fieldname !== 'file')
              throw new ApiError('invalid_request', 'Unexpected file in the form.');
            file = await (part as MultipartFile).toBuffer();
          } else {
            const v = part as MultipartValue;
            fields[v.fieldname] = String(v.value);
          }
        }
      } catch (err) {
        if (err instanceof ApiError) throw err;
        const code = (err as { code?: string }).code;
        if (code === 'FST_REQ_FILE_TOO_LARGE')
          throw new ApiError(
            'too_large',
            `The file is larger than the ${plan.name} plan's ${plan.maxFileBytes / 1024 / 1024} MB.`,
          );
        throw new ApiError('invalid_request', 'The form could not be read.');
      }
      const find = (fields.find ?? '').trim();
      const replace = fields.replace ?? '';
      if (!file || file.length === 0) throw new ApiError('invalid_request', 'Choose a PDF file to upload.');
      if (!find || find.length > MAX_PHRASE || replace.length > MAX_PHRASE)
        throw new ApiError(
          'invalid_request',
          `Give a phrase to find (at most ${MAX_PHRASE} characters) and its replacement.`,
        );
      const info = await fastify.engine.open(file, undefined, undefined, plan.engineLimits);
      if (info.pageCount > plan.syncPageLimit)
        throw new ApiError(
          'too_large',
          `Try it takes documents up to ${plan.syncPageLimit} pages; use the API (a job) for longer ones.`,
        );
      if (info.signatures.length > 0)
        throw new ApiError(
          'signed_document',
          'The document is digitally signed: an edit would break the signature.',
        );
      const subject = { kind: 'account' as const, accountId, mode: 'live' as const, plan: planName };
      await quotaCheck(fastify.db, subject, info.pageCount, now);
      const edits = toEngineEdits([{ op: 'replace', find, replace }], info.pageCount);
      const principal = { accountId, keyId: 'account-page', mode: 'live' as const, plan: planName };
      const outcome = await fastify.editSlots(principal, () =>
        runEdit(fastify, {
          owner: { accountId, mode: 'live' },
          subject,
          workId: `try_${request.id}`,
          pdf: file,
          password: undefined,
          edits,
          options: undefined,
          mark: undefined,
          sourceFileId: undefined,
        }),
      );
      if (outcome.kind === 'all_failed') {
        const why = outcome.result.failed.map((f) => f.message).join('; ');
        return guard.html(
          reply,
          422,
          messagePage('Not changed', `The replacement could not be made safely and was rolled back: ${why}`),
        );
      }
      const body = outcome.body;
      if (body.changes.length === 0) {
        return guard.html(
          reply,
          200,
          messagePage('Not found', `“${find}” was not found in the document; nothing was changed or billed.`),
        );
      }
      const changes = body.changes
        .map(
          (
            c,
            i,
          ) => `<section aria-labelledby="change-${i}"><h2 id="change-${i}">Change ${i + 1}, page ${c.page}</h2>
<div class="row">${c.before_preview_url ? `<figure><img src="${esc(c.before_preview_url)}" alt="Page ${c.page} before the change" style="max-width:100%;border:1px solid #c8c8c8"><figcaption>Before</figcaption></figure>` : ''}
${c.after_preview_url ? `<figure><img src="${esc(c.after_preview_url)}" alt="Page ${c.page} after the change" style="max-width:100%;border:1px solid #c8c8c8"><figcaption>After</figcaption></figure>` : ''}</div>
<p class="muted">Font: ${esc(c.font_used)} (${esc(c.font_source)}); verified: ${c.verified ? 'yes' : 'no'}.</p></section>`,
        )
        .join('');
      return guard.html(
        reply,
        200,
        layout(
          'Try it: result',
          `<p class="notice" role="status">${body.changes.length} change(s), ${body.usage.pages_billed} page(s) billed.</p>
${body.output ? `<p><a href="${esc(body.output.url)}" download>Download the edited PDF</a> (kept until ${esc(body.output.expires_at)})</p>` : ''}
${changes}<p><a href="/account">Back to the account</a></p>`,
          { signedIn: true, csrf: reply.generateCsrf() },
        ),
      );
    },
  );
}
