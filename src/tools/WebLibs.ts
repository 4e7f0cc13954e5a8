// HTML turned into Markdown for `web_fetch` (node-html-markdown). Loaded through `import()` only
// when a page is converted; built apart as dist/mm-web.cjs, so that start-up never reads it.
import { NodeHtmlMarkdown } from "node-html-markdown"

/** What is never part of the text a page is read for. */
const DROPPED = ["script", "style", "nav", "header", "footer", "aside", "noscript", "svg", "template", "iframe", "form"]

let converter: NodeHtmlMarkdown | undefined

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

/** The page as Markdown: its main content, without scripts, styles, navigation, headers and footers. */
export const htmlToMarkdown = (html: string): string => {
  converter ??= new NodeHtmlMarkdown({ ignore: DROPPED, keepDataImages: false, maxConsecutiveNewlines: 2 })
  return converter.translate(mainContent(html)).trim()
}
