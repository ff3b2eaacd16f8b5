import type { EngineEditResult } from '../engine/tasks.js';

/**
 * The one mapping of the engine's unmatched and failed edits to the API's shape (SPEC
 * "Edit result"): the sync answer, the 422 edit_failed body and a batch record all use it,
 * so none drops a field (a batch record once lost `field`).
 */
export function unmatchedEntries(result: Pick<EngineEditResult, 'unmatched'>) {
  return result.unmatched.map((u) => ({ index: u.index, op: u.op, find: u.find }));
}

export function failedEntries(result: Pick<EngineEditResult, 'failed'>) {
  return result.failed.map((f) => ({
    index: f.index,
    op: f.op,
    reason: f.reason,
    message: f.message,
    ...(f.field ? { field: f.field } : {}),
  }));
}
