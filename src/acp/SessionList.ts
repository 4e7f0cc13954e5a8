import type * as acp from "@agentclientprotocol/sdk"

import type { SessionSummary } from "../sessions/SessionStore"

const PAGE_SIZE = 50

/**
 * Where the next page starts: after the last session shown, in listing order. Keyed on that
 * session rather than on a count, so that a session updated between two pages neither
 * repeats one that was shown nor hides one that was not.
 */
type Cursor = { readonly _tag: "Start" } | {
  readonly _tag: "After"
  readonly updatedAt: string
  readonly id: string
}

const start: Cursor = { _tag: "Start" }

/** Opaque to the editor. */
export const encodeCursor = (after: SessionSummary): string =>
  Buffer.from(JSON.stringify({ updatedAt: after.updatedAt, id: after.id }), "utf8").toString("base64url")

export const decodeCursor = (cursor: string | null | undefined): Cursor | undefined => {
  if (cursor === undefined || cursor === null || cursor === "") return start
  try {
    const value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as
      | { updatedAt?: unknown; id?: unknown }
      | null
    return typeof value?.updatedAt === "string" && typeof value.id === "string"
      ? { _tag: "After", updatedAt: value.updatedAt, id: value.id }
      : undefined
  } catch {
    return undefined
  }
}

/** A session worth listing: one question at least was asked in it. */
const isListed = (summary: SessionSummary): boolean => summary.turns > 0 || summary.title !== ""

/** Most recently updated first; the id (creation time) breaks ties, newest first. */
const order = (a: { updatedAt: string; id: string }, b: { updatedAt: string; id: string }): number =>
  a.updatedAt !== b.updatedAt ? (a.updatedAt < b.updatedAt ? 1 : -1) : a.id < b.id ? 1 : a.id > b.id ? -1 : 0

/** One page of sessions, most recently updated first. */
export const listPage = (
  summaries: ReadonlyArray<SessionSummary>,
  cursor: Cursor,
  pageSize: number = PAGE_SIZE
): acp.ListSessionsResponse => {
  const sorted = summaries.filter(isListed).sort(order)
  const rest = cursor._tag === "Start" ? sorted : sorted.filter((s) => order(s, cursor) > 0)
  const page = rest.slice(0, pageSize)
  return {
    sessions: page.map((s) => ({
      sessionId: s.id,
      cwd: s.cwd,
      title: s.title === "" ? null : s.title,
      updatedAt: s.updatedAt
    })),
    ...(rest.length > pageSize ? { nextCursor: encodeCursor(page[page.length - 1]) } : {})
  }
}
