import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { isSealed, keyIdOf, SecretBox, SecretUnreadable, sealedKeyId } from "../../src/secrets/secret-box.js";
import { parseSecretKey, SecretKeyError } from "../../src/secrets/secret-key.js";

const KEY = Buffer.from("11".repeat(32), "hex");

describe("the secret box (AES-256-GCM under the server's secret key)", () => {
  it("round-trips any text, and never holds it in the clear", () => {
    const box = new SecretBox(KEY);
    for (const plain of ["whsec_abc", "sk-proj-" + "x".repeat(200), "ünïcödé 🔑", ""]) {
      const sealed = box.encrypt(plain, "webhook:wh_1");
      expect(isSealed(sealed)).toBe(true);
      expect(sealed.includes(plain) && plain !== "").toBe(false);
      expect(box.decrypt(sealed, "webhook:wh_1")).toBe(plain);
    }
  });

  it("seals the same text differently each time (a fresh IV), naming the key", () => {
    const box = new SecretBox(KEY);
    const a = box.encrypt("same", "c");
    const b = box.encrypt("same", "c");
    expect(a).not.toBe(b);
    expect(sealedKeyId(a)).toBe(keyIdOf(KEY));
    expect(a.split(":").slice(0, 3)).toEqual(["enc", "v1", keyIdOf(KEY)]);
  });

  it("does not open in another record's context: a ciphertext copied between rows is refused", () => {
    const box = new SecretBox(KEY);
    const sealed = box.encrypt("whsec_abc", "webhook:wh_1");
    expect(() => box.decrypt(sealed, "webhook:wh_2")).toThrow(SecretUnreadable);
    try {
      box.decrypt(sealed, "webhook:wh_2");
    } catch (error) {
      expect((error as SecretUnreadable).reason).toBe("tampered");
    }
  });

  it("refuses an altered ciphertext", () => {
    const box = new SecretBox(KEY);
    const sealed = box.encrypt("whsec_abc", "c");
    const body = sealed.split(":").at(-1) as string;
    const flipped = Buffer.from(body, "base64url");
    flipped[0] = (flipped[0] as number) ^ 1;
    const altered = `${sealed.slice(0, sealed.length - body.length)}${flipped.toString("base64url")}`;
    expect(() => box.decrypt(altered, "c")).toThrow("was altered or belongs to another record");
  });

  it("says which key a secret needs when this box lacks it, and opens it with that key as a previous one", () => {
    const old = randomBytes(32);
    const sealed = new SecretBox(old).encrypt("whsec_abc", "c");
    const current = new SecretBox(KEY);
    expect(current.canOpen(sealed)).toBe(false);
    expect(() => current.decrypt(sealed, "c")).toThrow(
      `the secret was encrypted with another secret key (key id ${keyIdOf(old)})`,
    );
    const rotating = new SecretBox(KEY, [old]);
    expect(rotating.canOpen(sealed)).toBe(true);
    expect(rotating.decrypt(sealed, "c")).toBe("whsec_abc");
    expect(sealedKeyId(rotating.encrypt("x", "c"))).toBe(keyIdOf(KEY));
  });

  it("tells a plain value from a sealed one", () => {
    expect(isSealed("whsec_abc")).toBe(false);
    expect(() => new SecretBox(KEY).decrypt("whsec_abc", "c")).toThrow("the secret is not encrypted");
  });
});

describe("a secret key as an operator writes it", () => {
  it("reads 64 hex characters and base64 of 32 bytes alike", () => {
    expect(parseSecretKey("11".repeat(32), "K")).toEqual(KEY);
    expect(parseSecretKey(` ${KEY.toString("base64")}\n`, "K")).toEqual(KEY);
    expect(parseSecretKey(KEY.toString("base64url"), "K")).toEqual(KEY);
  });

  it.each([["short"], ["11".repeat(31)], ["zz".repeat(32)], [randomBytes(16).toString("base64")]])(
    "refuses %s, naming the variable and how to make one",
    (value) => {
      expect(() => parseSecretKey(value, "PROMPTSTORE_SECRET_KEY")).toThrow(SecretKeyError);
      expect(() => parseSecretKey(value, "PROMPTSTORE_SECRET_KEY")).toThrow(
        "PROMPTSTORE_SECRET_KEY: must be 32 random bytes written as 64 hex characters or as base64; create one with `promptstore secret-key generate`",
      );
    },
  );
});
