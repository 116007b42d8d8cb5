import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";

/**
 * Encrypts the secrets the server must read back (webhook signing secrets, model providers' API keys) with
 * AES-256-GCM under the server's secret key (PROMPTSTORE_SECRET_KEY). A ciphertext names the key that made
 * it, so a store restored under another key can tell which secrets it cannot open instead of failing on
 * each one, and a previous key can still open what it wrote while the key rotates.
 *
 * Format: `enc:v1:<key id>:<base64url iv>:<base64url ciphertext and tag>`.
 */
export class SecretBox {
  readonly keyId: string;
  private readonly keys = new Map<string, Buffer>();

  constructor(
    private readonly key: Buffer,
    previous: readonly Buffer[] = [],
  ) {
    if (key.length !== KEY_BYTES) throw new Error(`a secret key is ${KEY_BYTES} bytes`);
    this.keyId = keyIdOf(key);
    for (const old of previous) this.keys.set(keyIdOf(old), old);
    this.keys.set(this.keyId, key);
  }

  /** A box with a random key that lives as long as the process: for tests and throw-away stores. */
  static ephemeral(): SecretBox {
    return new SecretBox(randomBytes(KEY_BYTES));
  }

  /**
   * `context` names where the secret belongs (`webhook:<id>`); it is authenticated, not stored, so a
   * ciphertext copied into another row does not open there.
   */
  encrypt(plain: string, context: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    cipher.setAAD(Buffer.from(context, "utf8"));
    const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final(), cipher.getAuthTag()]);
    return `${PREFIX}${this.keyId}:${iv.toString("base64url")}:${body.toString("base64url")}`;
  }

  /** The plain text; throws {@link SecretUnreadable} when no key of this box opens it. */
  decrypt(sealed: string, context: string): string {
    const parts = parseSealed(sealed);
    if (!parts) throw new SecretUnreadable("not-encrypted", undefined);
    const key = this.keys.get(parts.keyId);
    if (!key) throw new SecretUnreadable("other-key", parts.keyId);
    try {
      const decipher = createDecipheriv("aes-256-gcm", key, parts.iv);
      decipher.setAAD(Buffer.from(context, "utf8"));
      decipher.setAuthTag(parts.body.subarray(parts.body.length - TAG_BYTES));
      return Buffer.concat([
        decipher.update(parts.body.subarray(0, parts.body.length - TAG_BYTES)),
        decipher.final(),
      ]).toString("utf8");
    } catch {
      throw new SecretUnreadable("tampered", parts.keyId);
    }
  }

  /** Whether this box holds the key `sealed` was made with (without trying to open it). */
  canOpen(sealed: string): boolean {
    const parts = parseSealed(sealed);
    return parts !== undefined && this.keys.has(parts.keyId);
  }
}

/** Why a sealed secret could not be opened: the message never holds any part of the secret. */
export class SecretUnreadable extends Error {
  constructor(
    readonly reason: "not-encrypted" | "other-key" | "tampered",
    readonly keyId: string | undefined,
  ) {
    super(
      reason === "other-key"
        ? `the secret was encrypted with another secret key (key id ${keyId})`
        : reason === "tampered"
          ? "the secret does not open with its key: it was altered or belongs to another record"
          : "the secret is not encrypted",
    );
    this.name = "SecretUnreadable";
  }
}

/** Whether a stored value is a ciphertext of this format (a migration encrypts the ones that are not). */
export function isSealed(value: string): boolean {
  return value.startsWith(PREFIX);
}

/** The id a ciphertext names, or undefined when the value is not one. */
export function sealedKeyId(value: string): string | undefined {
  return parseSealed(value)?.keyId;
}

/**
 * A key's public name: the first 8 bytes of a SHA-256 over a label and the key, in hex. It tells keys
 * apart in messages and ciphertexts and reveals nothing usable about the key.
 */
export function keyIdOf(key: Buffer): string {
  return createHash("sha256").update("promptstore secret key id\0").update(key).digest("hex").slice(0, 16);
}

export const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const PREFIX = "enc:v1:";

function parseSealed(sealed: string): { keyId: string; iv: Buffer; body: Buffer } | undefined {
  if (!sealed.startsWith(PREFIX)) return undefined;
  const [keyId, iv, body] = sealed.slice(PREFIX.length).split(":");
  if (!keyId || !iv || !body) return undefined;
  const ivBytes = Buffer.from(iv, "base64url");
  const bodyBytes = Buffer.from(body, "base64url");
  if (ivBytes.length !== IV_BYTES || bodyBytes.length < TAG_BYTES) return undefined;
  return { keyId, iv: ivBytes, body: bodyBytes };
}
