/** Prints either a human line or the JSON document, as `--json` asks. */
export function emit(json: boolean, data: unknown, human: () => string): void {
  process.stdout.write(json ? `${JSON.stringify(data)}\n` : `${human()}\n`);
}

/**
 * A failure the user can act on: printed as one line (or JSON), no stack trace. Its exit code is 1 unless it
 * names another, or its command says otherwise for every failure (`eval`: 2, so that 1 means "a threshold
 * failed" and nothing else).
 */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode?: number,
  ) {
    super(message);
  }
}
