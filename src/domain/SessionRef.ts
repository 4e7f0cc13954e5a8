/**
 * What a person typed to name a session (`/resume 9c03`, `mm --resume 20261128-16`,
 * `mm sessions show 9c03be11`), resolved against the ids that exist: a full id, a unique
 * prefix of one, or a unique suffix of 4 to 8 hex digits of its random part (`9c03be11`, `be11`).
 * Nothing typed ever reaches the file system: only an id from `ids` comes out.
 */
type SessionRef =
  | { readonly _tag: "Found"; readonly id: string }
  | { readonly _tag: "NotFound"; readonly typed: string }
  | { readonly _tag: "Ambiguous"; readonly typed: string; readonly candidates: ReadonlyArray<string> }

const hexSuffix = /^[0-9a-f]{4,8}$/

/** `ids` in the order they should be offered as candidates (a listing's order, newest first). */
export const resolveSessionRef = (typed: string, ids: ReadonlyArray<string>): SessionRef => {
  const text = typed.trim()
  if (text === "") return { _tag: "NotFound", typed: text }
  if (ids.includes(text)) return { _tag: "Found", id: text }
  const matches = ids.filter(
    (id) => id.startsWith(text) || (hexSuffix.test(text) && id.slice(id.lastIndexOf("-") + 1).endsWith(text))
  )
  const unique = [...new Set(matches)]
  if (unique.length === 1) return { _tag: "Found", id: unique[0] }
  if (unique.length === 0) return { _tag: "NotFound", typed: text }
  return { _tag: "Ambiguous", typed: text, candidates: unique }
}

const shown = (typed: string) => JSON.stringify(typed.length > 40 ? `${typed.slice(0, 40)}…` : typed)

/** One line for a reference that named no session, or several (at most 5 candidates shown). */
export const sessionRefProblem = (ref: Exclude<SessionRef, { _tag: "Found" }>): string => {
  if (ref._tag === "NotFound") return `no session ${shown(ref.typed)} in this project`
  const listed = ref.candidates.slice(0, 5).join(", ")
  const more = ref.candidates.length > 5 ? ` and ${ref.candidates.length - 5} more` : ""
  return `${shown(ref.typed)} matches ${ref.candidates.length} sessions: ${listed}${more} — type more of the id`
}
