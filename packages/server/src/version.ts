import { readFileSync } from "node:fs";

/** The package version, read from package.json (the same relative path from src/ and dist/). */
export const VERSION: string = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).version;
