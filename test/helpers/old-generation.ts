import v8 from 'node:v8';
import vm from 'node:vm';

// A full (mark-compact) collection on demand, without starting the test process with
// --expose-gc: the flag is read when `gc` is looked up in a fresh context.
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

const oldSpaceUsed = () =>
  v8.getHeapSpaceStatistics().find((s) => s.space_name === 'old_space')?.space_used_size ?? 0;

/**
 * Bytes a call of `step` leaves in V8's old generation, on average over `count` calls with
 * no full collection in between (after `warm` calls that settle statements, compiled code
 * and inline caches). What lands there is freed only by a full collection, so a service
 * that leaves some per request grows its heap, and its resident set, between those
 * (issue 18 item 6). A full collection during the calls could only make it smaller.
 */
export async function oldGenerationBytesPerCall(
  step: (i: number) => Promise<unknown>,
  count = 3000,
  warm = 500,
): Promise<number> {
  let i = 0;
  for (; i < warm; i++) await step(i);
  gc();
  const before = oldSpaceUsed();
  for (const end = i + count; i < end; i++) await step(i);
  return (oldSpaceUsed() - before) / count;
}
