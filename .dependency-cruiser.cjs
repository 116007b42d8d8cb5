/**
 * The layering, written as rules (`npm run check:layers`, run by .ci/run). Inside the server a request flows
 * down the floors cli → http → mcp → service → store (ratelimit sits under http, secrets under service, both
 * over store): a lower floor never imports a higher one, so a type two floors share lives on the lower one. No
 * package has an import circle. core is imported by everyone and imports nothing of ours; the client imports
 * nothing of ours.
 * Within service/ and store/ the files are grouped by domain (prompts/, accounts/, ...), shared pieces at the
 * floor's root: a domain imports the root freely, and another domain of its floor only through the files
 * that domain opens to the others (`doors`).
 */
const server = "^packages/server/src/";
const below = (floor, higher) => ({
  name: `${floor}-below-${higher.join("-")}`,
  comment: `server/src/${floor} is below ${higher.join(", ")}: it may not import them`,
  severity: "error",
  from: { path: `${server}${floor}/` },
  to: { path: `${server}(${higher.join("|")})/` },
});

// The files a domain of service/ or store/ opens to the other domains of its floor. A new door is a decision:
// add it here, or move the piece both need to the floor's root.
const doors = [
  "service/prompts/prompt-service.ts",
  "service/prompts/content-input.ts",
  "service/accounts/account-service.ts",
  "service/events/change-bus.ts",
  // evaluations run versions and judges through the playground's model-call path, and webhook checks through
  // the webhook sender, signed with the endpoint's sealed secret
  "service/playground/run-service.ts",
  "service/playground/connection-service.ts",
  "service/playground/model-call.ts",
  "service/webhooks/webhook-sender.ts",
  "service/webhooks/webhook-secrets.ts",
  // not domains: every difference between the dialects, and the migrations (which import nothing of ours)
  "store/dialects/",
  "store/migrations/",
];

const doorPattern = (door) => `${server}${door.replaceAll(".", "\\.")}${door.endsWith("/") ? "" : "$"}`;

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "an import circle ties modules that should be able to change one at a time",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    below("store", ["ratelimit", "secrets", "service", "mcp", "http", "cli"]),
    below("ratelimit", ["service", "mcp", "http", "cli"]),
    below("secrets", ["service", "mcp", "http", "cli"]),
    below("service", ["mcp", "http", "cli"]),
    below("mcp", ["http", "cli"]),
    below("http", ["cli"]),
    {
      name: "domain-through-its-doors",
      comment:
        "a domain folder of service/ or store/ imports another domain of its floor only through that domain's doors (the list above)",
      severity: "error",
      from: { path: `${server}(service|store)/([^/]+)/` },
      to: {
        path: `${server}$1/[^/]+/`,
        pathNot: [`${server}$1/$2/`, ...doors.map(doorPattern)],
      },
    },
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
