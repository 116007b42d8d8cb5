/**
 * `promptstore invite create|list|revoke` (README, "Accounts"): the operator invites as an owner does. The
 * link is printed once; the person it names, signed in as that address (an account the operator made),
 * opens it on the running server and joins; the link itself creates no account; a revoked link no longer works; mistakes are one line on stderr naming the field, and exit 1.
 */
import { describe, expect, it } from "vitest";
import { cli, cliJson, startServer, useBinaryDatabase } from "../support/binary.js";
import { DATABASES } from "../support/databases.js";

describe.each(DATABASES)("promptstore invite commands ($name)", (database) => {
  const db = useBinaryDatabase(database);
  const json = (...args: string[]) => cliJson(db.url, args);

  it("creates a link shown once, lists, revokes; the invited account joins through it on the running server", async () => {
    await json("org", "create", "acme");
    await json("org", "create", "home");
    const ada = await json(
      "invite",
      "create",
      "acme",
      "Ada@Example.com",
      "--role",
      "owner",
      "--base-url",
      "https://p.example/",
    );
    expect(ada).toEqual({
      id: expect.stringMatching(/^inv_/),
      email: "ada@example.com",
      role: "owner",
      invited_by: "cli",
      created_at: expect.any(String),
      expires_at: expect.any(String),
      status: "pending",
      accepted_at: null,
      revoked_at: null,
      token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      link: `https://p.example/invite#${ada.token}`,
    });
    // Seven days by default (PROMPTSTORE_INVITATION_DAYS).
    expect(Date.parse(ada.expires_at) - Date.parse(ada.created_at)).toBe(7 * 86_400_000);

    const human = await cli(db.url, ["invite", "create", "acme", "bob@example.com"]);
    expect(human.code).toBe(0);
    const [said, link] = human.stdout.split("\n");
    expect(said).toMatch(/^invited bob@example\.com as editor \(inv_\S+\), until \S+$/);
    expect(link).toMatch(/^link \(shown once; send it to them\): \/invite#[A-Za-z0-9_-]{43}$/);
    const bobId = (said as string).match(/\((inv_\S+)\)/)?.[1] as string;
    const bobToken = (link as string).split("#")[1] as string;

    const listed = await json("invite", "list", "acme");
    expect(listed.map((i: any) => [i.email, i.role, i.status])).toEqual([
      ["bob@example.com", "editor", "pending"],
      ["ada@example.com", "owner", "pending"],
    ]);
    // The list never shows a token again.
    expect(JSON.stringify(listed)).not.toContain(ada.token);

    const revoked = await json("invite", "revoke", "acme", bobId);
    expect(revoked).toMatchObject({ id: bobId, status: "revoked", revoked_at: expect.any(String) });

    // Ada's account, made by the operator in another organization: a one-time password, then her own.
    const oneTime = (await json("user", "create", "ada@example.com", "--org", "home")).password as string;
    db.server = await startServer(db.url);
    const post = (path: string, body: unknown, session?: { cookie: string; csrf: string }) =>
      fetch(`${db.server?.url}${path}`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          origin: db.server?.url as string,
          ...(session ? { cookie: session.cookie, "x-csrf-token": session.csrf } : {}),
        },
        body: JSON.stringify(body),
      }).then(async (res) => ({
        status: res.status,
        body: (await res.json()) as any,
        session: { cookie: (res.headers.get("set-cookie") ?? "").split(";")[0] as string, csrf: "" },
      }));
    const withCsrf = (res: Awaited<ReturnType<typeof post>>) => ({ ...res.session, csrf: res.body.data.csrf_token });
    // The link alone creates no account, for an address with one as for one without.
    const noAccount = await post("/api/dashboard/invitations/account", {
      token: ada.token,
      password: "a passphrase of mine",
    });
    expect(noAccount.status).toBe(403);
    const signedIn = await post("/api/dashboard/session", { email: "ada@example.com", password: oneTime });
    const chosen = await post("/api/dashboard/password", { new_password: "a passphrase of mine" }, withCsrf(signedIn));
    const joined = await post("/api/dashboard/invitations/accept", { token: ada.token }, withCsrf(chosen));
    expect(joined.status).toBe(200);
    expect(joined.body.data.user.email).toBe("ada@example.com");
    expect(joined.body.data.memberships.map((m: any) => [m.org.name, m.role])).toEqual([
      ["acme", "owner"],
      ["home", "editor"],
    ]);
    const refused = await post("/api/dashboard/invitations/accept", { token: bobToken }, withCsrf(chosen));
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual({ success: false, error: "invitation: was revoked; ask for a new one" });

    const human2 = await cli(db.url, ["invite", "list", "acme"]);
    expect(human2.stdout).toMatch(
      new RegExp(
        `^${bobId} {2}revoked {3}bob@example\\.com {2}editor {2}by cli {2}expires \\S+\\n${ada.id} {2}accepted {2}ada@example\\.com {2}owner {2}by cli {2}expires \\S+\\n$`,
      ),
    );
  });

  // The refusals are the command's own, before any database work: SQLite alone runs them.
  it.runIf(database.name === "sqlite")("says what is wrong, naming the field, and writes nothing", async () => {
    await json("org", "create", "acme");
    const cases: [string[], string][] = [
      [["invite", "create", "acme", "not-an-address"], /^error: email: /.source],
      [
        ["invite", "create", "acme", "a@example.com", "--role", "boss"],
        "^error: role: must be owner, editor or viewer\n$",
      ],
      [["invite", "create", "nowhere", "a@example.com"], "^error: organization nowhere not found\n$"],
      [["invite", "revoke", "acme", "inv_unknown"], "^error: invitation"],
    ];
    for (const [args, stderr] of cases) {
      const res = await cli(db.url, args);
      expect({ args, code: res.code, stdout: res.stdout }).toEqual({ args, code: 1, stdout: "" });
      expect(res.stderr).toMatch(new RegExp(stderr));
    }
    expect(await json("invite", "list", "acme")).toEqual([]);
    expect((await cli(db.url, ["invite", "list", "acme"])).stdout).toBe("no invitations\n");
  });
});
