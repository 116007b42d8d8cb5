/**
 * Client ID Metadata Documents: the server fetches a URL a stranger chose. A real https server of the test
 * (a self-signed certificate made with openssl, trusted by this app alone) stands at client.example, which
 * the app's resolver sends to 127.0.0.1: with private addresses allowed the document is used (its name on
 * the consent, its redirect URIs); with the webhook address policy (the default) it is never reached; an
 * oversized, a slow and a lying document are each a clear refusal page.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testApp } from "../support/app.js";
import { member } from "../support/dashboard.js";
import { DATABASES } from "../support/databases.js";
import { authorize, pkce, REDIRECT } from "../support/oauth.js";

let server: Server;
let port = 0;
let cert = "";
let hits = 0;
const dir = mkdtempSync(join(tmpdir(), "promptstore-cimd-"));

beforeAll(async () => {
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-days",
      "1",
      "-subj",
      "/CN=client.example",
      "-addext",
      "subjectAltName=DNS:client.example",
      "-keyout",
      join(dir, "key.pem"),
      "-out",
      join(dir, "cert.pem"),
    ],
    { stdio: "ignore" },
  );
  cert = readFileSync(join(dir, "cert.pem"), "utf8");
  server = createServer({ key: readFileSync(join(dir, "key.pem")), cert }, (request, response) => {
    hits++;
    const id = `https://client.example:${port}${request.url}`;
    if (request.url === "/good.json") {
      return response.end(JSON.stringify({ client_id: id, client_name: "Document client", redirect_uris: [REDIRECT] }));
    }
    if (request.url === "/liar.json") {
      return response.end(JSON.stringify({ client_id: "https://other.example/x", redirect_uris: [REDIRECT] }));
    }
    if (request.url === "/huge.json") return response.end(JSON.stringify({ pad: "x".repeat(10_000) }));
    if (request.url === "/slow.json") return; // never answers
    response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
  rmSync(dir, { recursive: true, force: true });
});

const resolver = async () => [{ address: "127.0.0.1", family: 4 }];

describe.each(DATABASES)("Client ID Metadata Documents ($name)", (database) => {
  it("a document is fetched, checked and used; the address policy, size, time and identity are enforced", {
    timeout: 30_000,
  }, async () => {
    const t = await testApp(
      database,
      { PROMPTSTORE_WEBHOOK_ALLOW_PRIVATE: true },
      {
        oauthDocuments: { ca: cert, resolver, timeoutMs: 1000 },
      },
    );
    try {
      const url = (name: string) => `https://client.example:${port}/${name}`;
      const good = await authorize(t, url("good.json"), pkce().challenge);
      expect(good.requestId).toBeDefined();
      const editor = await member(t, "editor");
      const consent = await editor.call("GET", `/api/dashboard/oauth/requests/${good.requestId}`);
      expect(consent.body.data.client).toMatchObject({
        name: "Document client",
        kind: "document",
        redirect_host: "127.0.0.1:4567",
      });
      // Cached: a second request does not fetch again.
      const before = hits;
      expect((await authorize(t, url("good.json"), pkce().challenge)).requestId).toBeDefined();
      expect(hits).toBe(before);
      const page = async (name: string) => {
        const { res, location } = await authorize(t, url(name), pkce().challenge);
        expect(location).toBeUndefined();
        return [res.status, /<p>([^<]*)<\/p>/.exec(res.body)?.[1]];
      };
      expect(await page("liar.json")).toEqual([
        400,
        "client_id: the client&#39;s metadata document was refused: it is not valid: its client_id is not its own URL",
      ]);
      expect(await page("huge.json")).toEqual([
        400,
        "client_id: the client&#39;s metadata document was refused: it is larger than 5120 bytes",
      ]);
      expect(await page("slow.json")).toEqual([
        400,
        "client_id: the client&#39;s metadata document was refused: no complete answer came within 1000 ms",
      ]);
    } finally {
      await t.close();
    }
  });

  it("under the webhook address policy a document on a private address is never reached", async () => {
    const t = await testApp(database, {}, { oauthDocuments: { ca: cert, resolver } });
    try {
      const before = hits;
      const { res } = await authorize(t, `https://client.example:${port}/good.json`, pkce().challenge);
      expect(res.status).toBe(400);
      expect(res.body).toContain(
        "client_id: the client&#39;s metadata document was refused: its host is at an address that is not allowed",
      );
      expect(res.body).not.toContain("127.0.0.1");
      expect(hits).toBe(before);
    } finally {
      await t.close();
    }
  });
});
