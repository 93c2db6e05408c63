// Bundle the page's msgpack codec: node build.mjs [OUTDIR]
// OUTDIR defaults to the server's static/vendor folder; the test suite builds into a
// temporary folder and compares the result with the committed files byte for byte.
import { copyFileSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const outdir = resolve(process.argv[2] ?? join(here, "../server/spider_server/static/vendor"));
const lock = JSON.parse(readFileSync(join(here, "package-lock.json"), "utf8"));
const msgpack = lock.packages["node_modules/@msgpack/msgpack"];
const esbuild = lock.packages["node_modules/esbuild"];

mkdirSync(outdir, { recursive: true });
await build({
  absWorkingDir: here, // the paths in the bundle's comments do not depend on the caller's folder
  entryPoints: [join(here, "msgpack-entry.js")],
  bundle: true,
  format: "esm",
  target: "es2020",
  charset: "utf8",
  legalComments: "inline",
  banner: {
    js:
      `// @msgpack/msgpack ${msgpack.version} (ISC license: msgpack-LICENSE.txt), ` +
      `bundled with esbuild ${esbuild.version} by make web; do not edit.\n` +
      `// integrity ${msgpack.integrity}`,
  },
  outfile: join(outdir, "msgpack.js"),
  logLevel: "warning",
});
copyFileSync(join(here, "node_modules/@msgpack/msgpack/LICENSE"), join(outdir, "msgpack-LICENSE.txt"));
