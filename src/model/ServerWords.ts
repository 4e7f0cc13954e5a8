/**
 * What every API's client and the façades say alike of a server: the model ids of its list,
 * those ids shown, the port of its address, a window in tokens as people read it.
 */
import { isRecord } from "../lib/Guards"

/**
 * The model ids of a `/models` answer: OpenAI's `{data: [{id}]}`, or Ollama's `{models: [{name}]}`;
 * undefined when the body is neither. The one reader of a server's list (`mm init` uses it too).
 */
export const listedModels = (body: unknown): ReadonlyArray<string> | undefined => {
  if (!isRecord(body)) return undefined
  const list = Array.isArray(body.data) ? body.data : Array.isArray(body.models) ? body.models : undefined
  if (list === undefined) return undefined
  const ids = list.flatMap((entry: unknown) =>
    isRecord(entry) && typeof entry.id === "string"
      ? [entry.id]
      : isRecord(entry) && typeof entry.name === "string"
      ? [entry.name]
      : []
  )
  return [...new Set(ids)].filter((id) => id !== "")
}

const MODELS_SHOWN = 8

/** `a, b, c` (the first few of a long list). */
export const modelNames = (models: ReadonlyArray<string>): string =>
  models.length <= MODELS_SHOWN
    ? models.join(", ")
    : `${models.slice(0, MODELS_SHOWN).join(", ")}, … (${models.length} in all)`

/** The port a URL names, or the one its scheme implies; "" when it is not a URL. */
export const portOf = (url: string): string => {
  try {
    const parsed = new URL(url)
    return parsed.port !== "" ? parsed.port : parsed.protocol === "https:" ? "443" : "80"
  } catch {
    return ""
  }
}

/** `32768` → `32k`, `4096` → `4k`, `131072` → `128k`, `1000` → `1000`. */
export const windowFigure = (tokens: number): string =>
  tokens >= 1024 && tokens % 1024 === 0
    ? `${tokens / 1024}k`
    : tokens >= 10000
    ? `${Math.round(tokens / 1000)}k`
    : String(tokens)
