/** Where characters as people see them start and end in a string: grapheme clusters (Intl.Segmenter, made on first use). */

let graphemes: Intl.Segmenter | undefined
const segments = (text: string) =>
  (graphemes ??= new Intl.Segmenter(undefined, { granularity: "grapheme" })).segment(text)

/**
 * How much text the segmenter is given at once. On Node 20 its cost grows with the square of
 * the string it is given (a 100 KB line takes tens of seconds), so a long text is segmented a
 * window at a time.
 */
export const WINDOW = 256

/** Printable ASCII only: each character is a cluster of its own. */
const ASCII_ONLY = /^[\x20-\x7e]*$/

/**
 * The grapheme clusters of `text`, in order, in time linear in its length: a long text is
 * segmented in windows of about `WINDOW` characters. A window's last cluster may be cut by the
 * window's end, so it is not kept: the next window starts where it starts. Cluster rules look
 * back only within a cluster and ahead one character, so a window that starts at a true
 * boundary and ends (never inside a character) past the last cluster kept finds the same
 * clusters as the whole text does.
 */
export const graphemesOf = (text: string): Array<string> => {
  if (ASCII_ONLY.test(text)) return text.split("")
  if (text.length <= WINDOW) return Array.from(segments(text), (s) => s.segment)
  const clusters: Array<string> = []
  let start = 0
  let size = WINDOW
  while (start < text.length) {
    let end = start + size
    // never between the halves of a surrogate pair: the cluster before needs the whole character after it
    const code = text.charCodeAt(end - 1)
    if (code >= 0xd800 && code <= 0xdbff) end++
    const found = Array.from(segments(text.slice(start, end)), (s) => s.segment)
    if (end >= text.length) {
      clusters.push(...found)
      break
    }
    if (found.length < 2) {
      // one cluster longer than the window (a letter under thousands of marks): a wider one
      size *= 2
      continue
    }
    const last = found.pop()!
    for (const cluster of found) clusters.push(cluster)
    start = end - last.length
    size = WINDOW
  }
  return clusters
}

/** Where the grapheme cluster before `at` starts: an emoji, a CJK character or a combining sequence is one. */
export const previousBoundary = (text: string, at: number): number =>
  at <= 0 ? 0 : segments(text).containing(at - 1)!.index

/** Where the grapheme cluster at `at` ends. */
export const nextBoundary = (text: string, at: number): number => {
  if (at >= text.length) return text.length
  const cluster = segments(text).containing(at)!
  return cluster.index + cluster.segment.length
}
