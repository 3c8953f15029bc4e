#!/usr/bin/env node
// Builds a JavaScript cordon plugin into a component:
//   node sdk/js/build.mjs PROJECT_DIR OUT.wasm
// The project's entry (`app.js`, or package.json's "main") is bundled with rolldown together with
// the SDK (imported as "cordon-sdk") and any npm packages it uses, behind an entry that binds the
// host's imports; componentize-js then turns the bundle into a component of world `cordon-plugin`.
// `fetch` is kept (the `http` feature, over wasi:http); incoming HTTP (`fetch-event`) is not.
// The component's world is `cordon-plugin` plus `wasi:filesystem` (which the JS engine imports
// anyway), so the SDK's `readFile` can reach the directories the operator granted.

import { componentize } from "@bytecodealliance/componentize-js";
import { rolldown } from "rolldown";
import { existsSync, readFileSync } from "node:fs";
import { copyFile, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const SDK_DIR = dirname(fileURLToPath(import.meta.url));
const WIT_DIR = resolve(SDK_DIR, "../../wit/plugin-0.3.0");
const HOST_IMPORT = "cordon:plugin/host@0.3.0";
// WASI's WIT as the pinned componentize-js toolchain ships it (the version its engine imports).
const WASI_VERSION = "0.2.12";
const WASI_WIT = join(SDK_DIR, "node_modules/@bytecodealliance/jco/lib/wit/builtin", WASI_VERSION);

/** Writes the JS plugin world (cordon-plugin plus wasi:filesystem) and its dependencies. */
async function writeWorld(dir) {
  for (const [name, source] of [
    ["cordon-plugin", join(WIT_DIR, "plugin.wit")],
    ["wasi-filesystem", join(WASI_WIT, "wasi-filesystem/package.wit")],
    ["wasi-io", join(WASI_WIT, "wasi-io/package.wit")],
    ["wasi-clocks", join(WASI_WIT, "wasi-clocks/package.wit")],
  ]) {
    await mkdir(join(dir, "deps", name), { recursive: true });
    await copyFile(source, join(dir, "deps", name, "package.wit"));
  }
  await writeFile(
    join(dir, "world.wit"),
    [
      "package cordon:js-plugin;",
      "world cordon-js-plugin {",
      "  include cordon:plugin/cordon-plugin@0.3.0;",
      `  import wasi:filesystem/preopens@${WASI_VERSION};`,
      "}",
      "",
    ].join("\n"),
  );
}

function entryOf(project) {
  const manifest = join(project, "package.json");
  if (existsSync(manifest)) {
    const main = JSON.parse(readFileSync(manifest, "utf8")).main;
    if (main) return resolve(project, main);
  }
  return resolve(project, "app.js");
}

async function main() {
  const [projectArg, outArg] = process.argv.slice(2);
  if (!projectArg || !outArg) {
    console.error("usage: node build.mjs PROJECT_DIR OUT.wasm");
    process.exit(2);
  }
  const project = resolve(projectArg);
  const app = entryOf(project);
  if (!existsSync(app)) {
    console.error(`error: ${app} does not exist; a JavaScript plugin's tools are defined in app.js`);
    process.exit(2);
  }
  const work = await mkdtemp(join(tmpdir(), "cordon-js-build-"));
  try {
    const entry = join(work, "entry.js");
    await writeFile(
      entry,
      [
        `import * as host from "${HOST_IMPORT}";`,
        `import * as preopens from "wasi:filesystem/preopens@${WASI_VERSION}";`,
        `import { bindHost, plugin } from "cordon-sdk";`,
        `import ${JSON.stringify(app)};`,
        `bindHost(host, preopens);`,
        `export { plugin };`,
        ``,
      ].join("\n"),
    );
    const bundle = await rolldown({
      input: entry,
      cwd: project,
      platform: "neutral",
      external: [/^cordon:plugin\//, /^wasi:/],
      resolve: { alias: { "cordon-sdk": join(SDK_DIR, "cordon.js") } },
      logLevel: "warn",
    });
    const bundled = join(work, "bundle.js");
    await bundle.write({ file: bundled, format: "esm" });
    await bundle.close();
    const wit = join(work, "wit");
    await writeWorld(wit);
    const { component } = await componentize({
      sourcePath: bundled,
      witPath: wit,
      worldName: "cordon-js-plugin",
      disableFeatures: ["fetch-event"],
    });
    await writeFile(resolve(outArg), component);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(`error: ${error?.stack ?? error}`);
  process.exit(1);
});
