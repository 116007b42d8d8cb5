import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { PACKAGE_ROOT } from "../../package-root.js";

/** What scripts/build-sdk.js made: one entry per client. */
interface BuiltClient {
  name: string;
  language: "typescript" | "python";
  version: string;
  file: string;
  needs: string;
}

/** The TypeScript client under a name that survives upgrades, for recipes such as the README's CI guard. */
const TS_ALIAS = "promptstore-client.tgz";

/** Where `npm run build` puts the clients: packages/server/sdk/. */
export const SDK_DIR = fileURLToPath(new URL("sdk/", PACKAGE_ROOT));

function readBuilt(dir: string): BuiltClient[] {
  const manifest = join(dir, "manifest.json");
  if (!existsSync(manifest)) return [];
  const { clients } = JSON.parse(readFileSync(manifest, "utf8")) as { clients: BuiltClient[] };
  return clients.filter((client) => existsSync(join(dir, client.file)));
}

/** The request's own scheme and host (its `Host` header), when no public URL is configured. */
const requestOrigin = (request: FastifyRequest) => `${request.protocol}://${request.host}`;

const installCommand = (client: BuiltClient, url: string) =>
  client.language === "python" ? `pip install ${url}` : `npm install ${url}`;

/**
 * The server hands out its own clients (`GET /sdk/`, no key): a self-hosted service needs no package registry
 * for applications to read from it. The listing is indented JSON with the install command for this server's
 * own address (PROMPTSTORE_PUBLIC_URL when set); the files are served as built, read once at start-up.
 */
export function registerSdkRoutes(app: FastifyInstance, dir = SDK_DIR, publicUrl?: string): void {
  // A configured public URL wins over the Host header, which any client may set to anything.
  const origin = (request: FastifyRequest) => publicUrl ?? requestOrigin(request);
  const built = readBuilt(dir);
  const files = new Map<string, { body: Buffer; type: string }>();
  for (const client of built) {
    const body = readFileSync(join(dir, client.file));
    const type = client.language === "python" ? "application/zip" : "application/gzip";
    files.set(client.file, { body, type });
    if (client.language === "typescript") files.set(TS_ALIAS, { body, type });
  }

  const listing = async (request: FastifyRequest, reply: FastifyReply) => {
    const base = `${origin(request)}/sdk/`;
    const clients = built.map((client) => ({
      name: client.name,
      language: client.language,
      version: client.version,
      file: client.file,
      url: base + client.file,
      install: installCommand(client, base + client.file),
      needs: client.needs,
      ...(client.language === "typescript" ? { latest_url: base + TS_ALIAS } : {}),
    }));
    const body = {
      clients,
      ...(clients.length === 0 ? { note: "no clients built on this server: run npm run build" } : {}),
      from_a_clone: {
        typescript: "npm install <clone>/packages/client",
        python: "pip install <clone>/clients/python",
      },
    };
    return reply.type("application/json; charset=utf-8").send(`${JSON.stringify(body, null, 2)}\n`);
  };
  app.get("/sdk", listing);
  app.get("/sdk/", listing);
  app.get<{ Params: { file: string } }>("/sdk/:file", async (request, reply) => {
    const file = files.get(request.params.file);
    if (file === undefined) {
      return reply
        .code(404)
        .type("application/json; charset=utf-8")
        .send({ success: false, error: `file: no client ${request.params.file} here; GET /sdk/ lists them` });
    }
    return reply
      .type(file.type)
      .header("content-disposition", `attachment; filename="${request.params.file}"`)
      .send(file.body);
  });
}
