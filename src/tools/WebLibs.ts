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
  for (const tag of ["main", "article"]) {
    const open = new RegExp(`<${tag}(?:\\s[^>]*)?>`, "i").exec(html)
    if (open === null) continue
    const close = html.toLowerCase().lastIndexOf(`</${tag}>`)
    if (close > open.index) return html.slice(open.index + open[0].length, close)
  }
  return html
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
