"""The simulated reviewer: deterministic findings from the patch text, for fast pipeline
tests. It makes no model call, and every report labels its findings as simulated."""

from __future__ import annotations

from ..events import Finding


def simulated_findings(patch: str) -> list[Finding]:
    """An empty patch: one high correctness finding. Otherwise one low ``tests`` finding
    when no test file changed, and one medium ``readability`` finding per added TODO."""
    files = [line[6:].strip() for line in patch.splitlines() if line.startswith("+++ b/")]
    if not files:
        return [Finding(severity="high", category="correctness", title="the submission changes nothing")]
    out: list[Finding] = []
    if not any("test" in f.lower() for f in files):
        out.append(Finding(severity="low", category="tests", title="no test covers the change", file=files[0]))
    current = files[0]
    for line in patch.splitlines():
        if line.startswith("+++ b/"):
            current = line[6:].strip()
        elif line.startswith("+") and not line.startswith("+++") and "TODO" in line:
            out.append(Finding(severity="medium", category="readability", title="a TODO is left in the change",
                               file=current))
    return out
