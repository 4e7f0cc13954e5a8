import { graphemesOf } from "./Graphemes"
import { clusterWidth, displayWidth } from "./Width"

/**
 * Lines of text fitted to a terminal's width at word boundaries, as mm prints them (help,
 * banners, red lines, listings): a word is never cut when it fits on a row of its own, a path
 * too long for a row breaks after a `/`, and only what has neither is cut. Colour codes take
 * no room. A row that continues a line is indented as the line is, or, for a line laid out in
 * two columns (`  /help   this list`), under its second column.
 */
export const wrapText = (text: string, width: number): string => {
  if (width < 10) return text
  return text
    .split("\n")
    .map((line) => (displayWidth(line) <= width ? line : wrapLine(line, width)))
    .join("\n")
}

const SGR = /\u001b\[[0-9;]*m/g

/** Where a row that continues `line` starts: under its second column, or at its indentation. */
const hangOf = (line: string, width: number): number => {
  const plain = line.replace(SGR, "")
  const lead = /^\s*/.exec(plain)![0].length
  const column = /^\s*\S+(?: \S+)?\s{2,}(?=\S)/.exec(plain)
  if (column !== null && displayWidth(column[0]) <= width / 2) return displayWidth(column[0])
  return lead <= width / 2 ? lead : 0
}

/** Colour codes and hyperlinks: each one unit, no room on the screen. */
const ESCAPE = /(\u001b\[[0-9;]*m|\u001b\]8;[^\u0007\u001b]*(?:\u0007|\u001b\\))/

/** Columns a unit takes: none for an escape sequence (a lone ESC is a cluster of its own). */
const unitWidth = (unit: string): number => (unit.length > 1 && unit.startsWith("\u001b") ? 0 : clusterWidth(unit))

/** What a word is cut between: grapheme clusters, and escape sequences kept whole. */
const unitsOf = (text: string): Array<string> =>
  text.includes("\u001b")
    ? text.split(ESCAPE).flatMap((part, i) => (i % 2 === 1 ? [part] : graphemesOf(part)))
    : graphemesOf(text)

/**
 * `word` cut into pieces of at most `room` columns: after a `/` where one is, else by
 * characters. Colour codes stay whole and take no room. The word is split into units once and
 * walked with an index, so a word of any length costs time linear in it.
 */
export const cutWord = (word: string, room: number): Array<string> => {
  if (displayWidth(word) <= room) return word === "" ? [] : [word]
  const pieces: Array<string> = []
  let units = unitsOf(word)
  let widths = units.map(unitWidth)
  // columns from each unit to the word's end
  let after = suffixSums(widths)
  let rest = word
  let i = 0
  // with colour codes in it the rest is measured whole, as printed: a code may sit inside a cluster
  const coloured = word.includes("\u001b")
  while (coloured ? displayWidth(rest) > room : after[i] > room) {
    let used = 0
    let end = 0
    let lastSlash = -1
    let lastSlashUnit = -1
    let k = i
    for (; k < units.length; k++) {
      if (used + widths[k] > room) break
      used += widths[k]
      end += units[k].length
      if (units[k] === "/") {
        lastSlash = end
        lastSlashUnit = k + 1
      }
    }
    if (lastSlash > 0 || end > 0) {
      const cut = lastSlash > 0 ? lastSlash : end
      pieces.push(rest.slice(0, cut))
      rest = rest.slice(cut)
      i = lastSlash > 0 ? lastSlashUnit : k
      continue
    }
    // not one unit fits: one code unit goes, and what is left is split again (rare: a row of one column)
    pieces.push(rest.slice(0, 1))
    rest = rest.slice(1)
    units = unitsOf(rest)
    widths = units.map(unitWidth)
    after = suffixSums(widths)
    i = 0
  }
  if (rest !== "") pieces.push(rest)
  return pieces
}

/** For each index, the sum of `values` from it to the end (and 0 past the end). */
const suffixSums = (values: ReadonlyArray<number>): Array<number> => {
  const sums = new Array<number>(values.length + 1).fill(0)
  for (let k = values.length - 1; k >= 0; k--) sums[k] = sums[k + 1] + values[k]
  return sums
}

const wrapLine = (line: string, width: number): string => {
  const hang = hangOf(line, width)
  const indent = " ".repeat(hang)
  const rows: Array<string> = []
  let row = ""
  let used = 0
  const tokens = line.split(/( +)/).filter((token) => token !== "")
  for (const [i, token] of tokens.entries()) {
    const w = displayWidth(token)
    if (token.startsWith(" ")) {
      // blanks at a row's end are dropped; inside a row they stay (columns)
      if (used + w < width && i < tokens.length - 1) {
        row += token
        used += w
      }
      continue
    }
    if (used + w <= width) {
      row += token
      used += w
      continue
    }
    // a word that fits on a row of its own goes to the next row; a longer one (a path) is cut from here
    const fitsAlone = w <= width - hang
    if (fitsAlone && (used > hang || (rows.length === 0 && used > 0))) {
      rows.push(row.trimEnd())
      row = indent
      used = hang
    }
    if (!fitsAlone && width - used < 10) {
      rows.push(row.trimEnd())
      row = indent
      used = hang
    }
    for (const piece of cutWord(token, width - used)) {
      if (used + displayWidth(piece) > width) {
        rows.push(row.trimEnd())
        row = indent
        used = hang
      }
      row += piece
      used += displayWidth(piece)
    }
  }
  rows.push(row.trimEnd())
  return rows.join("\n")
}

/** `line` cut to `width` visible columns (colour codes kept, not counted). */
export const clipToWidth = (line: string, width: number): string => {
  let shown = 0
  let out = ""
  for (const part of line.split(/(\u001b\[[0-9;]*m)/)) {
    if (part.startsWith("\u001b[")) {
      out += part
      continue
    }
    for (const char of part) {
      if (shown >= width) return `${out}\u001b[0m`
      out += char
      shown++
    }
  }
  return out
}
