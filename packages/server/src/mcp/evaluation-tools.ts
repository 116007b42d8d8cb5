import type { McpServer } from "@modelcontextprotocol/server";
import type { Caller } from "../service/access.js";
import type { DatasetService } from "../service/evaluations/dataset-service.js";
import type { EvaluationService } from "../service/evaluations/evaluation-service.js";
import { withRestMessages } from "./rest-messages.js";
import { getEvaluationInput, listDatasetsInput, runEvaluationInput } from "./tool-inputs.js";
import { type ErrorReporter, READ, toolResult, WRITE } from "./tools.js";

/** What the evaluation tools call: the same services as REST, which decide every permission. */
export interface EvaluationTools {
  /** Both read at each call: the app makes them after the MCP endpoints. */
  datasets(): DatasetService;
  evaluations(): EvaluationService;
}

/**
 * The evaluation tools (docs/evaluations.md, docs/mcp.md), bound to the project of the request's key:
 * `list_datasets` to pick a dataset, `run_evaluation` to start one (write: it spends money), `get_evaluation`
 * to follow it and read its cases.
 */
export function registerEvaluationTools(
  server: McpServer,
  tools: EvaluationTools,
  caller: Caller,
  report: ErrorReporter,
): void {
  server.registerTool(
    "list_datasets",
    {
      title: "List datasets",
      description:
        "Lists the project's datasets of test cases (for run_evaluation's `dataset`): id, name, description, head version and case count.",
      inputSchema: withRestMessages(listDatasetsInput),
      annotations: READ,
    },
    () => toolResult(() => tools.datasets().list(caller), report),
  );

  server.registerTool(
    "run_evaluation",
    {
      title: "Run an evaluation",
      description:
        "Evaluates one to four versions of a prompt (`versions`: hashes, 7+ character prefixes, latest or labels such as production, or { draft }) over a dataset (`dataset`: its id, or <id>@<version>) with a check set (`checks`, e.g. [{ type: 'expected' }, { type: 'contains', value: 'refund' }]), calling the model of a connection (`connection`: con_…; `model` overrides the versions' settings). Answers at once: status running (then poll get_evaluation with the id), or, when every case was already judged for this content, the whole evaluation with status done and reused true (nothing was sent to the provider). Spends model calls: needs a key with scope write.",
      inputSchema: withRestMessages(runEvaluationInput),
      // Not destructive; not idempotent either: a second call starts another evaluation (reused, if done).
      annotations: { ...WRITE, idempotentHint: false, openWorldHint: true },
    },
    ({ id, ...body }) => toolResult(() => tools.evaluations().start(caller, id, body), report),
  );

  server.registerTool(
    "get_evaluation",
    {
      title: "Get an evaluation",
      description:
        "Reads an evaluation: status (running, done, failed, stopped), progress, and per version the passed, failed and errored counts, pass_rate, mean score per check, tokens and latency; compare counts regressions and improvements against the first version. `cases` is a page of cases with each version's answer and verdicts: `only: 'regression'` keeps the regressions, `after` (the page's `next`) and `limit` page on.",
      inputSchema: withRestMessages(getEvaluationInput),
      annotations: READ,
    },
    ({ id, only, after, limit }) =>
      toolResult(async () => {
        const evaluations = tools.evaluations();
        const view = await evaluations.get(caller, id);
        return { ...view, cases: await evaluations.cases(caller, id, { only, after, limit }) };
      }, report),
  );
}
