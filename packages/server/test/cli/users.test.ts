import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { BIN, cli, cliJson, secretKeyEnv, startServer, useBinaryDatabase } from "../support/binary.js";
import { DATABASES } from "../support/databases.js";

async function signIn(url: string, email: string, password: string) {
  const res = await fetch(`${url}/api/dashboard/session`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password }),
  });
  return { status: res.status, body: (await res.json()) as any };
}

describe.each(DATABASES)("promptstore user commands ($name)", (database) => {
  const db = useBinaryDatabase(database);
  const json = (...args: string[]) => cliJson(db.url, args);

  it("creates accounts with a one-time password, lists them, resets a password, removes an account", async () => {
    await json("org", "create", "acme");
    const created = await json("user", "create", "Ada@Example.com", "--org", "acme", "--role", "owner");
    expect(created).toEqual({
      id: expect.stringMatching(/^usr_/),
      email: "ada@example.com",
      password: expect.stringMatching(/^[A-Za-z0-9_-]{24}$/),
      org: "acme",
      role: "owner",
    });
    const editor = await json("user", "create", "bob@example.com", "--org", "acme");
    expect(editor.role).toBe("editor");

    expect((await json("user", "list", "acme")).map((u: any) => [u.email, u.role])).toEqual([
      ["ada@example.com", "owner"],
      ["bob@example.com", "editor"],
    ]);

    const reset = await json("user", "set-password", "bob@example.com");
    expect(reset).toEqual({ id: editor.id, email: "bob@example.com", password: expect.any(String) });
    expect(reset.password).not.toBe(editor.password);

    const human = await cli(db.url, ["user", "list", "acme"]);
    expect(human.stdout).toMatch(/^ada@example\.com {2}owner {2}since \S+\nbob@example\.com {2}editor {2}since \S+\n$/);

    // The last owner cannot be removed; anyone else can.
    const refused = await cli(db.url, ["user", "remove", "ada@example.com"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      "error: user ada@example.com is the last owner of organization acme; make another account owner first\n",
    );
    expect(await json("user", "remove", "bob@example.com")).toEqual({
      id: editor.id,
      email: "bob@example.com",
      removed: true,
    });
    expect((await json("user", "list", "acme")).map((u: any) => u.email)).toEqual(["ada@example.com"]);
  });

  it("prints the password once in human form too", async () => {
    await json("org", "create", "acme");
    const res = await cli(db.url, ["user", "create", "cy@example.com", "--org", "acme", "--role", "viewer"]);
    expect(res.stdout).toMatch(
      /^created cy@example\.com \(viewer of acme\)\none-time password \(shown once; a new one is chosen at first sign-in\): [A-Za-z0-9_-]{24}\n$/,
    );
  });

  it("fails with one clear line for bad input", async () => {
    await json("org", "create", "acme");
    const cases: [string[], string][] = [
      [["user", "create", "not-an-email", "--org", "acme"], "error: email: must be an e-mail address\n"],
      [
        ["user", "create", "a@example.com", "--org", "acme", "--role", "god"],
        "error: role: must be owner, editor or viewer\n",
      ],
      [["user", "create", "a@example.com", "--org", "nope"], "error: organization nope not found\n"],
      [["user", "set-password", "ghost@example.com"], "error: user ghost@example.com not found\n"],
      [["user", "remove", "ghost@example.com"], "error: user ghost@example.com not found\n"],
    ];
    for (const [args, stderr] of cases) {
      const res = await cli(db.url, args);
      expect(res.code, args.join(" ")).toBe(1);
      expect(res.stderr, args.join(" ")).toBe(stderr);
    }
    await json("user", "create", "a@example.com", "--org", "acme");
    const twice = await cli(db.url, ["user", "create", "a@example.com", "--org", "acme", "--json"]);
    expect(JSON.parse(twice.stderr)).toEqual({
      error: "email: an account a@example.com already exists; invite it instead (promptstore invite create)",
    });
  });
});

describe.each(DATABASES)("first start creates the owner account ($name)", (database) => {
  const env = useBinaryDatabase(database);

  it("prints the owner's e-mail and one-time password, which signs in to the dashboard it serves", async () => {
    env.server = await startServer(env.url);
    const bootstrap = env.server.events.find((e) => e.event === "bootstrap")!;
    expect(bootstrap.owner).toEqual({
      email: "owner@promptstore.local",
      password: expect.stringMatching(/^[A-Za-z0-9_-]{24}$/),
    });
    const listening = env.server.events.find((e) => e.event === "listening")!;
    expect(listening.dashboard).toBe(`${env.server.url}/`);
    const page = await fetch(`${env.server.url}/`, { headers: { accept: "text/html" } });
    expect(page.status).toBe(200);

    const res = await signIn(env.server.url, "owner@promptstore.local", bootstrap.owner.password);
    expect(res.status).toBe(200);
    expect(res.body.data.user.must_change_password).toBe(true);
    expect(res.body.data.memberships).toEqual([
      {
        org: { id: bootstrap.organization.id, name: "default", plan: "free" },
        role: "owner",
        projects: [{ id: bootstrap.project.id, name: "Default project", created_at: bootstrap.project.created_at }],
      },
    ]);
  });

  it("takes the owner's e-mail from PROMPTSTORE_OWNER_EMAIL", async () => {
    env.server = await startServer(env.url, { PROMPTSTORE_OWNER_EMAIL: "Boss@Example.com" });
    expect(env.server.events.find((e) => e.event === "bootstrap")!.owner.email).toBe("boss@example.com");
  });

  it("says, in the human first-start text, where the dashboard is and how to sign in", async () => {
    const child = spawn(process.execPath, [BIN, "serve", "--port", "0"], {
      env: { ...process.env, DATABASE_URL: env.url, LOG_LEVEL: "silent", ...secretKeyEnv(env.url) },
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      let out = "";
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no start-up text: ${out}`)), 20_000);
        child.stdout.on("data", (chunk) => {
          out += chunk;
          if (out.includes("Promptstore listening on")) {
            clearTimeout(timer);
            resolve();
          }
        });
      });
      const url = out.match(/Promptstore listening on (http:\/\/\S+) /)![1];
      const lines = out.split("\n");
      expect(lines).toContain(`Dashboard: ${url}/`);
      expect(lines.find((l) => l.startsWith("  sign in as"))).toMatch(
        /^ {2}sign in as owner@promptstore\.local with the one-time password [A-Za-z0-9_-]{24}$/,
      );
      expect(lines).toContain("  (shown once; you choose your own password at first sign-in)");
      expect(lines.find((l) => l.startsWith("API key"))).toMatch(/^API key \(shown once, store it now\): ps_\S{43}$/);
    } finally {
      child.kill("SIGKILL");
    }
  });
});
