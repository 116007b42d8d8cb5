import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from "node:crypto";

/**
 * Passwords are hashed with scrypt (memory-hard; in Node, no native addon to build). The standard parameters
 * follow OWASP's scrypt row (N=2^15, r=8, p=3: 32 MiB, about a quarter of a second here). The parameters are
 * stored with each hash, so raising them later keeps old hashes verifiable. `test` (1 MiB, about a
 * millisecond) is for test suites only (PROMPTSTORE_PASSWORD_HASH_COST; the server warns at start): most of
 * their time went to hashing.
 */
export const PASSWORD_COSTS = {
  standard: { N: 2 ** 15, r: 8, p: 3 },
  test: { N: 2 ** 10, r: 8, p: 1 },
} as const;

export type PasswordCost = keyof typeof PASSWORD_COSTS;
const KEY_LENGTH = 32;

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password.normalize("NFC"), salt, KEY_LENGTH, { ...options, maxmem: 256 * 1024 * 1024 }, (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  );
}

export async function hashPassword(password: string, cost: PasswordCost = "standard"): Promise<string> {
  const params = PASSWORD_COSTS[cost];
  const salt = randomBytes(16);
  const key = await derive(password, salt, params);
  return ["scrypt", params.N, params.r, params.p, salt.toString("base64"), key.toString("base64")].join("$");
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, expected] = stored.split("$");
  if (scheme !== "scrypt" || !salt || !expected) return false;
  const want = Buffer.from(expected, "base64");
  const key = await derive(password, Buffer.from(salt, "base64"), { N: Number(n), r: Number(r), p: Number(p) });
  return key.length === want.length && timingSafeEqual(key, want);
}

/**
 * A hash of nothing anyone knows: verified against when the e-mail is unknown, so both take as long (at the
 * cost new hashes are made at).
 */
const decoys = new Map<PasswordCost, Promise<string>>();
export function decoyHash(cost: PasswordCost = "standard"): Promise<string> {
  let decoy = decoys.get(cost);
  if (decoy === undefined) {
    decoy = hashPassword(randomBytes(16).toString("hex"), cost);
    decoys.set(cost, decoy);
  }
  return decoy;
}

/** A password for a new account or a reset, shown once: 144 random bits. */
export function generatePassword(): string {
  return randomBytes(18).toString("base64url");
}
