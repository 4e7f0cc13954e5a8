// What the markdown bundle gets for `node-emoji`: mm runs marked-terminal with `emoji: false`, so
// its table of shortcodes (200 KB, a third of the bundle) is never used; a shortcode stays as written.
exports.get = () => undefined
