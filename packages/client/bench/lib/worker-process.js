// A bench's child process spoken to by message type: the propagation and streams benches' reader processes.
import { fork } from "node:child_process";

/**
 * Forks `script` with `env`; `ask` sends a message and resolves with the answer of `type`, `started` with its
 * "started", `close` asks it to end. Messages `onMessage` takes (returns true for) go to it alone.
 */
export function startWorkerProcess(script, env, what, defaultTimeoutMs, onMessage = () => false) {
  const child = fork(script, { env: { ...process.env, ...env } });
  const waiting = new Map();
  child.on("message", (message) => {
    if (onMessage(message)) return;
    waiting.get(message.type)?.(message);
    waiting.delete(message.type);
  });
  const answer = (type, timeoutMs = defaultTimeoutMs) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`a ${what} process did not answer ${type}`)), timeoutMs);
      waiting.set(type, (message) => {
        clearTimeout(timer);
        resolve(message);
      });
    });
  const started = answer("started");
  return {
    started,
    answer,
    ask: (message, type, timeoutMs) => {
      const answered = answer(type, timeoutMs);
      child.send(message);
      return answered;
    },
    close: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", resolve);
        child.send({ type: "close" });
      }),
  };
}
