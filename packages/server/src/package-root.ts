/**
 * The server package's folder (packages/server/), for the files that ship beside the code: package.json and
 * the clients in sdk/. The same relative path holds from src/ and dist/ (where tsc puts this module) and from
 * the binary's bundle, dist/promptstore.js (scripts/build-bundle.js), whose every module has its URL: so this
 * module, and every file that must stay valid in the bundle, sits directly in src/.
 */
export const PACKAGE_ROOT: URL = new URL("../", import.meta.url);
