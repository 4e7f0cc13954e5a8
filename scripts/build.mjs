// Builds mm: dist/mm-core.cjs (the whole program, one CommonJS file), dist/mm.js (the small
// entry that loads it through V8's code cache), and regenerates agent.schema.json.
import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { copyFileSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { resolve } from "node:path"

import { build } from "esbuild"

import { buildSearchWorker } from "./search-worker.mjs"

const pkg = JSON.parse(readFileSync("package.json", "utf8"))
const common = {
  bundle: true,
  platform: "node",
  target: "node20",
  // MM_NO_MINIFY=1 keeps names readable, for a CPU profile (node --cpu-prof dist/mm.js …)
  minify: process.env.MM_NO_MINIFY !== "1",
  legalComments: "none",
  logLevel: "warning",
  define: { MM_VERSION: JSON.stringify(pkg.version) }
}

// Modules built into files of their own, each read only when first needed: the core imports
// `./NAME`, and the bundle goes to `dist/FILE` instead. `entry`: built here as it is (the bash
// parser and the markdown engine are built below, with their own settings).
const apartBundles = [
  // the MCP SDK: when an MCP server is configured
  { module: "McpSdk", file: "mm-mcp.cjs", entry: "src/mcp/McpSdk.ts" },
  // the markdown engine (marked, marked-terminal, highlight.js, cli-table3): with the first answer drawn on a terminal
  { module: "MarkdownEngine", file: "mm-markdown.cjs" },
  // the bash parser (web-tree-sitter and tree-sitter-bash, WebAssembly): the first time a bash
  // command is classified for approval; its two .wasm files are copied beside it
  { module: "BashSyntax", file: "mm-bash.cjs" },
  // grep's and glob's libraries (ignore, picomatch): with the first search
  { module: "SearchLibs", file: "mm-search.cjs", entry: "src/tools/SearchLibs.ts" },
  // re2js: when a hook's matcher is a regular expression rather than tool names
  { module: "HookRegex", file: "mm-regex.cjs", entry: "src/hooks/HookRegex.ts" },
  // web_fetch's request and HTML-to-Markdown converter (ipaddr.js, node-html-markdown): at the first fetch
  { module: "WebLibs", file: "mm-web.cjs", entry: "src/tools/WebLibs.ts" }
]

const apart = {
  name: "apart",
  setup(build) {
    for (const { file, module } of apartBundles) {
      build.onResolve({ filter: new RegExp(`^\\./${module}$`) }, () => ({ path: `./${file}`, external: true }))
    }
  }
}

// @effect/platform-node's HTTP client makes an http and an https agent with the services:
// node:https (and tls) are loaded only when a request goes to an https URL instead
// (scripts/lazy-https.cjs), node:http when the first request goes out (scripts/lazy-http.cjs)
const httpWhenUsed = {
  name: "http-when-used",
  setup(build) {
    build.onResolve(
      { filter: /^node:https?$/ },
      (args) =>
        /@effect[\\/]platform-node[\\/].*httpClient\.js$/.test(args.importer)
          ? { path: resolve(args.path === "node:https" ? "scripts/lazy-https.cjs" : "scripts/lazy-http.cjs") }
          : undefined
    )
  }
}

// esbuild gives every module that does `import * as fs from "node:fs"` a copy of the builtin's
// exports of its own (a getter made per export and per importer): 33 copies of node:fs's 104
// exports, 46 of node:path's and more were some 9 ms of every start. Each builtin is reached
// through one module of the bundle instead, whose namespace every importer shares; its default
// export (`import readline from "node:readline"`, as @clack/core does) is the module itself.
const builtinsShared = {
  name: "builtins-shared",
  setup(build) {
    build.onResolve(
      { filter: /^node:/ },
      (args) => (args.namespace === "builtin" ? undefined : { path: args.path, namespace: "builtin" })
    )
    build.onLoad({ filter: /.*/, namespace: "builtin" }, (args) => ({
      contents: `export * from ${JSON.stringify(args.path)}\nexport default require(${JSON.stringify(args.path)})\n`,
      loader: "js",
      resolveDir: process.cwd()
    }))
  }
}

// what a decoded agent.yaml depends on (src/config/ and the locked versions of yaml and Effect):
// a memo of decoded configurations is trusted only by the build of the same stamp (src/config/ConfigMemo.ts)
const configStamp = createHash("sha256")
for (const name of readdirSync("src/config").filter((name) => name.endsWith(".ts")).sort()) {
  configStamp.update(`${name}\0`).update(readFileSync(`src/config/${name}`)).update("\0")
}
configStamp.update(readFileSync("package-lock.json"))

rmSync("dist", { recursive: true, force: true })
await build({
  ...common,
  define: { ...common.define, MM_CONFIG_STAMP: JSON.stringify(configStamp.digest("hex").slice(0, 16)) },
  entryPoints: ["src/Main.ts"],
  outfile: "dist/mm-core.cjs",
  format: "cjs",
  plugins: [apart, httpWhenUsed, builtinsShared],
  supported: { "dynamic-import": false }
})
for (const { entry, file } of apartBundles) {
  if (entry !== undefined) await build({ ...common, entryPoints: [entry], outfile: `dist/${file}`, format: "cjs" })
}
// grep's and glob's searches run in a worker thread of their own file, started with the first search
await buildSearchWorker("dist/mm-search-worker.cjs", { minify: common.minify })
await build({
  ...common,
  entryPoints: ["src/approvals/BashSyntax.ts"],
  outfile: "dist/mm-bash.cjs",
  format: "cjs",
  // web-tree-sitter asks import.meta.url for a require of its own: the bundle's file, as a URL
  banner: { js: "const __mmBashUrl = require(\"node:url\").pathToFileURL(__filename).href;" },
  define: { ...common.define, "import.meta.url": "__mmBashUrl" }
})
copyFileSync("node_modules/web-tree-sitter/tree-sitter.wasm", "dist/tree-sitter.wasm")
copyFileSync("node_modules/tree-sitter-bash/tree-sitter-bash.wasm", "dist/tree-sitter-bash.wasm")
// highlight.js with the languages answers usually hold (scripts/highlight-common.cjs), not all 190;
// two of marked-terminal's imports that mm never uses are left out (see the two scripts named)
const markdownTrimmed = {
  name: "markdown-trimmed",
  setup(build) {
    build.onResolve({ filter: /^highlight\.js$/ }, () => ({ path: resolve("scripts/highlight-common.cjs") }))
    // mm turns marked-terminal's `:shortcode:` emoji off: its table of names was a third of the bundle
    build.onResolve({ filter: /^node-emoji$/ }, () => ({ path: resolve("scripts/no-emoji.cjs") }))
    build.onResolve({ filter: /^cli-highlight$/ }, () => ({ path: resolve("scripts/no-cli-highlight.cjs") }))
  }
}
await build({
  ...common,
  entryPoints: ["src/terminal/MarkdownEngine.ts"],
  outfile: "dist/mm-markdown.cjs",
  format: "cjs",
  plugins: [markdownTrimmed]
})
// a core of ASCII alone (esbuild escapes the rest in a minified build; comments kept by
// MM_NO_MINIFY may not be) is read by dist/mm.js as latin1, which skips UTF-8 decoding
const core = readFileSync("dist/mm-core.cjs")
const coreEncoding = core.some((byte) => byte > 0x7f) ? "utf8" : "latin1"
const coreHash = createHash("sha256").update(core).digest("hex").slice(0, 16)
await build({
  ...common,
  entryPoints: ["src/bin.ts"],
  outfile: "dist/mm.js",
  format: "cjs",
  banner: { js: "#!/usr/bin/env node" },
  define: { ...common.define, MM_CORE_HASH: JSON.stringify(coreHash), MM_CORE_ENCODING: JSON.stringify(coreEncoding) }
})

// CommonJS starts faster than an ES module entry; this marks dist/*.js as such.
writeFileSync("dist/package.json", JSON.stringify({ type: "commonjs" }) + "\n")

await build({
  ...common,
  minify: false,
  entryPoints: ["scripts/json-schema.ts"],
  outfile: "dist/json-schema.cjs",
  format: "cjs"
})
const schema = execFileSync(process.execPath, ["dist/json-schema.cjs"], { encoding: "utf8" })
writeFileSync("agent.schema.json", schema)
rmSync("dist/json-schema.cjs")
