#!/bin/bash
# An agent that leaves its own /logs/artifacts/model.patch and a wrong commit (which the
# task's collect command turns into the collected model.patch), then fixes the working tree
# without committing: the verifier must grade the canonical patch of the stopped tree.
cd /app
mkdir -p /logs/artifacts
printf 'diff --git a/calc.py b/calc.py\ndeleted file mode 100644\n' > /logs/artifacts/model.patch
sed -i 's/raise NotImplementedError("clamp")/return value/' calc.py
git add -A
git -c user.name=agent -c user.email=agent@local commit -q --no-verify -m "wrong clamp"
sed -i 's/return value$/return max(low, min(value, high))/' calc.py
