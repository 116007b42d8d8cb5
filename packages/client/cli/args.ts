import { CliError } from "./output.js";

/**
 * The command line's one parser, small enough to start in no time (no commander): `--name value`,
 * `--name=value`, boolean flags, and flags whose value is optional (`--publish [label]`: the next word is its
 * value unless it starts with `-` or is needed as a positional argument). Everything else is positional.
 */
export type OptionKind = "boolean" | "string" | "optional";

export interface OptionSpec {
  kind: OptionKind;
  /** `<value>` in the help, e.g. `label`. */
  value?: string;
  help: string;
}

/** What a command does with its positional arguments and its options (camelCased). */
export type Handler = (positionals: string[], options: Record<string, any>) => Promise<void>;

export interface Parsed {
  positionals: string[];
  options: Record<string, string | boolean | undefined>;
}

const camel = (name: string) => name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

/** Parses `args` against `spec`; unknown options and missing values are errors naming the option. */
export function parseArgs(args: string[], spec: Record<string, OptionSpec>, positionalCount: number): Parsed {
  const positionals: string[] = [];
  const options: Parsed["options"] = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === "--") {
      positionals.push(...args.slice(i + 1));
      break;
    }
    if (!arg.startsWith("--") || arg === "--") {
      if (arg.startsWith("-") && arg !== "-") throw new CliError(`unknown option ${arg}`);
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
    const option = spec[name];
    if (option === undefined) throw new CliError(`unknown option --${name}`);
    const inline = eq === -1 ? undefined : arg.slice(eq + 1);
    if (option.kind === "boolean") {
      if (inline !== undefined) throw new CliError(`--${name} takes no value`);
      options[camel(name)] = true;
      continue;
    }
    if (inline !== undefined) {
      options[camel(name)] = inline;
      continue;
    }
    const next = args[i + 1];
    const remainingPositionals = args.slice(i + 2).filter((a) => !a.startsWith("-")).length;
    const takesNext =
      next !== undefined &&
      !next.startsWith("-") &&
      (option.kind === "string" || positionals.length + remainingPositionals >= positionalCount);
    if (option.kind === "string" && !takesNext) throw new CliError(`--${name} needs a value (<${option.value}>)`);
    options[camel(name)] = takesNext ? (next as string) : true;
    if (takesNext) i++;
  }
  return { positionals, options };
}
