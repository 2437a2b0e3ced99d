#!/usr/bin/env bash
cd "${APP_DIR:-/app}" && printf 'function pick(o, k) {\n  return o[k];\n}\n\nfunction twice(x) {\n  return x * 2;\n}\n\nmodule.exports = { pick, twice };\n' > src/util.js
