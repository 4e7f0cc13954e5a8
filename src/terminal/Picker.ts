import type { SessionListing } from "../sessions/SessionStore"
import { listedSessions, localMinute, relativeTime } from "../text/Lines"
import { sanitize } from "../text/Sanitize"

export type Picked =
  | { readonly _tag: "Picked"; readonly id: string }
  /** No session with a turn to offer. */
  | { readonly _tag: "None" }
  /** Esc or Ctrl-C. */
  | { readonly _tag: "Cancelled" }

/**
 * `mm --resume` on a terminal: the project's conversations, newest update first, to pick from
 * with the arrow keys; typing filters by title or id. The prompt library is loaded only here.
 */
export const pickSession = async (entries: ReadonlyArray<SessionListing>, now: Date = new Date()): Promise<Picked> => {
  const { readable } = listedSessions({ _tag: "Listed", dir: "", entries })
  if (readable.length === 0) return { _tag: "None" }
  const { autocomplete, isCancel } = await import("@clack/prompts")
  const options = readable.map((s) => ({
    value: s.id,
    label: sanitize(s.title),
    hint: `${localMinute(s.updatedAt)} (${relativeTime(s.updatedAt, now)}) · ${s.turns} turn(s) · ${s.id}`
  }))
  const answer = await autocomplete({
    message: "Resume which conversation? (type to filter, Enter to resume, Esc to leave)",
    options,
    maxItems: 10,
    placeholder: "title or id",
    filter: (search, option) => {
      const word = search.trim().toLowerCase()
      return word === "" || option.label?.toLowerCase().includes(word) === true || String(option.value).includes(word)
    }
  })
  if (isCancel(answer)) return { _tag: "Cancelled" }
  return { _tag: "Picked", id: answer }
}
