/**
 * The server package's folder (packages/server/), for the files that ship beside the code: package.json and
 * the clients in sdk/. In the binary's bundle (dist/promptstore.js, scripts/build-bundle.js) every module's
 * `import.meta.url` is the bundle's, directly in dist/: a path relative to it holds only from a module directly
 * in src/, as this one is (tsc puts it at dist/package-root.js). Every other module asks this one.
 */
export const PACKAGE_ROOT: URL = new URL("../", import.meta.url);
