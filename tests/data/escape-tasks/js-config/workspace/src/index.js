const { pick } = require("./util");

console.log(pick({ a: 1 }, "a"));
