import { badRequest } from "@promptstore/core/errors";

export interface ListPosition {
  created_at: string;
  id: string;
}

export function encodeCursor(position: ListPosition): string {
  return Buffer.from(JSON.stringify([position.created_at, position.id])).toString("base64url");
}

export function decodeCursor(cursor: string): ListPosition {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (Array.isArray(value) && value.length === 2) {
      const [created_at, id] = value as unknown[];
      if (typeof created_at === "string" && typeof id === "string") return { created_at, id };
    }
  } catch {
    // fall through to the one error below
  }
  throw badRequest("cursor: is not a valid cursor; pass next_cursor from the previous page");
}
