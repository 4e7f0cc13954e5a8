const cutMarker = (count: number): string => `\n… [${count} characters cut] …\n`

/**
 * Keeps the start of the conceptual text `head ++ (gap characters already dropped) ++ tail`
 * and its end, within `max` characters marker included, cutting at line ends where one is near.
 */
const keepEnds = (head: string, gap: number, tail: string, max: number): string => {
  const total = head.length + gap + tail.length
  if (gap === 0 && total <= max) return head + tail
  const keep = Math.max(0, max - cutMarker(total).length)
  const whole = gap === 0 ? head + tail : undefined
  const headWant = Math.ceil(keep / 2)
  const tailWant = keep - headWant
  let start = whole === undefined ? head.slice(0, headWant) : whole.slice(0, headWant)
  let end = tailWant === 0 ? "" : whole === undefined ? tail.slice(-tailWant) : whole.slice(whole.length - tailWant)
  const lastNewline = start.lastIndexOf("\n")
  if (lastNewline >= start.length * 0.75) start = start.slice(0, lastNewline)
  const firstNewline = end.indexOf("\n")
  if (firstNewline >= 0 && firstNewline <= end.length * 0.25) end = end.slice(firstNewline + 1)
  return start + cutMarker(total - start.length - end.length) + end
}

/**
 * Text of at most `max` characters: longer text keeps its head and its tail, the middle
 * replaced by a marker such as `\n… [12345 characters cut] …\n`.
 */
export const truncateOutput = (text: string, max: number): string => keepEnds(text, 0, "", max)

/** Keeps the first and the last `cap` characters of a stream of text, counting what falls between. */
export const makeCollector = (cap: number) => {
  let head = ""
  const tail: Array<string> = []
  let tailLength = 0
  let dropped = 0
  return {
    push: (text: string): void => {
      if (text === "") return
      if (head.length < cap) {
        const room = cap - head.length
        head += text.slice(0, room)
        text = text.slice(room)
        if (text === "") return
      }
      tail.push(text)
      tailLength += text.length
      while (tailLength > cap) {
        const excess = tailLength - cap
        const first = tail[0]
        if (first.length <= excess) {
          tail.shift()
          tailLength -= first.length
          dropped += first.length
        } else {
          tail[0] = first.slice(excess)
          tailLength -= excess
          dropped += excess
        }
      }
    },
    isEmpty: (): boolean => head === "",
    render: (max: number): string => keepEnds(head, dropped, tail.join(""), max)
  }
}

export type Collector = ReturnType<typeof makeCollector>
