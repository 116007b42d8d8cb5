import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import fastifyStatic from "@fastify/static";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";

/** The dashboard's built files: `PROMPTSTORE_DASHBOARD_DIR`, else the `@promptstore/dashboard` package's dist/. */
export function dashboardDirectory(configured: string | undefined): string | undefined {
  if (configured !== undefined) return existsSync(join(configured, "index.html")) ? configured : undefined;
  try {
    const pkg = createRequire(import.meta.url).resolve("@promptstore/dashboard/package.json");
    const dist = join(dirname(pkg), "dist");
    return existsSync(join(dist, "index.html")) ? dist : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A browser navigating to one of the app's own paths (a client route such as /p/…/prompts/…): it asks for
 * HTML, and the path is not the API's nor a file's. Programs asking for an unknown path still get the
 * 404 envelope.
 */
function isAppNavigation(request: FastifyRequest): boolean {
  if (request.method !== "GET" && request.method !== "HEAD") return false;
  if (!request.headers.accept?.includes("text/html")) return false;
  const path = request.url.split("?")[0] ?? "";
  return !path.startsWith("/api/") && !/\.[a-z0-9]+$/i.test(path);
}

/**
 * Serves the dashboard at `/`. Its hashed assets are cached for good; index.html never is, so a new
 * release is picked up at the next load. Returns the fallback that answers the app's own paths (client
 * routes such as /p/…/prompts/…) with index.html; the not-found handler calls it.
 */
export async function registerDashboardFiles(
  app: FastifyInstance,
  root: string,
): Promise<(request: FastifyRequest, reply: FastifyReply) => boolean> {
  await app.register(fastifyStatic, {
    root,
    prefix: "/",
    // Files are looked up per request, so a rebuilt dashboard is served without a restart; a path that is
    // no file goes on to the not-found handler (the app's own paths, or the 404 envelope).
    wildcard: true,
    index: false,
    // The build writes .br and .gz copies; the smallest one the browser accepts is sent as is.
    preCompressed: true,
    cacheControl: false,
    setHeaders(reply, path) {
      const hashed = path.startsWith(join(root, "assets"));
      reply.header("cache-control", hashed ? "public, max-age=31536000, immutable" : "no-cache");
    },
  });
  const sendIndex = (reply: FastifyReply) => reply.header("cache-control", "no-cache").sendFile("index.html");
  app.get("/", (_request, reply) => sendIndex(reply));
  return (request, reply) => {
    if (!isAppNavigation(request)) return false;
    void sendIndex(reply);
    return true;
  };
}
