/**
 * End-to-end harness: the real `promptstore` binary on a fresh SQLite file, and Debian's Chromium driven
 * by playwright-core, as a person would use them. No browser is downloaded: CHROMIUM_PATH, else
 * /usr/bin/chromium (`.ci/run` installs Debian's `chromium`).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { expect } from "vitest";
import { cli, type RunningServer, startServer } from "../../../server/test/support/binary.js";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
export const SCREENSHOTS = fileURLToPath(new URL("../../test-results/", import.meta.url));

/** Without Chromium the suite cannot run: CI must fail, a developer's machine is told how to get it. */
export function chromiumAvailable(): boolean {
  if (existsSync(CHROMIUM)) return true;
  const message = `Chromium not found at ${CHROMIUM}: install Debian's chromium (apt-get install chromium) or set CHROMIUM_PATH.`;
  if (process.env.CI) throw new Error(message);
  console.warn(`${message} The end-to-end tests are skipped.`);
  return false;
}

export interface Bootstrapped {
  server: RunningServer;
  url: string;
  owner: { email: string; password: string };
  /** The API key printed at first start, used to check each step through REST. */
  key: string;
  projectId: string;
  /** The DATABASE_URL it runs on, for CLI commands against the same store. */
  databaseUrl: string;
  stop(): Promise<void>;
}

