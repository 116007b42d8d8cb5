import { once } from "node:events";
import { createWriteStream, type WriteStream } from "node:fs";
import { rm } from "node:fs/promises";

/**
 * Writes `JSON.stringify({ ...head, prompts }, null, 2) + "\n"` one prompt at a time: the same bytes the
 * whole document gave, with one prompt in memory. The head's members come first and `prompts` last, as in
 * the bundle's schema.
 */
export class BundleWriter {
  private count = 0;

  private constructor(
    private readonly path: string,
    private readonly out: WriteStream,
    private readonly head: Record<string, unknown>,
  ) {}

  static async open(path: string, head: Record<string, unknown>): Promise<BundleWriter> {
    const out = createWriteStream(path);
    await once(out, "open");
    return new BundleWriter(path, out, head);
  }

  async add(prompt: unknown): Promise<void> {
    const opening = this.count === 0 ? this.opening() : ",";
    // Nested two levels down (the document, then its array): every line of the item is indented by 4 more.
    await this.write(`${opening}\n    ${JSON.stringify(prompt, null, 2).replaceAll("\n", "\n    ")}`);
    this.count++;
  }

  async close(): Promise<void> {
    await this.write(this.count === 0 ? `${this.empty()}\n` : "\n  ]\n}\n");
    this.out.end();
    await once(this.out, "close");
  }

  async abort(): Promise<void> {
    // A write still in flight fails once the stream is destroyed: nothing is to be told of it, the file goes.
    this.out.on("error", () => {});
    this.out.destroy();
    await rm(this.path, { force: true });
  }

  /** The whole document with no prompt: `…"prompts": []\n}`. */
  private empty(): string {
    return JSON.stringify({ ...this.head, prompts: [] }, null, 2);
  }

  /** The document up to and including the array's `[`. */
  private opening(): string {
    return this.empty().slice(0, -"]\n}".length);
  }

  private async write(text: string): Promise<void> {
    if (!this.out.write(text)) await once(this.out, "drain");
  }
}
