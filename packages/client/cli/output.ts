/** Prints either a human line or the JSON document, as `--json` asks. */
export function emit(json: boolean, data: unknown, human: () => string): void {
  process.stdout.write(json ? `${JSON.stringify(data)}\n` : `${human()}\n`);
}

/** A failure the user can act on: printed as one line (or JSON), exit code 1, no stack trace. */
export class CliError extends Error {}
