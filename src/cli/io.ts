/** Where the CLI writes and what it reads: the real process by default, captured in tests. */
export interface CliIo {
  out(line: string): void;
  err(line: string): void;
  env: NodeJS.ProcessEnv;
}

export const processIo: CliIo = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  env: process.env,
};

/** Exit codes: 0 done, 1 the operation failed or found nothing, 2 the command line is wrong. */
export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

/** node:util parseArgs throws TypeErrors with ERR_PARSE_ARGS_* codes for bad command lines. */
export function isParseArgsError(err: unknown): err is Error {
  return err instanceof Error && String((err as { code?: unknown }).code).startsWith('ERR_PARSE_ARGS');
}
