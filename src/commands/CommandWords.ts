import type { CompactReport } from "../agent/Agent"

/**
 * The words of commands both façades offer, said once: the terminal prints them as a line, the
 * editor as a sentence (`sentence`).
 */

/** What `/compact` did: the messages it replaced and the tokens before and after, or why it did nothing. */
export const compactedLine = (report: CompactReport): string =>
  report._tag === "Nothing"
    ? "nothing to compact yet: the history is no longer than the turns kept as they are"
    : `compacted: ${report.replaced} older message(s) replaced by a summary (about ${report.tokensBefore} → ${report.tokensAfter} tokens)`

/** A line as the editor's message: a capital first letter and a full stop. */
export const sentence = (line: string): string =>
  `${line.charAt(0).toUpperCase()}${line.slice(1)}${/[.!?]$/.test(line) ? "" : "."}`
