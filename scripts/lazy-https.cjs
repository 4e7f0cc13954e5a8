// Stands in for `node:https` in @effect/platform-node's HTTP client (see lazy-agent.cjs): local
// model servers speak plain http, so https and tls are mostly never loaded.
"use strict"

module.exports = require("./lazy-agent.cjs")(() => require("node:https"))
