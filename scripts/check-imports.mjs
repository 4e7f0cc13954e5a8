// The house's import rule, checked on src/: folders import only their own or lower folders,
// the façades never import one another, and no import cycle exists (type-only imports too).
//   node scripts/check-imports.mjs [SRC_DIR]   prints each problem on a line; exits 1 if any
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

/** The folders of src/, lowest first; folders in one inner list are peers and may not import each other. */
export const LAYERS = [
  ["lib"],
  ["domain"],
  ["config"],
  ["model"],
  ["tools"],
  ["approvals"],
  ["sessions"],
  ["mcp", "changes"],
  ["hooks"],
  ["agent"],
  ["text"],
  ["commands"],
  ["terminal", "acp", "print"],
  ["app"],
  ["cli"],
  ["."]
]

/** Folders that hold declarations only (ambient types), outside the order. */
const AMBIENT = new Set(["types"])

const rankOf = new Map(LAYERS.flatMap((folders, rank) => folders.map((folder) => [folder, rank])))

const sourceFiles = (dir) =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(file)
    return /\.(ts|mts|cts)$/.test(entry.name) ? [file] : []
  })

/** Every relative module a file names: static imports and exports (type-only too), import() and require(). */
export const specifiersOf = (text) => {
  const found = []
  const patterns = [
    /^\s*(?:import|export)\s[^;]*?\sfrom\s+["']([^"']+)["']/gm,
    /^\s*import\s+["']([^"']+)["']/gm,
    /\bimport\(\s*["']([^"']+)["']\s*\)/g,
    /\brequire\(\s*["']([^"']+)["']\s*\)/g
  ]
  for (const pattern of patterns) {
    for (const match of text.matchAll(pattern)) if (match[1].startsWith(".")) found.push(match[1])
  }
  return found
}

const resolveFrom = (files, from, specifier) => {
  const base = path.resolve(path.dirname(from), specifier)
  for (const candidate of [base, `${base}.ts`, `${base}.d.ts`, path.join(base, "index.ts")]) {
    if (files.has(candidate)) return candidate
  }
  return undefined
}

/** The folder of src/ a file belongs to ("." for the files at the root). */
const folderOf = (srcDir, file) => {
  const relative = path.relative(srcDir, file)
  return relative.includes(path.sep) ? relative.split(path.sep)[0] : "."
}

/** The file graph of src/: file → the files it imports. Unresolvable relative imports are problems too. */
export const importGraph = (srcDir) => {
  const files = new Set(sourceFiles(srcDir))
  const graph = new Map()
  const problems = []
  for (const file of files) {
    const targets = new Set()
    for (const specifier of specifiersOf(fs.readFileSync(file, "utf8"))) {
      const target = resolveFrom(files, file, specifier)
      if (target === undefined) problems.push(`${path.relative(srcDir, file)}: cannot resolve ${specifier}`)
      else targets.add(target)
    }
    graph.set(file, targets)
  }
  return { graph, problems }
}

/** The cycles of a graph, each as the list of its files (Tarjan's strongly connected components). */
export const cyclesOf = (graph) => {
  let index = 0
  const indexOf = new Map()
  const low = new Map()
  const stack = []
  const onStack = new Set()
  const cycles = []
  const visit = (node) => {
    indexOf.set(node, index)
    low.set(node, index)
    index++
    stack.push(node)
    onStack.add(node)
    for (const next of graph.get(node) ?? []) {
      if (!indexOf.has(next)) {
        visit(next)
        low.set(node, Math.min(low.get(node), low.get(next)))
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node), indexOf.get(next)))
    }
    if (low.get(node) !== indexOf.get(node)) return
    const component = []
    let member
    do {
      member = stack.pop()
      onStack.delete(member)
      component.push(member)
    } while (member !== node)
    if (component.length > 1 || (graph.get(node) ?? new Set()).has(node)) cycles.push(component.reverse())
  }
  for (const node of graph.keys()) if (!indexOf.has(node)) visit(node)
  return cycles
}

/** Every breach of the rule in `srcDir`, one line each; an empty list when the house holds. */
export const checkImports = (srcDir) => {
  const { graph, problems } = importGraph(srcDir)
  const name = (file) => path.relative(srcDir, file)
  for (const [file, targets] of graph) {
    const from = folderOf(srcDir, file)
    if (AMBIENT.has(from)) continue
    if (!rankOf.has(from)) {
      problems.push(`${name(file)}: the folder ${from}/ has no place in the order (scripts/check-imports.mjs)`)
      continue
    }
    for (const target of targets) {
      const to = folderOf(srcDir, target)
      if (to === from || AMBIENT.has(to)) continue
      if (!rankOf.has(to)) continue
      if (rankOf.get(to) > rankOf.get(from)) problems.push(`${name(file)} → ${name(target)}: ${from}/ is below ${to}/`)
      else if (rankOf.get(to) === rankOf.get(from)) {
        problems.push(`${name(file)} → ${name(target)}: ${from}/ and ${to}/ are peers and may not import each other`)
      }
    }
  }
  for (const cycle of cyclesOf(graph)) problems.push(`import cycle among: ${cycle.map(name).sort().join(", ")}`)
  return problems
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const srcDir = path.resolve(process.argv[2] ?? path.join(path.dirname(fileURLToPath(import.meta.url)), "../src"))
  const problems = checkImports(srcDir)
  for (const problem of problems) console.error(problem)
  if (problems.length > 0) process.exit(1)
  console.log(`imports: ${sourceFiles(srcDir).length} files, no cycle, every import points down`)
}
