import type { Store } from "../store/index.js";
import type { SecretBox } from "./secret-box.js";
import { SecretKeyError } from "./secret-key.js";

const CHECK_TEXT = "promptstore secret key check";
const CHECK_CONTEXT = "secret-key-check";

/**
 * Proves at start-up that the key opens this store's secrets: the first start seals a known text in the
 * store; every later start must open it. A wrong key then fails start-up with both key ids named, instead of
 * failing later on each webhook and each model run. The check is not backed up: a store restored under
 * another key starts, and says which secrets it cannot open (they must be rotated).
 */
export async function checkSecretKey(store: Store, box: SecretBox): Promise<void> {
  await store.db
    .insertInto("secret_key_check")
    .values({ id: 1, key_id: box.keyId, sealed: box.encrypt(CHECK_TEXT, CHECK_CONTEXT) })
    .onConflict((oc) => oc.column("id").doNothing())
    .execute();
  const row = await store.db
    .selectFrom("secret_key_check")
    .select(["key_id", "sealed"])
    .where("id", "=", 1)
    .executeTakeFirstOrThrow();
  let opened = false;
  try {
    opened = box.decrypt(row.sealed, CHECK_CONTEXT) === CHECK_TEXT;
  } catch {
    opened = false;
  }
  if (!opened) {
    throw new SecretKeyError(
      `the secret key (key id ${box.keyId}) is not the one this store's secrets were encrypted with ` +
        `(key id ${row.key_id}): start with that key (PROMPTSTORE_SECRET_KEY, or the key file kept with the ` +
        "database); while changing keys, give the old one in PROMPTSTORE_SECRET_KEY_PREVIOUS",
    );
  }
  if (row.key_id !== box.keyId) {
    // Opened by a previous key: from now on the check names the current one.
    await store.db
      .updateTable("secret_key_check")
      .set({ key_id: box.keyId, sealed: box.encrypt(CHECK_TEXT, CHECK_CONTEXT) })
      .where("id", "=", 1)
      .execute();
  }
}
