import * as os from "node:os"
import * as path from "node:path"

/**
 * mm's directory under the user's cache directory: `$XDG_CACHE_HOME/mm` (when that is an
 * absolute path, as the XDG spec asks), else `~/.cache/mm`. What is kept there can always be
 * thrown away: V8's compiled code (`CoreLoader.ts`), what model servers said of
 * themselves (`model/chat/ServerCache.ts`) and the configurations decoded (`config/ConfigMemo.ts`).
 */
export const userCacheDir = (env: NodeJS.ProcessEnv = process.env): string => {
  const xdg = env.XDG_CACHE_HOME
  const base = xdg !== undefined && path.isAbsolute(xdg) ? xdg : path.join(os.homedir(), ".cache")
  return path.join(base, "mm")
}
