import { expect } from "vitest";
import type { TestApp } from "./app.js";
import type { StandIn } from "./openai-stand-in.js";

/**
 * The stand-in's evaluation model: it answers the system prompt it was sent, in capitals. So a version's
 * answer to a case is known exactly: "You help {{ customer }}." answers "YOU HELP ADA." for Ada.
 */
export function capitals(standIn: StandIn, model = "caps", extra: Record<string, unknown> = {}): void {
  standIn.on(model, {
    kind: "compute",
    answer: (body: Record<string, any>) => ({ content: String(body.messages[0].content).toUpperCase() }),
    ...extra,
  });
}

export async function createDataset(
  t: TestApp,
  name: string,
  cases: unknown[],
  key?: string,
): Promise<{ id: string; version: string }> {
  const res = await t.request("POST", "/api/v2/datasets", { body: { name, cases }, ...(key ? { key } : {}) });
  if (res.status !== 201) throw new Error(`dataset: ${res.status} ${JSON.stringify(res.body)}`);
  return { id: res.body.data.id, version: res.body.data.version };
}

/** A prompt `support` with two versions: production "You help {{ customer }}." and latest "You assist {{ customer }}.". */
export async function twoVersions(t: TestApp, id = "support"): Promise<{ production: string; latest: string }> {
  const created = await t.request("POST", "/api/v2/prompts", {
    body: { id, name: "Support", sections: [{ title: "Role", content: "You help {{ customer }}." }], publish: true },
  });
  if (created.status !== 201) throw new Error(`create: ${JSON.stringify(created.body)}`);
  const saved = await t.request("PUT", `/api/v2/prompts/${id}`, {
    body: { sections: [{ title: "Role", content: "You assist {{ customer }}." }] },
  });
  if (saved.status !== 200 && saved.status !== 201) throw new Error(`save: ${JSON.stringify(saved.body)}`);
  return { production: created.body.data.version, latest: saved.body.data.version };
}

export async function startEvaluation(t: TestApp, promptId: string, body: unknown, key?: string) {
  return t.request("POST", `/api/v2/prompts/${promptId}/evaluations`, { body, ...(key ? { key } : {}) });
}

/** Reads the evaluation until it has ended; its whole answer (with the first page of cases). */
export async function ended(t: TestApp, id: string, query = ""): Promise<any> {
  let view: any;
  await expect
    .poll(
      async () => {
        const res = await t.request("GET", `/api/v2/evaluations/${id}${query}`);
        view = res.body.data;
        return view?.status;
      },
      { timeout: 30_000, interval: 50 },
    )
    .not.toBe("running");
  return view;
}
