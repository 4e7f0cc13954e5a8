import * as fs from "node:fs"
import * as path from "node:path"

/**
 * Where a path really leads, link-safely: every symbolic link on the way is followed, one
 * component at a time, dangling ones included (what a write through them would create), and
 * a regular file with more than one hard link counts as leading outside (its other names
 * may be anywhere). `/undo` refuses to write where this says "outside".
 */

/** More links than this on one path: a loop (as the kernel's ELOOP). */
const MAX_LINKS = 40

const parts = (absolute: string): Array<string> => absolute.split(path.sep).filter((p) => p !== "" && p !== ".")

/** The real path of `file` (made absolute against `cwd`), each symbolic link followed, even those that dangle. */
export const realPathOf = (file: string, cwd = process.cwd()): string => {
  const root = path.parse(path.resolve(cwd, file)).root
  let rest = parts(path.resolve(cwd, file))
  let done = root
  let links = 0
  while (rest.length > 0) {
    const part = rest.shift() as string
    if (part === "..") {
      done = path.dirname(done)
      continue
    }
    const next = path.join(done, part)
    const stat = fs.lstatSync(next, { throwIfNoEntry: false })
    if (stat === undefined || !stat.isSymbolicLink()) {
      done = next
      continue
    }
    links += 1
    if (links > MAX_LINKS) {
      throw Object.assign(new Error(`too many symbolic links on the way to ${file}`), { code: "ELOOP" })
    }
    rest = [...parts(path.resolve(done, fs.readlinkSync(next))), ...rest]
    done = root
  }
  return done
}

/** Whether `file` is `dir` or lies under it, by their names (absolute paths; no link followed). */
export const within = (dir: string, file: string): boolean => {
  const relative = path.relative(dir, file)
  return relative === "" || (relative !== ".." && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative))
}

export type ProjectTarget =
  | { readonly _tag: "Inside"; readonly real: string }
  /** `why`: the words a refusal says, e.g. `it now leads outside the project: /etc/passwd`. */
  | { readonly _tag: "Outside"; readonly real: string; readonly why: string }

/** Where `file` really leads, and whether that is inside the project directory `project` (itself resolved). */
export const projectTarget = (project: string, file: string): ProjectTarget => {
  const real = realPathOf(file, project)
  if (!within(realPathOf(project), real)) {
    return { _tag: "Outside", real, why: `it now leads outside the project: ${real}` }
  }
  const stat = fs.lstatSync(real, { throwIfNoEntry: false })
  if (stat?.isFile() === true && stat.nlink > 1) {
    return { _tag: "Outside", real, why: `it has ${stat.nlink} hard links: it may lead outside the project` }
  }
  return { _tag: "Inside", real }
}

/**
 * `projectTarget` that never throws: a path that cannot be resolved (a loop of links, a
 * component that cannot be read) counts as outside, so that it is asked and never covered.
 */
export const projectTargetOf = (project: string, file: string): ProjectTarget => {
  try {
    return projectTarget(project, file)
  } catch (cause) {
    const resolved = path.resolve(project, file)
    return {
      _tag: "Outside",
      real: resolved,
      why: `it cannot be resolved (${cause instanceof Error ? cause.message : String(cause)})`
    }
  }
}

/** Whether `file` (relative to `project`) really leads inside the project: links followed, hard links refused. */
export const isInsideProject = (project: string, file: string): boolean =>
  projectTargetOf(project, file)._tag === "Inside"
