import type { MultipartFile, MultipartValue } from '@fastify/multipart';
import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../kernel/api-error.js';
import { MULTIPART_FIELD_MAX_BYTES } from '../plugins/external/multipart.js';
import { type Edit, type EditOptions, EditOptions as EditOptionsSchema, Edits } from '../schemas/edit.js';

const editsCheck = TypeCompiler.Compile(Edits);
const optionsCheck = TypeCompiler.Compile(EditOptionsSchema);

/** The parts of the multipart form of POST /v1/edit (SPEC: no other form fields). */
export interface EditForm {
  file: Buffer;
  edits: Edit[];
  options: EditOptions | undefined;
  password: string | undefined;
}

const PARTS = ['file', 'edits', 'options', 'password'] as const;
type PartName = (typeof PARTS)[number];
const HINT = 'The multipart form takes one part each of file (the PDF), edits, options and password.';

/** A multipart field holding JSON, checked against the same schema as the JSON form. */
function parseJsonField<T>(
  name: string,
  raw: string,
  check: ReturnType<typeof TypeCompiler.Compile<TSchema>>,
): T {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new ApiError('invalid_request', `The multipart field "${name}" is not valid JSON.`);
  }
  if (!check.Check(value)) {
    const first = [...check.Errors(value)][0];
    const where = `${name}${first?.path.replaceAll('/', '.') ?? ''}`;
    throw new ApiError('invalid_request', `${where}: ${first?.message ?? 'is invalid'}.`);
  }
  return value as T;
}

/**
 * What the multipart reader threw, as an answer: our own refusals as they are, a file over
 * the plan's size 413 (the error handler maps it), everything else the parser raises
 * (a truncated body, a missing boundary, a malformed part header) 400: the request is
 * malformed, the service is fine.
 */
function formError(err: unknown): unknown {
  if (err instanceof ApiError) return err;
  const code = (err as { code?: unknown } | undefined)?.code;
  if (code === 'FST_REQ_FILE_TOO_LARGE') return err;
  if (code === 'FST_PARTS_LIMIT' || code === 'FST_FILES_LIMIT' || code === 'FST_FIELDS_LIMIT') {
    return new ApiError('invalid_request', 'The multipart form has more parts than it takes.', {
      hint: HINT,
      cause: err,
    });
  }
  return new ApiError('invalid_request', 'The multipart body is malformed or truncated.', {
    hint: 'Send multipart/form-data with a boundary and complete parts (file, edits, options, password).',
    cause: err,
  });
}

/**
 * Reads the form part by part. The count limits are one above what the form takes, so an
 * extra or repeated part is seen, and refused by its name, before the parser's own limit
 * would stop the body without saying which part was too many.
 */
export async function readEditForm(request: FastifyRequest, maxFileBytes: number): Promise<EditForm> {
  const seen = new Set<PartName>();
  let file: Buffer | undefined;
  let edits: Edit[] | undefined;
  let options: EditOptions | undefined;
  let password: string | undefined;
  const take = (name: string, isFile: boolean): PartName => {
    if (!(PARTS as readonly string[]).includes(name)) {
      throw new ApiError('invalid_request', `Unknown multipart ${isFile ? 'file ' : ''}part "${name}".`, {
        hint: HINT,
      });
    }
    const part = name as PartName;
    if ((part === 'file') !== isFile) {
      throw new ApiError(
        'invalid_request',
        part === 'file'
          ? 'The multipart part "file" must be a file upload (with a filename).'
          : `The multipart part "${part}" must be a text field, not a file.`,
        { hint: HINT },
      );
    }
    if (seen.has(part)) {
      throw new ApiError('invalid_request', `The multipart part "${part}" is given more than once.`, {
        hint: HINT,
      });
    }
    seen.add(part);
    return part;
  };
  try {
    for await (const part of request.parts({
      limits: { fileSize: maxFileBytes, files: 2, fields: PARTS.length, parts: PARTS.length + 1 },
    })) {
      if (part.type === 'file') {
        take(part.fieldname, true);
        file = await (part as MultipartFile).toBuffer();
        continue;
      }
      const field = part as MultipartValue;
      const name = take(field.fieldname, false);
      if (field.valueTruncated) {
        throw new ApiError(
          'too_large',
          `The multipart part "${name}" is larger than ${MULTIPART_FIELD_MAX_BYTES} bytes.`,
        );
      }
      const value = String(field.value);
      if (name === 'edits') edits = parseJsonField<Edit[]>('edits', value, editsCheck);
      else if (name === 'options') options = parseJsonField<EditOptions>('options', value, optionsCheck);
      else password = value;
    }
  } catch (err) {
    throw formError(err);
  }
  if (!file) throw new ApiError('invalid_request', 'The multipart form needs a "file" part with the PDF.');
  if (!edits)
    throw new ApiError('invalid_request', 'The multipart form needs an "edits" field (a JSON array).');
  return { file, edits, options, password };
}
