// The dashboard's performance budget, measured in Debian's headless Chromium against the real binary:
// JavaScript shipped to the first screens (gzip and Brotli, as the server sends them), time until the
// prompt list of a 1 000-prompt project is on screen, and how fast its search answers. Writes its section of
// bench/results.md at the repository root (between the dashboard markers), leaving the server's rows alone.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import { chromium } from "playwright-core";
import { startServer } from "../../server/bench/lib/processes.js";
import { json, ownerCookie } from "./lib/session.js";

const RESULTS = fileURLToPath(new URL("../../../bench/results.md", import.meta.url));
const DIST = fileURLToPath(new URL("../dist/", import.meta.url));
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const PROMPTS = 1000;
const RUNS = 7;
const BUDGET_KB = 250;
const FIRST_SCREEN_MS = 1000;
const START = "<!-- dashboard bench: start -->";
const END = "<!-- dashboard bench: end -->";

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const kb = (bytes) => (bytes / 1024).toFixed(1);

async function seed(url, key) {
  const names = Array.from({ length: PROMPTS }, (_, n) => `Bench prompt ${String(n).padStart(4, "0")}`);
  for (let i = 0; i < names.length; i += 25) {
    await Promise.all(
      names.slice(i, i + 25).map((name, j) =>
        json(`${url}/api/v2/prompts`, {
          method: "POST",
          headers: { "x-api-key": key, "content-type": "application/json" },
          body: JSON.stringify({
            name,
            description: `Prompt ${i + j} of the dashboard bench`,
            markdown: `# Role\nYou help {{ customer }} of {{ company }}.\n\n# Rules\nBe brief. Prompt ${i + j}.`,
            publish: (i + j) % 2 === 0,
          }),
        }),
      ),
    );
  }
}

/** The JavaScript a page load fetched, compressed as the build's precompressed copies are (gzip -9, Brotli 11). */
function scriptSizes(urls) {
  let raw = 0;
  let gzip = 0;
  let brotli = 0;
  for (const url of urls) {
    const body = readFileSync(join(DIST, new URL(url).pathname));
    raw += body.length;
    gzip += gzipSync(body, { level: 9 }).length;
    brotli += brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length;
  }
  return { count: urls.length, raw, gzip, brotli };
}

/** Loads a page in a fresh context (nothing cached) and returns when `ready` holds, with the scripts loaded. */
async function load(browser, url, cookie, ready) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  if (cookie) await context.addCookies([{ name: "ps_session", value: cookie, url: new URL(url).origin }]);
  const page = await context.newPage();
  const scripts = [];
  page.on("response", (response) => {
    if (response.request().resourceType() === "script") scripts.push(response.url());
  });
  await page.goto(url);
  try {
    await page.waitForFunction(ready, undefined, { timeout: 15_000 });
  } catch (error) {
    const shot = join(tmpdir(), "promptstore-dash-bench-failure.png");
    await page.screenshot({ path: shot });
    throw new Error(`${url} never became ready (screenshot: ${shot}): ${error.message}`);
  }
  const ms = await page.evaluate(() => performance.now());
  return { page, context, ms, scripts };
}

