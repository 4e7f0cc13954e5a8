import * as fs from "node:fs"
import * as path from "node:path"

const exists = (file: string) => {
  try {
    fs.statSync(file)
    return true
  } catch {
    return false
  }
}

/**
 * mm started below a project (a directory above holds `agent.yaml` or `.mm/sessions`) while
 * it found no configuration of its own: the line that says so, or undefined. A `.mm/` that
 * holds no sessions (`~/.mm/skills`) does not make a project.
 */
export const projectAboveLine = (cwd: string, configFile: string | undefined): string | undefined => {
  if (configFile !== undefined || exists(path.join(cwd, ".mm", "sessions"))) return undefined
  let dir = path.resolve(cwd)
  while (true) {
    const parent = path.dirname(dir)
    if (parent === dir) return undefined
    dir = parent
    if (exists(path.join(dir, "agent.yaml"))) return `agent.yaml found in ${dir} — start mm there, or pass --config`
    if (exists(path.join(dir, ".mm", "sessions"))) return `.mm/ found in ${dir} — start mm there, or pass --config`
  }
}
