import type { Store } from "../store/index.js";
import { checkSecretKey } from "./key-check.js";
import { type ResolvedSecretKey, resolveSecretKey, type SecretKeySettings } from "./secret-key.js";

/** The server's secret key for this store, resolved and proven to open the store's secrets. */
export async function openSecrets(
  settings: SecretKeySettings,
  store: Store,
  databaseLocation: string,
): Promise<ResolvedSecretKey> {
  const resolved = resolveSecretKey(settings, store.dialect, databaseLocation);
  await checkSecretKey(store, resolved.box);
  return resolved;
}
