// What the markdown bundle gets for \`cli-highlight\`, which marked-terminal imports for code blocks:
// mm draws fenced code itself, line by line, with highlight.js (src/Terminal/MarkdownEngine.ts),
// and never hands marked-terminal a code block. cli-highlight's round trip through an HTML
// parser (parse5) cost more than all the rest of the rendering.
exports.highlight = (code) => code
