export { type Config, defaultConfig, loadConfig } from "./config.js";
export { type App, buildApp } from "./http/app.js";
export type { Caller } from "./service/access.js";
export { TenantService } from "./service/accounts/tenant-service.js";
export { ChangeBus } from "./service/events/change-bus.js";
export { PromptService } from "./service/prompts/prompt-service.js";
export { TenantStore } from "./store/accounts/tenants.js";
export { openStore, type Store } from "./store/index.js";
