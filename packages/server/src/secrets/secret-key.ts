import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import type { DialectName } from "../store/dialect-name.js";
import { KEY_BYTES, SecretBox } from "./secret-box.js";

/** What start-up reports when the secret key is missing, malformed or not the store's: printed as is, no stack. */
export class SecretKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SecretKeyError";
  }
}

export interface SecretKeySettings {
  PROMPTSTORE_SECRET_KEY?: string | undefined;
  PROMPTSTORE_SECRET_KEY_FILE?: string | undefined;
  PROMPTSTORE_SECRET_KEY_PREVIOUS?: string[] | undefined;
}

export interface ResolvedSecretKey {
  box: SecretBox;
  /** Where the key came from: the environment, a file that was there, a file made now, or nowhere (memory). */
  source: "environment" | "file" | "generated" | "ephemeral";
  file?: string;
}

const HOW_TO_MAKE = "create one with `promptstore secret-key generate`";

/** A key as written by an operator: 64 hex characters, or base64 (or base64url) of 32 bytes. */
export function parseSecretKey(text: string, name: string): Buffer {
  const value = text.trim();
  const bytes = /^[0-9a-fA-F]{64}$/.test(value)
    ? Buffer.from(value, "hex")
    : /^[A-Za-z0-9+/_-]{43}={0,1}$/.test(value)
      ? Buffer.from(value, "base64")
      : undefined;
  if (!bytes || bytes.length !== KEY_BYTES) {
    throw new SecretKeyError(
      `${name}: must be ${KEY_BYTES} random bytes written as 64 hex characters or as base64; ${HOW_TO_MAKE}`,
    );
  }
  return bytes;
}

/** A fresh key as an operator stores it (hex). */
export function generateSecretKey(): string {
  return randomBytes(KEY_BYTES).toString("hex");
}

/** The file beside an embedded database that holds its generated key. */
export function defaultKeyFile(databaseLocation: string): string {
  return `${databaseLocation}.key`;
}

/**
 * The server's secret key: PROMPTSTORE_SECRET_KEY, else the key file (PROMPTSTORE_SECRET_KEY_FILE, or on the
 * embedded default the file beside the database, made on first start with mode 0600). PostgreSQL has no
 * file beside it and every instance must share the key, so there it must be given.
 */
export function resolveSecretKey(
  settings: SecretKeySettings,
  dialect: DialectName,
  databaseLocation: string,
): ResolvedSecretKey {
  const previous = (settings.PROMPTSTORE_SECRET_KEY_PREVIOUS ?? []).map((k, i) =>
    parseSecretKey(k, `PROMPTSTORE_SECRET_KEY_PREVIOUS[${i}]`),
  );
  if (settings.PROMPTSTORE_SECRET_KEY !== undefined) {
    return {
      box: new SecretBox(parseSecretKey(settings.PROMPTSTORE_SECRET_KEY, "PROMPTSTORE_SECRET_KEY"), previous),
      source: "environment",
    };
  }
  const file =
    settings.PROMPTSTORE_SECRET_KEY_FILE ??
    (dialect === "sqlite" && databaseLocation !== ":memory:" ? defaultKeyFile(databaseLocation) : undefined);
  if (file === undefined) {
    if (dialect === "sqlite") return { box: new SecretBox(randomBytes(KEY_BYTES), previous), source: "ephemeral" };
    throw new SecretKeyError(
      "PROMPTSTORE_SECRET_KEY is not set: on PostgreSQL every instance must be given the same secret key, " +
        `which encrypts webhook signing secrets and model providers' API keys at rest; ${HOW_TO_MAKE} (docs/operations.md)`,
    );
  }
  const existing = readKeyFile(file);
  if (existing !== undefined) {
    return { box: new SecretBox(parseSecretKey(existing, file), previous), source: "file", file };
  }
  if (settings.PROMPTSTORE_SECRET_KEY_FILE !== undefined) {
    throw new SecretKeyError(`PROMPTSTORE_SECRET_KEY_FILE: ${file} does not exist; ${HOW_TO_MAKE}`);
  }
  try {
    // `wx`: of two processes starting on one new database, the second reads the first one's key.
    writeFileSync(file, `${generateSecretKey()}\n`, { mode: 0o600, flag: "wx" });
    return {
      box: new SecretBox(parseSecretKey(readFileSync(file, "utf8"), file), previous),
      source: "generated",
      file,
    };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") {
      throw new SecretKeyError(`cannot write the secret key file ${file}: ${(error as Error).message}`);
    }
    const written = readKeyFile(file) ?? "";
    return { box: new SecretBox(parseSecretKey(written, file), previous), source: "file", file };
  }
}

function readKeyFile(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new SecretKeyError(`cannot read the secret key file ${file}: ${(error as Error).message}`);
  }
}
