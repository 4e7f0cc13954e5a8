/**
 * A small terminal, enough to read what mm leaves on the screen: it plays mm's output (text,
 * carriage return, line feed, cursor moves, erasing; colours and modes ignored) onto rows of
 * one column per character, wrapping at the width as xterm does. `resize` re-wraps the rows as
 * most terminals do today (tmux, VTE, kitty, iTerm2): a line that had wrapped is joined again,
 * every line wrapped at the new width, the cursor kept on the character it was on; or, told
 * `rewraps: false`, as xterm does: each row cut at the new width. The scrollback is kept:
 * `lines` is everything, top to bottom.
 */
export class Screen {
  /** Each row's characters, and whether the row ran on into the next (a soft wrap). */
  private rows: Array<{ cells: Array<string>; wraps: boolean }> = [{ cells: [], wraps: false }]
  private x = 0
  private y = 0
  private pendingWrap = false

  constructor(
    private width: number,
    private readonly height: number,
    private readonly options: { readonly rewraps?: boolean } = {}
  ) {}

  /** Plays `output` (what the pseudo-terminal gave, escape sequences included). */
  play(output: string): void {
    const parts = output.split(/(\u001b\[[0-9;?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b.)/)
    for (const [i, part] of parts.entries()) {
      if (i % 2 === 1) this.escape(part)
      else for (const char of part) this.char(char)
    }
  }

  /** The terminal is now `width` columns wide: its lines re-wrapped, as a reflowing terminal does. */
  resize(width: number): void {
    if (this.options.rewraps === false) {
      for (const row of this.rows) row.cells.length = Math.min(row.cells.length, width)
      this.width = width
      this.x = Math.min(this.x, width - 1)
      this.pendingWrap = false
      return
    }
    const lines: Array<Array<string>> = []
    let cursor = { line: 0, offset: 0 }
    let current: Array<string> = []
    for (const [index, row] of this.rows.entries()) {
      if (index === this.y) cursor = { line: lines.length, offset: current.length + this.x }
      current.push(...row.cells)
      if (!row.wraps) {
        lines.push(current)
        current = []
      }
    }
    if (current.length > 0) lines.push(current)
    this.width = width
    this.rows = []
    for (const [index, line] of lines.entries()) {
      const cells = index === cursor.line ? line : trimEnd(line)
      if (index === cursor.line) {
        this.y = this.rows.length + Math.floor(cursor.offset / width)
        this.x = cursor.offset % width
      }
      for (let at = 0; at === 0 || at < cells.length; at += width) {
        this.rows.push({ cells: cells.slice(at, at + width), wraps: at + width < cells.length })
      }
    }
    while (this.rows.length <= this.y) this.rows.push({ cells: [], wraps: false })
    this.pendingWrap = false
  }

  /** Every row, scrollback first, without trailing blanks. */
  get lines(): Array<string> {
    return this.rows.map((row) => trimEnd(row.cells).join(""))
  }

  /** The rows the terminal shows now. */
  get shown(): Array<string> {
    return this.lines.slice(-this.height)
  }

  private get top(): number {
    return Math.max(0, this.rows.length - this.height)
  }

  private char(char: string): void {
    if (char === "\r") return void ((this.x = 0), (this.pendingWrap = false))
    if (char === "\n") return this.down(1)
    if (char === "\b") return void ((this.x = Math.max(0, this.x - 1)), (this.pendingWrap = false))
    if (char < " ") return
    if (this.pendingWrap) {
      this.rows[this.y].wraps = true
      this.down(1)
      this.x = 0
    }
    const cells = this.rows[this.y].cells
    while (cells.length < this.x) cells.push(" ")
    cells[this.x] = char
    if (this.x === this.width - 1) this.pendingWrap = true
    else this.x++
  }

  private down(n: number): void {
    this.pendingWrap = false
    this.y += n
    while (this.rows.length <= this.y) this.rows.push({ cells: [], wraps: false })
  }

  /** Rows from `from` down emptied (they stay: the screen keeps its height). */
  private blank(from: number): void {
    for (let i = from; i < this.rows.length; i++) this.rows[i] = { cells: [], wraps: false }
  }

  private escape(sequence: string): void {
    const csi = /^\u001b\[([0-9;?]*)([@-~])$/.exec(sequence)
    if (csi === null) return
    const [, params, final] = csi
    const n = Math.max(1, Number(params.split(";")[0]) || 1)
    this.pendingWrap = false
    const row = this.rows[this.y]
    switch (final) {
      case "A":
        this.y = Math.max(this.top, this.y - n)
        return
      case "B":
        return this.down(n)
      case "C":
        this.x = Math.min(this.width - 1, this.x + n)
        return
      case "D":
        this.x = Math.max(0, this.x - n)
        return
      case "K":
        if (params === "" || params === "0") row.cells.length = Math.min(row.cells.length, this.x)
        row.wraps = false
        return
      case "J":
        if (params === "2") return this.blank(this.top)
        row.cells.length = Math.min(row.cells.length, this.x)
        row.wraps = false
        return this.blank(this.y + 1)
      case "H": {
        const [r, c] = params.split(";").map((p) => Number(p) || 1)
        this.y = this.top + (r ?? 1) - 1
        this.x = (c ?? 1) - 1
        while (this.rows.length <= this.y) this.rows.push({ cells: [], wraps: false })
      }
    }
  }
}

const trimEnd = (cells: Array<string>): Array<string> => {
  let end = cells.length
  while (end > 0 && cells[end - 1] === " ") end--
  return cells.slice(0, end)
}
