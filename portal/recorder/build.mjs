// The plain-script build: the ES module with its exports gathered on one global,
// `FairgridRecorder`, for pages that load scripts without modules. No bundler: the module
// imports nothing. Also copies the schema the recorder's output follows into dist/.
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const source = readFileSync(join(here, "src/recorder.js"), "utf8");
const names = [...source.matchAll(/^export (?:class|function|const) (\w+)/gm)].map((m) => m[1]);
const body = source.replace(/^export /gm, "");
mkdirSync(join(here, "dist"), { recursive: true });
writeFileSync(join(here, "dist/recorder.global.js"),
  `/* fairgrid recorder, plain-script build of src/recorder.js (node build.mjs) */\n`
  + `(function (root) {\n"use strict";\n${body}\n`
  + `root.FairgridRecorder = { ${names.join(", ")} };\n})(globalThis);\n`);
copyFileSync(join(here, "src/recorder.js"), join(here, "dist/recorder.mjs"));
copyFileSync(join(here, "../../daemon/ingest/solve_log.schema.json"),
  join(here, "dist/solve_log.schema.json"));
console.log(`built dist/ (${names.join(", ")})`);
