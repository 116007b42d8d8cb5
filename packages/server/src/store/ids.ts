import { randomBytes } from "node:crypto";

/** Opaque random ids with a type prefix, so an id in a log says what it names. */
export function newId(
  kind: "org" | "proj" | "key" | "usr" | "rel" | "inv" | "con" | "exa" | "ds" | "ev" | "plan",
): string {
  return `${kind}_${randomBytes(12).toString("hex")}`;
}

export const now = (): string => new Date().toISOString();
