"""A stand-in for the complexity child (tests only): ``big.js`` ran out of memory, the others get
one function ``f`` each. It answers in the child's output format, so the parent's mapping is tested."""

import json
import sys

files = json.loads(sys.stdin.buffer.read())
answers = {}
for key, (_, path, _) in files.items():
    answers[key] = ({"functions": [], "error": f"ran out of memory on {path}", "out_of_memory": True}
                    if path == "big.js"
                    else {"functions": [[["f"], 1, 0, True]], "error": None})
sys.stdout.write(json.dumps(answers))
