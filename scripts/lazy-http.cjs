// Stands in for `node:http` in @effect/platform-node's HTTP client (see lazy-agent.cjs).
"use strict"

module.exports = require("./lazy-agent.cjs")(() => require("node:http"))