async function main() {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM} (apt-get install chromium)`);
  const dir = mkdtempSync(join(tmpdir(), "promptstore-dash-bench-"));
  const server = await startServer(join(dir, "bench.sqlite"), { PROMPTSTORE_DEFAULT_PLAN: "unlimited" });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-sync"],
  });
  try {
    const bootstrap = server.events.find((e) => e.event === "bootstrap");
    process.stdout.write(`seeding ${PROMPTS} prompts… `);
    await seed(server.url, bootstrap.key.key);
    console.log("done");
    const cookie = await ownerCookie(server.url, bootstrap.owner);
    const listUrl = `${server.url}/p/${bootstrap.project.id}/prompts`;
    const lastName = `Bench prompt ${String(PROMPTS - 1).padStart(4, "0")}`;

    // The sign-in screen, as a newcomer first sees it.
    const signInLoads = [];
    let signInScripts = [];
    for (let run = 0; run < RUNS; run++) {
      const { context, ms, scripts } = await load(browser, `${server.url}/sign-in`, undefined, () =>
        document.querySelector("input[type=password]"),
      );
      signInLoads.push(ms);
      signInScripts = scripts;
      await context.close();
    }

    // The prompt list of 1 000 prompts, signed in, cold cache.
    const listLoads = [];
    let listScripts = [];
    const searches = [];
    let rows = 0;
    for (let run = 0; run < RUNS; run++) {
      const { page, context, ms, scripts } = await load(browser, listUrl, cookie, () =>
        document.body.innerText.includes("Bench prompt 0000"),
      );
      listLoads.push(ms);
      listScripts = scripts;
      rows = await page.locator("tbody tr").count();
      const search = page.getByRole("searchbox").first();
      const started = await page.evaluate(() => performance.now());
      await search.fill(lastName.slice(-4));
      await page.waitForFunction((name) => document.body.innerText.includes(name), lastName);
      searches.push((await page.evaluate(() => performance.now())) - started);
      await context.close();
    }

    const signIn = scriptSizes(signInScripts);
    const list = scriptSizes([...new Set([...signInScripts, ...listScripts])]);
    const rowsFor = (name, s) => `| ${name} | ${s.count} | ${kb(s.raw)} | ${kb(s.gzip)} | ${kb(s.brotli)} |`;
    const section = [
      START,
      "## Dashboard",
      "",
      `Written by \`npm run bench\` on ${new Date().toISOString()}: ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB,`,
      `Node.js ${process.version}, Debian's Chromium (headless) through playwright-core, against the real binary on`,
      `SQLite with ${PROMPTS} prompts (half of them published). Each page load is a fresh browser context (nothing`,
      `cached), ${RUNS} runs, median reported. Times are the page's own clock from navigation start.`,
      "",
      "| Target | Reached | |",
      "|---|---|---|",
      `| JavaScript of the first screens ≤ ${BUDGET_KB} KB gzipped | ${kb(list.gzip)} KB (Brotli ${kb(list.brotli)} KB) | ${list.gzip / 1024 <= BUDGET_KB ? "met" : "**missed**"} |`,
      `| Prompt list (${PROMPTS} prompts) on screen < ${FIRST_SCREEN_MS} ms | ${Math.round(median(listLoads))} ms | ${median(listLoads) < FIRST_SCREEN_MS ? "met" : "**missed**"} |`,
      `| Prompt list usable with ${PROMPTS} prompts | ${rows} rows in the page; search answers in ${Math.round(median(searches))} ms | ${rows <= 100 ? "met" : "**missed**"} |`,
      "",
      "| Screen | scripts | raw KB | gzip KB | Brotli KB |",
      "|---|---:|---:|---:|---:|",
      rowsFor("Sign in", signIn),
      rowsFor("Sign in, then the prompt list (both screens' scripts)", list),
      "",
      `Sign-in screen ready: ${Math.round(median(signInLoads))} ms (runs: ${signInLoads.map(Math.round).join(", ")}).`,
      `Prompt list ready: ${Math.round(median(listLoads))} ms (runs: ${listLoads.map(Math.round).join(", ")}).`,
      `Search over ${PROMPTS} prompts: ${Math.round(median(searches))} ms (runs: ${searches.map(Math.round).join(", ")}).`,
      "The code editor (CodeMirror) and the diff (jsdiff) are separate chunks, fetched when the editor or the history opens.",
      END,
    ].join("\n");
    console.log(section);

    const existing = existsSync(RESULTS) ? readFileSync(RESULTS, "utf8") : "# Benchmark results\n";
    const before = existing.includes(START) ? existing.slice(0, existing.indexOf(START)) : `${existing.trimEnd()}\n\n`;
    const after = existing.includes(END) ? existing.slice(existing.indexOf(END) + END.length) : "\n";
    writeFileSync(RESULTS, `${before}${section}${after}`);
  } finally {
    await browser.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
