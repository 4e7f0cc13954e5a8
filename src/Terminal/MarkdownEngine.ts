import { highlight, supportsLanguage } from "cli-highlight"
import Table from "cli-table3"
import { Marked, type Tokens } from "marked"
import { markedTerminal } from "marked-terminal"
import stringWidth from "string-width"
import wrapAnsi from "wrap-ansi"

/**
 * The heavy half of answer rendering: marked with marked-terminal for the text, cli-highlight
 * for code, cli-table3 for tables, wrap-ansi and string-width for the terminal's width.
 * Built as a file of its own and loaded only when the first answer is rendered on a terminal.
 * Markdown.ts decides what is a line, a code line or a table; this file only draws them.
 */
export interface MarkdownEngine {
  /** One line of prose (a paragraph's line, a heading, a list item, a quote, a rule), wrapped at word boundaries. */
  readonly line: (markdown: string) => string
  /** One line inside a fenced block, highlighted when its language is known. */
  readonly code: (line: string, language: string) => string
  /** The rows of a table, aligned and fitted to the terminal's width. */
  readonly table: (rows: ReadonlyArray<string>) => string
}

/** Inline syntax anywhere in a line: emphasis, code, links, html, escapes, entities, emoji codes. */
const inlineSyntax = /[*_`[\]<>\\~]|https?:\/\/|&\w+;/
const heading = /^#{1,6}\s/
const listItem = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/
const quote = /^\s{0,3}>\s?(.*)$/
const rule = /^\s{0,3}([-*_])(?:\s*\1){2,}\s*$/

const CODE_INDENT = "  "

export const makeMarkdownEngine = (columns: () => number): MarkdownEngine => {
  const marked = new Marked(markedTerminal({ reflowText: false, tab: 2, showSectionPrefix: false, emoji: false, width: 10_000 }))
  const width = () => Math.max(20, (columns() || 80) - 1)

  const inline = (text: string): string => (inlineSyntax.test(text) ? (marked.parseInline(text, { async: false }) as string) : text)
  const block = (markdown: string): string => (marked.parse(markdown, { async: false }) as string).replace(/\n+$/, "")

  /** `text` wrapped at word boundaries, after `lead` on its first row and `rest` (as wide) on the others. */
  const wrap = (text: string, lead = "", rest = " ".repeat(stringWidth(lead))): string => {
    const room = width() - stringWidth(lead)
    if (stringWidth(text) <= room) return lead + text
    const rows = wrapAnsi(text, Math.max(10, room), { hard: true, trim: true }).split("\n")
    return rows.map((row, i) => (i === 0 ? lead : rest) + row).join("\n")
  }

  const line = (markdown: string): string => {
    if (markdown.trim() === "") return ""
    if (rule.test(markdown)) return "\u001b[2m" + "─".repeat(Math.min(width(), 60)) + "\u001b[22m"
    if (heading.test(markdown)) return wrap(block(markdown))
    const item = listItem.exec(markdown)
    if (item !== null) {
      const [, indent, marker, text] = item
      const lead = `${indent}${/\d/.test(marker) ? marker : "•"} `
      return wrap(inline(text), lead)
    }
    const quoted = quote.exec(markdown)
    if (quoted !== null) {
      const bar = "\u001b[2m│\u001b[22m "
      return wrap(`\u001b[3m${inline(quoted[1])}\u001b[23m`, bar, bar)
    }
    return wrap(inline(markdown))
  }

  const code = (text: string, language: string): string => {
    const known = language !== "" && supportsLanguage(language)
    return CODE_INDENT + (known ? highlight(text, { language, ignoreIllegals: true }) : `\u001b[33m${text}\u001b[39m`)
  }

  const table = (rows: ReadonlyArray<string>): string => {
    const token = marked.lexer(rows.join("\n")).find((t): t is Tokens.Table => t.type === "table")
    // not a table after all (no delimiter row): each row is prose
    if (token === undefined) return rows.map(line).join("\n")
    const cell = (c: Tokens.TableCell) => inline(c.text)
    const head = token.header.map((c) => `\u001b[1m${cell(c)}\u001b[22m`)
    const body = token.rows.map((row) => row.map(cell))
    const column = (i: number) => [head[i], ...body.map((row) => row[i] ?? "")]
    const natural = head.map((_, i) => Math.max(...column(i).map((c) => stringWidth(c))) + 2)
    const longestWord = head.map((_, i) => Math.max(...column(i).flatMap((c) => c.split(/\s+/)).map((w) => stringWidth(w))) + 2)
    const colWidths = fitColumns(natural, longestWord, width() - (natural.length + 1))
    const drawn = new Table({
      head,
      colWidths,
      wordWrap: true,
      wrapOnWordBoundary: true,
      colAligns: token.align.map((a) => a ?? "left"),
      style: { head: [], border: ["gray"] },
      // no rule between body rows: rows wrapped over several lines stay told apart by the column borders
      chars: { mid: "", "left-mid": "", "mid-mid": "", "right-mid": "" }
    })
    for (const row of body) drawn.push(head.map((_, i) => row[i] ?? ""))
    return drawn.toString()
  }

  return { line, code, table }
}

/**
 * Column widths (padding included) that fit `room` columns. Each column first gets what its
 * longest word needs (or its natural width, if less), so that words are not cut; what is left
 * goes to the columns that want more, evenly, none past its natural width. When even the
 * longest words do not fit, every column shares the room evenly (cells are then cut).
 */
export const fitColumns = (natural: ReadonlyArray<number>, longestWord: ReadonlyArray<number>, room: number): Array<number> => {
  const total = natural.reduce((a, b) => a + b, 0)
  if (total <= room || room < natural.length * 3) return [...natural]
  const floor = natural.map((w, i) => Math.min(w, longestWord[i]))
  const start = floor.reduce((a, b) => a + b, 0) <= room ? floor : natural.map(() => 3)
  const widths = [...start]
  let left = room - widths.reduce((a, b) => a + b, 0)
  // water-filling: the columns furthest from their natural width get the spare columns first
  const wanting = natural.map((_, i) => i).filter((i) => natural[i] > widths[i]).sort((a, b) => natural[a] - widths[a] - (natural[b] - widths[b]))
  for (const [k, i] of wanting.entries()) {
    const share = Math.floor(left / (wanting.length - k))
    const given = Math.min(natural[i] - widths[i], share)
    widths[i] += given
    left -= given
  }
  return widths
}
