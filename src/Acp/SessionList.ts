import type * as acp from "@agentclientprotocol/sdk"
import type { SessionSummary } from "../SessionStore"

export const PAGE_SIZE = 50

/** A position in the listing, opaque to the editor. */
export const encodeCursor = (offset: number): string => Buffer.from(JSON.stringify({ offset }), "utf8").toString("base64url")

export const decodeCursor = (cursor: string | null | undefined): number | undefined => {
  if (cursor === undefined || cursor === null || cursor === "") return 0
  try {
    const offset = (JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as { offset?: unknown } | null)?.offset
    return typeof offset === "number" && Number.isInteger(offset) && offset >= 0 ? offset : undefined
  } catch {
    return undefined
  }
}

/** A session worth listing: one question at least was asked in it. */
export const isListed = (summary: SessionSummary): boolean => summary.turns > 0 || summary.title !== ""

/** One page of sessions, most recently updated first. */
export const listPage = (
  summaries: ReadonlyArray<SessionSummary>,
  offset: number,
  pageSize: number = PAGE_SIZE
): acp.ListSessionsResponse => {
  const sorted = summaries
    .filter(isListed)
    .sort((a, b) => (a.updatedAt !== b.updatedAt ? (a.updatedAt < b.updatedAt ? 1 : -1) : a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
  const page = sorted.slice(offset, offset + pageSize)
  const next = offset + pageSize
  return {
    sessions: page.map((s) => ({ sessionId: s.id, cwd: s.cwd, title: s.title === "" ? null : s.title, updatedAt: s.updatedAt })),
    ...(next < sorted.length ? { nextCursor: encodeCursor(next) } : {})
  }
}
