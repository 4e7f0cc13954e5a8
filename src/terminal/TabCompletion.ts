import * as fs from "node:fs"
import * as path from "node:path"

import type { Completer } from "./Input"

/**
 * What Tab completes: a slash command at the start of a line, a session id after `/resume `
 * (by prefix, newest first), a model id after `/model `, and a project path after `@`.
 */
export const makeCompleter = (options: {
  readonly cwd: string
  readonly commands: () => ReadonlyArray<string>
  readonly sessionIds: () => Promise<ReadonlyArray<string>>
  /** The model ids `/model ` takes (the server's list, asked once and kept by the model client). */
  readonly models?: () => Promise<ReadonlyArray<string>>
}): Completer => {
  // the server's list is asked at the first Tab after `/model `, then kept for the launch
  let models: Promise<ReadonlyArray<string>> | undefined
  return (before) => complete(before, options, () => (models ??= options.models?.() ?? Promise.resolve([])))
}

const complete = async (
  before: string,
  options: Parameters<typeof makeCompleter>[0],
  models: () => Promise<ReadonlyArray<string>>
): ReturnType<Completer> => {
  const command = /^\/[\w:-]*$/.exec(before)
  if (command !== null) return { start: 0, items: options.commands().filter((name) => name.startsWith(before)) }
  const resume = /^\/resume\s+(\S*)$/.exec(before)
  if (resume !== null) {
    const typed = resume[1]
    const ids = (await options.sessionIds()).filter((id) => id.startsWith(typed))
    return { start: before.length - typed.length, items: ids }
  }
  const model = /^\/model\s+(\S*)$/.exec(before)
  if (model !== null && options.models !== undefined) {
    const typed = model[1]
    return { start: before.length - typed.length, items: (await models()).filter((id) => id.startsWith(typed)) }
  }
  const at = /(?:^|\s)@(\S*)$/.exec(before)
  if (at !== null) return { start: before.length - at[1].length, items: pathsStartingWith(options.cwd, at[1]) }
  return undefined
}

/** Entries of the project whose path starts with `typed`; directories end with `/`. Hidden ones only when asked for. */
const pathsStartingWith = (cwd: string, typed: string): Array<string> => {
  const slash = typed.lastIndexOf("/")
  const dirPart = slash === -1 ? "" : typed.slice(0, slash + 1)
  const namePart = typed.slice(slash + 1)
  try {
    return fs
      .readdirSync(path.resolve(cwd, dirPart === "" ? "." : dirPart), { withFileTypes: true })
      .filter((entry) => entry.name.startsWith(namePart) && (namePart.startsWith(".") || !entry.name.startsWith(".")))
      .map((entry) => `${dirPart}${entry.name}${entry.isDirectory() ? "/" : ""}`)
      .sort()
  } catch {
    return []
  }
}
