import { writeFileSync } from "node:fs";
import { seedLarge } from "/work/main/packages/server/bench/lib/heavy-seed.js";

const file = process.argv[2];
const n = Number(process.argv[3]);
const t = Date.now();
const seeded = await seedLarge(file, n, (k) => console.log(k, (Date.now() - t) / 1000));
writeFileSync(`${file}.json`, JSON.stringify(seeded));
console.log("done", (Date.now() - t) / 1000);
