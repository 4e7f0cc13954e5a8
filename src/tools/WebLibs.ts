// What `web_fetch` needs once it runs: the request (WebRequest.ts, with ipaddr.js under it) and
// HTML turned into Markdown (node-html-markdown). Loaded through `import()` at the first fetch;
// built apart as dist/mm-web.cjs, so that start-up never reads it.
import { NodeHtmlMarkdown, type TranslatorConfigFactory } from "node-html-markdown"

export { fetchPage } from "./WebRequest"

/** What is never part of the text a page is read for. */
const DROPPED = ["script", "style", "nav", "header", "footer", "aside", "noscript", "svg", "template", "iframe", "form"]

let converter: NodeHtmlMarkdown | undefined
/** The URL of the page being converted, which its relative links and images are read against. */
let pageUrl: string | undefined

const absolute = (link: string): string => {
  try {
    return pageUrl === undefined ? link : new URL(link, pageUrl).href
  } catch {
    return link
  }
}

/** A converter whose links and images name absolute URLs, which the model can fetch next. */
const makeConverter = (): NodeHtmlMarkdown => {
  const made = new NodeHtmlMarkdown({ ignore: DROPPED, keepDataImages: false, maxConsecutiveNewlines: 2 })
  for (const [tag, attribute] of [["a", "href"], ["img", "src"]] as const) {
    const own = made.translators.get(tag)
    const resolving: TranslatorConfigFactory = (ctx) => {
      const link = ctx.node.getAttribute(attribute)
      if (typeof link === "string" && link !== "" && !link.startsWith("#")) {
        ctx.node.setAttribute(attribute, absolute(link))
      }
      return typeof own === "function" ? own(ctx) : own
    }
    made.translators.set(tag, resolving)
  }
  return made
}

/**
 * The page's own content: what lies between its first `<main>` and the last `</main>`, else
 * its first `<article>` and last `</article>`; the whole page when it has neither.
 */
export const mainContent = (html: string): string => {
  const lower = html.toLowerCase()
  for (const tag of ["main", "article"]) {
    const start = openingEnd(lower, tag)
    if (start === undefined) continue
    const close = lower.lastIndexOf(`</${tag}>`)
    if (close >= start) return html.slice(start, close)
  }
  return html
}

/**
 * Where the first `<tag>` or `<tag …>` of a lower-cased page ends (just past its `>`). Plain
 * searches, in time linear in the page: a regular expression scanning for the tag's end from
 * every `<main ` of a hostile page took time quadratic in its length.
 */
const openingEnd = (lower: string, tag: string): number | undefined => {
  for (let at = lower.indexOf(`<${tag}`); at !== -1; at = lower.indexOf(`<${tag}`, at + 1)) {
    const next = lower.charAt(at + tag.length + 1)
    if (next === ">") return at + tag.length + 2
    if (/\s/.test(next)) {
      const end = lower.indexOf(">", at)
      // no `>` after this one: none after any later one either
      return end === -1 ? undefined : end + 1
    }
  }
  return undefined
}

/**
 * The page as Markdown: its main content, without scripts, styles, navigation, headers and
 * footers; links and images made absolute against `url`, the page's own.
 */
export const htmlToMarkdown = (html: string, url: string): string => {
  converter ??= makeConverter()
  pageUrl = url
  try {
    return converter.translate(mainContent(html)).trim()
  } finally {
    pageUrl = undefined
  }
}
