import type { SessionSummary } from "../sessions/SessionStore"

/**
 * Sub-agents' conversations (`parent`) beside the sessions that ran them, for the listings that
 * show them (`mm sessions list --all`, `mm sessions show`): each right under its parent, in the
 * order its parent ran them.
 */

/** ` · ↳ sub-agent of 20261201-… at turn 2`: a sub-agent's conversation, on its listing row. */
export const subAgentSuffix = (parent: SessionSummary["parent"]): string =>
  parent === undefined ? "" : ` · ↳ sub-agent of ${parent.id} at turn ${parent.turn}`

/** Oldest first: the order a parent ran its sub-agents in. */
const byStart = (a: SessionSummary, b: SessionSummary): number =>
  a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : 1

/**
 * The rows in their order, each sub-agent's conversation moved right after its parent (and the
 * ones it ran itself after it); one whose parent is not among the rows stays where it was.
 */
export const underParents = (rows: ReadonlyArray<SessionSummary>): ReadonlyArray<SessionSummary> => {
  if (rows.every((row) => row.parent === undefined)) return rows
  const present = new Set(rows.map((row) => row.id))
  const children = new Map<string, Array<SessionSummary>>()
  for (const row of rows) {
    if (row.parent === undefined || !present.has(row.parent.id)) continue
    const siblings = children.get(row.parent.id) ?? []
    siblings.push(row)
    children.set(row.parent.id, siblings)
  }
  const ordered: Array<SessionSummary> = []
  const placed = new Set<string>()
  const place = (row: SessionSummary) => {
    // a file edited into a loop of parents is still shown once
    if (placed.has(row.id)) return
    placed.add(row.id)
    ordered.push(row)
    for (const child of (children.get(row.id) ?? []).sort(byStart)) place(child)
  }
  for (const row of rows) {
    if (row.parent === undefined || !present.has(row.parent.id)) place(row)
  }
  // what a loop of parents left out, in its order
  for (const row of rows) place(row)
  return ordered
}