/** Starts the real binary on an empty database and returns what it printed. */
export async function startFreshServer(env: Record<string, string> = {}): Promise<Bootstrapped> {
  const dir = mkdtempSync(join(tmpdir(), "promptstore-e2e-"));
  const databaseUrl = join(dir, "e2e.sqlite");
  const server = await startServer(databaseUrl, env);
  const bootstrap = server.events.find((e) => e.event === "bootstrap");
  if (!bootstrap) throw new Error("the server did not bootstrap its empty database");
  return {
    server,
    url: server.url,
    owner: bootstrap.owner,
    key: bootstrap.key.key,
    projectId: bootstrap.project.id,
    databaseUrl,
    async stop() {
      await server.stop("SIGTERM");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

export const VIEWPORTS = {
  laptop: { width: 1280, height: 800 },
  phone: { width: 390, height: 844 },
} as const;

/**
 * A page that records what the browser complained about: console errors and CSP refusals fail the test
 * that looks at them (`problems`).
 */
export async function openPage(context: BrowserContext): Promise<{ page: Page; problems: string[] }> {
  const page = await context.newPage();
  const problems: string[] = [];
  page.on("console", (message) => {
    const text = message.text();
    // A 401/403/404 the app asked for and handled is logged by Chromium as a failed resource load.
    if (message.type() === "error" && !/status of (401|403|404|409|429)/.test(text)) problems.push(text);
  });
  page.on("pageerror", (error) => problems.push(error.message));
  return { page, problems };
}

/** Saves a screenshot of the current screen as `<name>.png` under packages/dashboard/test-results/. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  // From the top, so sticky bars sit where a person first sees them.
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/** A REST call with the project's API key, to check that a step in the browser took effect. */
export async function rest(
  server: Bootstrapped,
  method: string,
  path: string,
  key = server.key,
  body?: unknown,
): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { "x-api-key": key, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: await res.json() };
}

/**
 * Signs the printed owner in over HTTP and replaces the one-time password, as the first screen would;
 * returns the session cookie's value for browser contexts that skip the sign-in screens.
 */
export async function ownerSession(server: Bootstrapped, password: string): Promise<string> {
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${server.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    });
  const signedIn = await post("/api/dashboard/session", server.owner);
  const csrf = ((await signedIn.json()) as { data: { csrf_token: string } }).data.csrf_token;
  const cookie = signedIn.headers.get("set-cookie")!.split(";")[0]!;
  const changed = await post("/api/dashboard/password", { new_password: password }, { cookie, "x-csrf-token": csrf });
  if (changed.status !== 200) throw new Error(`password change failed: ${changed.status}`);
  return changed.headers.get("set-cookie")!.split(";")[0]!.split("=")[1]!;
}

/** The rules axe checks: WCAG 2.0 and 2.1, levels A and AA (issue 23). */
export const AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"];
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

export interface AxeFinding {
  rule: string;
  impact: string;
  /** axe's CSS selector of the element. */
  target: string;
  /** Why it fails, in one line (for contrast: the colours and the ratio measured). */
  summary: string;
}

/**
 * A rule judged not to apply to one element: its violations there are not reported. Never a whole rule or
 * a whole screen; `why` is required so the judgement is written down where the exception is made.
 */
export interface AxeException {
  rule: string;
  /** A CSS selector the element itself matches. */
  selector: string;
  why: string;
}

/**
 * Runs axe-core in the page as it is now and returns its serious and critical violations, one per element.
 * The script is evaluated over the DevTools protocol, so the page's Content-Security-Policy (no inline
 * scripts) does not refuse it and nothing is logged as a CSP problem.
 */
export async function axeFindings(page: Page, exceptions: AxeException[] = []): Promise<AxeFinding[]> {
  if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(AXE_SOURCE);
  return page.evaluate(
    async ({ tags, exceptions }) => {
      const axe = (window as any).axe as typeof import("axe-core");
      const results = await axe.run(document, {
        runOnly: { type: "tag", values: tags },
        resultTypes: ["violations"],
        elementRef: true,
      });
      const excepted = (rule: string, element: Element | undefined) =>
        exceptions.some((e) => e.rule === rule && element?.matches(e.selector));
      return results.violations.flatMap((violation) =>
        violation.nodes
          .filter((node) => node.impact === "serious" || node.impact === "critical")
          .filter((node) => !excepted(violation.id, node.element))
          .map((node) => ({
            rule: violation.id,
            impact: node.impact as string,
            target: node.target.join(" "),
            summary: (node.failureSummary ?? violation.help)
              .split("\n")
              .map((line) => line.trim())
              .filter((line) => line !== "" && !/^Fix (any|all) of the following:$/.test(line))
              .join("; "),
          })),
      );
    },
    { tags: AXE_TAGS, exceptions },
  );
}

/**
 * The one call a screen's test makes, at each state worth checking (a dialog open, a run started): axe on
 * the screen as shown, failing the test (softly, so every screen of the run is reported, not just the
 * first) on any serious or critical violation, each printed as `rule (impact) on target: why`. The findings
 * are also saved as `axe-<name>.json` beside the screenshots, for counting them over a run.
 */
export async function expectAccessible(page: Page, name: string, exceptions: AxeException[] = []): Promise<void> {
  // Colours measured mid-transition (a colour scheme or viewport just switched) are neither scheme's.
  await page.evaluate(() =>
    Promise.all(
      document
        .getAnimations()
        .filter((animation) => animation instanceof CSSTransition)
        .map((animation) => animation.finished.catch(() => undefined)),
    ),
  );
  const findings = await axeFindings(page, exceptions);
  mkdirSync(SCREENSHOTS, { recursive: true });
  writeFileSync(join(SCREENSHOTS, `axe-${name}.json`), `${JSON.stringify(findings, null, 2)}\n`);
  const lines = findings.map((f) => `${f.rule} (${f.impact}) on ${f.target}: ${f.summary}`);
  expect.soft(lines, `axe on ${name}: serious or critical WCAG 2.1 AA violations`).toEqual([]);
}

/**
 * A second person in an organization of the server, made as the operator makes one (`user create`), since
 * an owner now invites rather than adds: their e-mail and one-time password.
 */
export async function operatorAddsMember(
  server: Bootstrapped,
  orgId: string,
  email: string,
  role: "owner" | "editor" | "viewer",
): Promise<{ email: string; password: string }> {
  const made = await cli(server.databaseUrl, ["user", "create", email, "--org", orgId, "--role", role, "--json"]);
  if (made.code !== 0) throw new Error(`user create ${email}: ${made.stderr}`);
  return { email, password: JSON.parse(made.stdout).password as string };
}
