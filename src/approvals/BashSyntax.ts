// The bash grammar (tree-sitter-bash on web-tree-sitter, both WebAssembly): the only module that
// loads them. It is bundled apart (dist/mm-bash.cjs, scripts/build.mjs) and read the first time
// a bash command is classified for approval (CommandReader.ts), never at start-up.
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"

import { Language, Parser } from "web-tree-sitter"

/** A parsed command line: the root of its syntax tree (see CommandReader.ts for how it is read). */
export type SyntaxNode = NonNullable<ReturnType<Parser["parse"]>>["rootNode"]

/** Where the two WebAssembly files are: beside this file once built (dist/), else in node_modules. */
const wasmFiles = (): { readonly runtime: string; readonly grammar: string } => {
  // (a bench bundles this file as an ES module, where __dirname does not exist)
  const dir = typeof __dirname === "string" ? __dirname : process.cwd()
  const here = path.join(dir, "tree-sitter-bash.wasm")
  if (fs.existsSync(here)) return { runtime: path.join(dir, "tree-sitter.wasm"), grammar: here }
  const require = createRequire(typeof __filename === "string" ? __filename : path.join(dir, "package.json"))
  return {
    runtime: require.resolve("web-tree-sitter/tree-sitter.wasm"),
    grammar: require.resolve("tree-sitter-bash/tree-sitter-bash.wasm")
  }
}

/**
 * Loads the parser; `parse` hands the tree's root to `read` and frees the tree after. When the
 * parser throws (tree-sitter's WebAssembly aborts when a pathological command exhausts its
 * memory, and the parser that aborted fails every later parse), `parse` throws, and the next
 * call builds a new parser: one command cannot stop every later one from being read.
 */
export const loadBashSyntax = async (): Promise<
  { readonly parse: <A>(command: string, read: (root: SyntaxNode) => A) => A }
> => {
  const files = wasmFiles()
  // an abort is thrown to the caller: nothing is printed on mm's screen
  await Parser.init({ locateFile: () => files.runtime, printErr: () => undefined })
  const bash = await Language.load(files.grammar)
  let current: Parser | undefined
  const parserNow = (): Parser => {
    if (current !== undefined) return current
    const parser = new Parser()
    parser.setLanguage(bash)
    current = parser
    return parser
  }
  const drop = (parser: Parser) => {
    current = undefined
    try {
      parser.delete()
    } catch {
      // an aborted parser may not free itself: it is forgotten all the same
    }
  }
  return {
    parse: (command, read) => {
      const parser = parserNow()
      let tree: ReturnType<Parser["parse"]>
      try {
        tree = parser.parse(command)
      } catch (cause) {
        drop(parser)
        throw cause
      }
      if (tree === null) throw new Error("the bash parser returned nothing")
      try {
        return read(tree.rootNode)
      } finally {
        tree.delete()
      }
    }
  }
}
