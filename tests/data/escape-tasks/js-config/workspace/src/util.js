function pick(o, k) {
  return o[k];
}

module.exports = { pick };
