import type { SearchHit, SessionHits } from "../sessions/SessionSearch"
import { localMinute } from "./Lines"
import { sanitize } from "./Sanitize"

/**
 * The lines of `mm sessions search` and `/sessions search` (docs/reference/cli.md): one per
 * matching line, `id  date  turn N  role  …line…`, an archive and a sub-agent's session marked as such.
 */

/** Lines shown per session before `… N more`; `--json` gives them all. */
const HITS_SHOWN = 3

const hitLine = (session: SessionHits, hit: SearchHit): string => {
  const archive = session.archiveOf === undefined ? "" : `  archive of ${session.archiveOf}`
  const subAgent = session.parent === undefined ? "" : `  sub-agent of ${session.parent.id}`
  return sanitize(
    `${session.id}  ${localMinute(session.updatedAt)}${archive}${subAgent}  turn ${hit.turn}  ${hit.role}  ${hit.line}`
  )
}

/** One session's hits as shown: the first few, then how many more and how to see them. */
export const sessionHitLines = (session: SessionHits, shown: number = HITS_SHOWN): ReadonlyArray<string> => {
  const lines = session.hits.slice(0, shown).map((hit) => hitLine(session, hit))
  const more = session.hits.length - shown
  if (more > 0) lines.push(`  … ${more} more line(s) in ${session.id} (mm sessions show ${session.id})`)
  return lines
}

/** The hits of one session as JSON Lines: one object per matching line. */
export const sessionHitJson = (session: SessionHits): ReadonlyArray<string> =>
  session.hits.map((hit) =>
    JSON.stringify({
      id: session.id,
      updatedAt: session.updatedAt,
      ...(session.archiveOf === undefined ? {} : { archiveOf: session.archiveOf }),
      ...(session.parent === undefined ? {} : { parent: session.parent }),
      turn: hit.turn,
      role: hit.role,
      line: hit.line
    })
  )

/** The last line: how many sessions matched. */
export const searchSummary = (pattern: string, sessions: number, lines: number): string =>
  sessions === 0
    ? `no session matches ${JSON.stringify(pattern)}`
    : `${lines} matching line(s) in ${sessions} session(s)`
