// Seeds a database through the real service (the code path the API uses), not through raw SQL.
import { ChangeBus, openStore, PromptService, TenantService, TenantStore } from "../../dist/index.js";

/** Five sections of about 400 characters each: a ~2 KB system prompt, as the issue asks. */
export function benchSections(n = 0) {
  const para = (topic) =>
    `You handle ${topic} for {{ company }}. Be precise, cite the relevant policy by name, and keep answers short. ` +
    "If a request is ambiguous, ask one clarifying question before acting. Never invent order numbers, prices or dates; " +
    "look them up with the tools you have. Use the customer's language, which is {{ language }}. ";
  return ["Role", "Policies", "Tone", "Tools", "Output Format"].map((title, i) => ({
    title,
    content: `${para(`${title.toLowerCase()} (part ${i + 1})`)}Revision ${n}.`,
  }));
}

/**
 * Creates an unlimited organization with one project and key, `prompts` prompts of `versions` versions
 * each (the first prompt published), and returns the key and the id of the prompt to read.
 */
export async function seed(databaseUrl, { prompts = 1, versions = 1, onProgress, sections } = {}) {
  const store = await openStore(databaseUrl);
  try {
    const tenants = new TenantService(new TenantStore(store.db), new ChangeBus());
    const org = await tenants.createOrganization(`bench-${Date.now()}`, "unlimited");
    const project = await tenants.createProject(org.id, "bench");
    const { key } = await tenants.createApiKey(project.id);
    const scope = {
      projectId: project.id,
      projectName: project.name,
      orgId: org.id,
      plan: "unlimited",
      actor: "cli",
      access: "publish",
    };
    const service = new PromptService(store, new ChangeBus(), { guardText: "GUARD" });
    let target;
    for (let p = 0; p < prompts; p++) {
      const { id } = await service.create(scope, {
        name: `Bench prompt ${p}`,
        sections: sections ?? benchSections(0),
        publish: true,
      });
      target ??= id;
      for (let v = 1; v < versions; v++) await service.save(scope, id, { sections: benchSections(v) });
      if (onProgress && p % 1000 === 999) onProgress(p + 1);
    }
    return { key, promptId: target, projectId: project.id, orgId: org.id };
  } finally {
    await store.close();
  }
}
