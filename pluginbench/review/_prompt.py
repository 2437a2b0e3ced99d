"""The one review prompt (the same for every arm; it names no arm and no result)."""

from __future__ import annotations

#: Marks a review request (the probe's scenarios match on it).
MARKER = "PLUGINBENCH-REVIEW"


def review_prompt(packet: str) -> str:
    return (
        f"{MARKER}: you are an independent code reviewer.\n\n"
        f"The read-only review packet is the folder {packet}:\n"
        f"- {packet}/instruction.md: the task the author was given\n"
        f"- {packet}/submission.patch: the author's change, a unified diff over the starting source\n"
        f"- {packet}/source/: the starting source (before the change)\n"
        f"- {packet}/criteria.md: the review criteria; follow them exactly\n"
        f"- {packet}/response-schema.json: the JSON Schema of your answer\n\n"
        "Read them; do not modify any file and do not run the project's code. Then end with one "
        'message that is only a JSON object valid against the schema, for example '
        '{"findings": [{"severity": "medium", "category": "tests", "title": "...", "file": "a.py", '
        '"line": 3, "detail": "..."}]}. Use {"findings": []} when there is nothing to report.\n'
    )
