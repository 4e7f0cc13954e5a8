import hljs from "highlight.js"
import { Marked, type Tokens } from "marked"
import { markedTerminal } from "marked-terminal"
import stringWidth from "string-width"
import wrapAnsi from "wrap-ansi"

import { graphemesOf, WINDOW } from "../text/Graphemes"
import { cutWord } from "../text/Wrap"
import { fitColumns } from "./TableFit"

/**
 * The heavy half of answer rendering: marked with marked-terminal for the text, highlight.js
 * for code, wrap-ansi and string-width for the terminal's width. Built as a file of its own and
 * loaded only when the first answer is rendered on a terminal. Markdown.ts decides what is a
 * line, a code line or a table; this file only draws them.
 */
export interface MarkdownEngine {
  /** One line of prose (a paragraph's line, a heading, a list item, a quote, a rule), wrapped at word boundaries. */
  readonly line: (markdown: string) => string
  /** Lines inside a fenced block, highlighted together when their language is known; one output line each. */
  readonly code: (lines: ReadonlyArray<string>, language: string) => string
  /** The rows of a table, aligned and fitted to the terminal's width. */
  readonly table: (rows: ReadonlyArray<string>) => string
}

/** Inline syntax anywhere in a line: emphasis, code, links, html, escapes, entities. */
const inlineSyntax = /[*_`[\]<>\\~]|https?:\/\/|&\w+;/
const heading = /^\s{0,3}(#{1,6})\s+/
const listItem = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/
const quote = /^\s{0,3}>\s?(.*)$/
const rule = /^\s{0,3}([-*_])(?:\s*\1){2,}\s*$/

const CODE_INDENT = "  "

/**
 * A line longer than this is drawn as plain text, its inline syntax not parsed: marked's
 * inline lexer takes time that grows faster than a line's length on some of them (`**a` a
 * hundred thousand times takes seconds) and recurses once per nested marker (a run of
 * thousands of `*` overflows the stack). No line of real prose comes near it.
 */
const INLINE_MAX = 4096

/**
 * A fenced block with a line longer than this, or longer than `CODE_BLOCK_MAX` in all, is shown
 * plain: highlight.js takes time that grows with the square of a line's length in many
 * languages, and the language is whatever the model names.
 */
const CODE_LINE_MAX = 2048
const CODE_BLOCK_MAX = 65_536

/*
 * Colours are mm's own, not those of the libraries' colour packages: those decide for
 * themselves whether the terminal takes colours, and mm has decided already (a terminal,
 * NO_COLOR not set) before it loads this file.
 */
/** For a light background (`theme: light`), set when the engine is made: darker shades, each ≥ 4.5:1 on white. */
let light = false
const sgr = (open: number, close: number, onLight: string = String(open)) => (text: string) =>
  `\u001b[${light ? onLight : open}m${text}\u001b[${close}m`
const bold = sgr(1, 22)
const dim = sgr(2, 22)
const italic = sgr(3, 23)
const underline = sgr(4, 24)
const red = sgr(31, 39, "38;5;124")
const green = sgr(32, 39, "38;5;28")
const yellow = sgr(33, 39, "38;5;130")
const blue = sgr(34, 39, "38;5;19")
const magenta = sgr(35, 39, "38;5;90")
const cyan = sgr(36, 39, "38;5;23")
const gray = sgr(90, 39, "38;5;241")
const same = (text: string) => text

/** marked-terminal's styles. */
const textTheme = {
  code: yellow,
  blockquote: (text: string) => gray(italic(text)),
  html: gray,
  heading: (text: string) => green(bold(text)),
  firstHeading: (text: string) => magenta(bold(underline(text))),
  hr: same,
  listitem: same,
  table: same,
  paragraph: same,
  strong: bold,
  em: italic,
  codespan: yellow,
  del: (text: string) => gray(sgr(9, 29)(text)),
  link: blue,
  href: (text: string) => blue(underline(text)),
  text: same
}

/** Code colours, by highlight.js scope (the first word of its class, without `hljs-`). */
const codeTheme: Readonly<Record<string, (text: string) => string>> = {
  keyword: blue,
  built_in: cyan,
  type: cyan,
  literal: blue,
  number: green,
  regexp: red,
  string: red,
  title: yellow,
  comment: gray,
  doctag: gray,
  meta: gray,
  tag: gray,
  name: blue,
  attr: cyan,
  attribute: cyan,
  symbol: magenta,
  bullet: magenta,
  addition: green,
  deletion: red,
  variable: cyan,
  params: same
}

const entities: Readonly<Record<string, string>> = {
  "&amp;": "&",
  "&lt;": "<",
  "&gt;": ">",
  "&quot;": "\"",
  "&#x27;": "'"
}

/** highlight.js's output (text and nested `<span class="hljs-…">`) as terminal colours: the innermost coloured scope wins. */
export const spansToAnsi = (html: string): string => {
  const scopes: Array<((text: string) => string) | undefined> = []
  let out = ""
  for (const part of html.split(/(<span class="[^"]*">|<\/span>)/)) {
    if (part === "") continue
    if (part.startsWith("<span")) {
      const scope = /class="hljs-([\w-]+)/.exec(part)?.[1]
      scopes.push(scope === undefined ? undefined : codeTheme[scope])
      continue
    }
    if (part === "</span>") {
      scopes.pop()
      continue
    }
    const text = part.replace(/&(?:amp|lt|gt|quot|#x27);/g, (entity) => entities[entity])
    let style: ((text: string) => string) | undefined
    for (let i = scopes.length - 1; i >= 0 && style === undefined; i--) style = scopes[i]
    // each line closes what it opens: lines are drawn apart, indented, and a colour must not run into the next
    out += style === undefined ? text : text.split("\n").map((piece) => (piece === "" ? "" : style(piece))).join("\n")
  }
  return out
}

/** Colour codes and hyperlinks, which take no room on the screen. */
const invisible = /\u001b\[[0-9;]*m|\u001b\]8;[^\u0007\u001b]*(?:\u0007|\u001b\\)/g
/**
 * Characters one column wide each, whatever the terminal: printable ASCII, Latin letters with
 * their accents precomposed, general punctuation (dashes, quotes, bullet, ellipsis; not the
 * invisible ones), arrows and box drawing.
 */
const narrowOnly = /^[\x20-\x7e\u00a0-\u00ac\u00ae-\u02ff\u2010-\u2027\u2030-\u205e\u2190-\u21ff\u2500-\u259f]*$/

/**
 * Columns taken on the screen; text of narrow characters only is counted without string-width's
 * grapheme pass. A long text is measured in pieces cut between grapheme clusters: string-width
 * sums its clusters' widths, but its segmenter takes time growing with the square of the text.
 */
export const widthOf = (text: string): number => {
  const plain = text.includes("\u001b") ? text.replace(invisible, "") : text
  if (narrowOnly.test(plain)) return plain.length
  // an escape left (not mm's colours) is stripped by string-width itself, whole
  if (plain.length <= WINDOW || plain.includes("\u001b") || plain.includes("\u009b")) return stringWidth(plain)
  let width = 0
  let piece = ""
  for (const cluster of graphemesOf(plain)) {
    piece += cluster
    if (piece.length >= WINDOW) {
      width += stringWidth(piece)
      piece = ""
    }
  }
  return width + stringWidth(piece)
}

/**
 * `text` with each path wider than `room` cut into pieces that fit, after a `/` where one is
 * (Wrap.ts's rule for mm's own lines), a space between them: wrap-ansi then breaks the path
 * there rather than at the row's last column. Each piece is as wide as a row allows, so two
 * never share a row and the space falls at a row's end, where it is trimmed. A word longer
 * than `WINDOW` characters is cut so too (by characters): wrap-ansi measures a word whole, in
 * time growing with the square of its length.
 */
const breakPaths = (text: string, room: number): string =>
  text.includes("/") || text.length > WINDOW
    ? text.split(" ").map((word) =>
      (word.includes("/") || word.length > WINDOW) && widthOf(word) > room ? cutWord(word, room).join(" ") : word
    )
      .join(" ")
    : text

/** `text` wrapped at word boundaries to `room` columns, colours carried over each break; a path breaks after a `/`. */
const wrapRows = (text: string, room: number): string =>
  wrapAnsi(breakPaths(text, room), room, { hard: true, trim: true })

export const makeMarkdownEngine = (columns: () => number, theme: "dark" | "light" = "dark"): MarkdownEngine => {
  light = theme === "light"
  const marked = new Marked(
    markedTerminal({ ...textTheme, reflowText: false, tab: 2, showSectionPrefix: false, emoji: false, width: 10_000 })
  )
  const width = () => Math.max(20, (columns() || 80) - 1)

  // one lexer and one parser for every line: marked's parseInline builds both on each call
  let lexer = new marked.Lexer(marked.defaults)
  let parser = new marked.Parser(marked.defaults)
  /** `text` with its inline syntax drawn; a line too long for that, or one marked fails on, as it came. */
  const inline = (text: string): string => {
    if (text.length > INLINE_MAX || !inlineSyntax.test(text)) return text
    try {
      return parser.parseInline(lexer.inlineTokens(text))
    } catch {
      // a failure can leave the lexer mid-link: the next line gets fresh ones
      lexer = new marked.Lexer(marked.defaults)
      parser = new marked.Parser(marked.defaults)
      return text
    }
  }

  /** `text` wrapped at word boundaries, after `lead` on its first row and `rest` (as wide) on the others. */
  const wrap = (text: string, lead = "", rest = " ".repeat(widthOf(lead))): string => {
    const room = width() - widthOf(lead)
    if (widthOf(text) <= room) return lead + text
    const rows = wrapRows(text, Math.max(10, room)).split("\n")
    return rows.map((row, i) => (i === 0 ? lead : rest) + row).join("\n")
  }

  const line = (markdown: string): string => {
    if (markdown.trim() === "") return ""
    if (rule.test(markdown)) return dim("─".repeat(Math.min(width(), 60)))
    const title = heading.exec(markdown)
    if (title !== null) {
      return wrap(
        (title[1].length === 1 ? textTheme.firstHeading : textTheme.heading)(
          inline(markdown.slice(title[0].length).replace(/\s#+\s*$/, ""))
        )
      )
    }
    const item = listItem.exec(markdown)
    if (item !== null) {
      const [, indent, marker, text] = item
      return wrap(inline(text), `${indent}${/\d/.test(marker) ? marker : "•"} `)
    }
    const quoted = quote.exec(markdown)
    if (quoted !== null) {
      const bar = `${dim("│")} `
      return wrap(italic(inline(quoted[1])), bar, bar)
    }
    return wrap(inline(markdown))
  }

  const code = (lines: ReadonlyArray<string>, language: string): string => {
    const text = lines.join("\n")
    const known = language !== "" && hljs.getLanguage(language) !== undefined
    const small = text.length <= CODE_BLOCK_MAX && lines.every((line) => line.length <= CODE_LINE_MAX)
    const drawn = known && small ? highlighted(text, language) : undefined
    return (drawn ?? lines.map(yellow)).map((line) => CODE_INDENT + line).join("\n")
  }

  const table = (rows: ReadonlyArray<string>): string => {
    try {
      return tableOf(rows)
    } catch {
      // marked failed on a cell (thousands of nested markers): each row is drawn as a line
      return rows.map(line).join("\n")
    }
  }

  const tableOf = (rows: ReadonlyArray<string>): string => {
    const token = marked.lexer(rows.join("\n")).find((t): t is Tokens.Table => t.type === "table")
    // not a table after all (no delimiter row): each row is prose
    if (token === undefined) return rows.map(line).join("\n")
    // the cells come lexed already
    const cell = (c: Tokens.TableCell) => parser.parseInline(c.tokens)
    const head = token.header.map((c) => bold(cell(c)))
    const body = token.rows.map((row) => head.map((_, i) => (row[i] === undefined ? "" : cell(row[i]))))
    const column = (i: number) => [head[i], ...body.map((row) => row[i])]
    const natural = head.map((_, i) => Math.max(...column(i).map(widthOf)) + 2)
    const longestWord = head.map((_, i) => Math.max(...column(i).flatMap((c) => c.split(/\s+/)).map(widthOf)) + 2)
    const widths = fitColumns(natural, longestWord, width() - (natural.length + 1))
    return drawTable([head, ...body], widths, token.align)
  }

  return { line, code, table }
}

/** `text` highlighted as `language`, a line of output per line of text; `undefined` if highlight.js fails. */
const highlighted = (text: string, language: string): Array<string> | undefined => {
  try {
    return spansToAnsi(hljs.highlight(text, { language, ignoreIllegals: true }).value).split("\n")
  } catch {
    return undefined
  }
}

/**
 * A table in box-drawing characters: the header row, a rule, the body rows. Each cell is
 * padded to its column's width (padding included in `widths`), wrapped at word boundaries
 * when it is wider, and aligned as the delimiter row says.
 */
const drawTable = (
  rows: ReadonlyArray<ReadonlyArray<string>>,
  widths: ReadonlyArray<number>,
  align: ReadonlyArray<"left" | "right" | "center" | null>
): string => {
  const bar = dim("│")
  const border = (left: string, middle: string, right: string) =>
    dim(left + widths.map((w) => "─".repeat(w)).join(middle) + right)
  const fit = (text: string, room: number): Array<string> =>
    widthOf(text) <= room ? [text] : wrapRows(text, Math.max(1, room)).split("\n")
  const pad = (text: string, room: number, how: "left" | "right" | "center" | null) => {
    const space = Math.max(0, room - widthOf(text))
    if (how === "right") return " ".repeat(space) + text
    if (how === "center") return " ".repeat(Math.floor(space / 2)) + text + " ".repeat(space - Math.floor(space / 2))
    return text + " ".repeat(space)
  }
  const drawRow = (cells: ReadonlyArray<string>): Array<string> => {
    const parts = cells.map((text, i) => fit(text, widths[i] - 2))
    const height = Math.max(...parts.map((p) => p.length))
    return Array.from(
      { length: height },
      (_, k) => bar + parts.map((p, i) => ` ${pad(p[k] ?? "", widths[i] - 2, align[i] ?? null)} `).join(bar) + bar
    )
  }
  const [head, ...body] = rows
  return [
    border("┌", "┬", "┐"),
    ...drawRow(head),
    border("├", "┼", "┤"),
    ...body.flatMap(drawRow),
    border("└", "┴", "┘")
  ].join("\n")
}
