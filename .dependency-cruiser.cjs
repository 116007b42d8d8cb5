/**
 * The layering, written as rules (`npm run check:layers`, run by .ci/run). Inside the server a request flows
 * down the floors cli → http → mcp → service → store (ratelimit sits under http, over store): a lower floor
 * never imports a higher one, so a type two floors share lives on the lower one. No package has an import
 * circle. core is imported by everyone and imports nothing of ours; the client imports nothing of ours.
 */
const server = "^packages/server/src/";
const below = (floor, higher) => ({
  name: `${floor}-below-${higher.join("-")}`,
  comment: `server/src/${floor} is below ${higher.join(", ")}: it may not import them`,
  severity: "error",
  from: { path: `${server}${floor}/` },
  to: { path: `${server}(${higher.join("|")})/` },
});

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "an import circle ties modules that should be able to change one at a time",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    below("store", ["ratelimit", "service", "mcp", "http", "cli"]),
    below("ratelimit", ["service", "mcp", "http", "cli"]),
    below("service", ["mcp", "http", "cli"]),
    below("mcp", ["http", "cli"]),
    below("http", ["cli"]),
    {
      name: "core-imports-nothing-of-ours",
      comment: "core is imported by every package and imports none of them",
      severity: "error",
      from: { path: "^packages/core/src/" },
      to: { path: "^packages/(server|dashboard|client)/" },
    },
    {
      name: "client-imports-nothing-of-ours",
      comment: "the client has no runtime dependencies: it keeps copies of core's rules, pinned by its tests",
      severity: "error",
      from: { path: "^packages/client/src/" },
      to: { path: "^packages/(core|server|dashboard)/" },
    },
    {
      name: "client-cli-bundles-core-only",
      comment:
        "the client's promptstore command (packages/client/cli) bundles core at build time; the server is not in it",
      severity: "error",
      from: { path: "^packages/client/cli/" },
      to: { path: "^packages/(server|dashboard)/" },
    },
    {
      name: "client-library-has-no-cli",
      comment: "the library is the package's runtime-free part: it never imports the command line built on it",
      severity: "error",
      from: { path: "^packages/client/src/" },
      to: { path: "^packages/client/cli/" },
    },
    {
      name: "dashboard-app-is-the-top",
      comment: "dashboard/src/app holds the router, which imports every screen: nothing but main.tsx imports it",
      severity: "error",
      from: { path: "^packages/dashboard/src/", pathNot: "^packages/dashboard/src/(app/|main\\.tsx$)" },
      to: { path: "^packages/dashboard/src/app/" },
    },
  ],
  options: {
    // Type-only imports count: the circles this check was made for ran over types.
    tsPreCompilationDeps: true,
    // Another package's built files count as that package, without being read.
    doNotFollow: { path: "(^|/)(node_modules|dist)/" },
    exclude: { path: "/generated/" },
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "types", "default"] },
  },
};
