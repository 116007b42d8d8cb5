// The app exactly as `promptstore serve` builds it (same config, same store, same Node flags), in a
// process that also answers the bench's question "how many reads reached the database?" over IPC:
// the binary has no endpoint for its counters, and the herd bench needs that number.
import { buildApp, loadConfig, openStore } from "../../dist/index.js";

const config = loadConfig(process.env);
const store = await openStore(config.DATABASE_URL, { poolSize: config.DATABASE_POOL_SIZE });
const app = await buildApp({ store, config, logger: { level: config.LOG_LEVEL } });
const url = await app.server.listen({ port: 0, host: "127.0.0.1" });

process.on("message", (message) => {
  if (message === "reads") process.send({ reads: app.prompts.reads });
});
process.once("SIGTERM", async () => {
  await app.server.close();
  await store.close();
  process.exit(0);
});
process.send({ event: "listening", url });
