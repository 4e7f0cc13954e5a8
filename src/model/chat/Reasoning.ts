const OPEN = "<think>"
const CLOSE = "</think>"

interface Split {
  readonly text: string
  readonly reasoning: string
}

const none: Split = { text: "", reasoning: "" }

/** How many characters at the end of `text` could be the start of `tag`. */
const partialTagAtEnd = (text: string, tag: string): number => {
  for (let n = Math.min(tag.length - 1, text.length); n > 0; n--) {
    if (tag.startsWith(text.slice(text.length - n))) return n
  }
  return 0
}

/**
 * Separates a `<think>…</think>` block at the very start of an answer (leading blanks
 * allowed) from the answer, as the content arrives in pieces. A `<think>` anywhere else is
 * answer text. What is held back (a tag cut between two deltas) comes out at `end()`.
 */
export class ThinkSplitter {
  private state: "start" | "thinking" | "after" | "answer" = "start"
  private held = ""
  /**
   * The blanks before anything else, kept apart from `held` while the answer may still open
   * with `<think>`: trimming all that is held on each delta is quadratic in a long run of them.
   */
  private blanks = ""

  push(chunk: string): Split {
    if (this.state === "answer") return { text: chunk, reasoning: "" }
    if (this.state === "after") {
      // the blank lines between the think block and the answer are neither
      const text = chunk.replace(/^\s+/, "")
      if (text !== "") this.state = "answer"
      return { text, reasoning: "" }
    }
    if (this.state === "start") {
      const rest = this.held === "" ? chunk.trimStart() : chunk
      this.blanks += chunk.slice(0, chunk.length - rest.length)
      this.held += rest
      if (this.held.startsWith(OPEN)) {
        this.state = "thinking"
        this.held = this.held.slice(OPEN.length)
        this.blanks = ""
      } else if (OPEN.startsWith(this.held)) {
        return none
      } else {
        this.state = "answer"
        const text = this.blanks + this.held
        this.held = ""
        this.blanks = ""
        return { text, reasoning: "" }
      }
    } else {
      this.held += chunk
    }
    const close = this.held.indexOf(CLOSE)
    if (close >= 0) {
      const reasoning = this.held.slice(0, close)
      const text = this.held.slice(close + CLOSE.length).replace(/^\s+/, "")
      this.state = text === "" ? "after" : "answer"
      this.held = ""
      return { text, reasoning }
    }
    const keep = partialTagAtEnd(this.held, CLOSE)
    const reasoning = this.held.slice(0, this.held.length - keep)
    this.held = this.held.slice(this.held.length - keep)
    return { text: "", reasoning }
  }

  /** The content is complete: what was held back, as text (no think block) or reasoning (one never closed). */
  end(): Split {
    const held = this.blanks + this.held
    this.held = ""
    this.blanks = ""
    if (this.state === "thinking") return { text: "", reasoning: held }
    return { text: held, reasoning: "" }
  }
}
