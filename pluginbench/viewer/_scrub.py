"""Scrubbing text for a shareable bundle: pure functions, text in, text and counts out.

Three kinds of thing are removed from every text file of a bundle:

* **delivered credentials**: every encoded form of each credential the harnesses deliver
  (:func:`pluginbench.harnesses._secrets.secret_forms`: literal, base64 in 3 alignments,
  hex, URL encodings), replaced by ``<redacted credential>``;
* **token-like strings** (:data:`TOKEN_PATTERNS`): Anthropic and OpenAI keys, GitHub,
  Slack, AWS and Google keys, JWTs, ``Bearer`` values and private-key blocks, replaced by
  ``<redacted token>``;
* **host paths and the user name**: each given host folder (the run directory, HOME, the
  working folder, the temp folder...) longest first, replaced by its placeholder
  (``<run>``, ``<home>``, ``<host-path>``), then ``/home/<name>`` and ``/Users/<name>``
  prefixes, then the user name itself as a whole word when it is at least 4 characters and
  not a common word (:data:`COMMON_NAMES`).

:func:`findings` is the check run after scrubbing: anything it still finds refuses the
bundle.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from ..harnesses import secret_forms

CREDENTIAL = "<redacted credential>"
TOKEN = "<redacted token>"
USER = "<user>"

#: (name, pattern) of strings that look like credentials whoever delivered them.
TOKEN_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("anthropic key", re.compile(r"sk-ant-[A-Za-z0-9_\-]{16,}")),
    ("openai key", re.compile(r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}")),
    ("github token", re.compile(r"(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})")),
    ("slack token", re.compile(r"xox[abprs]-[A-Za-z0-9\-]{10,}")),
    ("aws access key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("google api key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}")),
    ("bearer value", re.compile(r"(?<=[Bb][Ee][Aa][Rr][Ee][Rr] )[A-Za-z0-9._~+/\-]{20,}=*")),
    ("private key", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----")),
)

#: Literal text each pattern's match holds (or follows), by pattern: a pattern runs only
#: on a text that holds one of its literals, so clean text costs a few substring searches.
_HINTS: tuple[tuple[str, ...], ...] = (("sk-ant-",), ("sk-",), ("gh", "github_pat_"), ("xox",), ("AKIA", "ASIA"),
                                        ("AIza",), ("eyJ",), ("earer ", "EARER "), ("PRIVATE KEY-----",))


def _present(text: str) -> list[int]:
    return [i for i, hints in enumerate(_HINTS) if any(h in text for h in hints)]

#: User names too common to replace as a bare word (their paths are still replaced).
COMMON_NAMES = frozenset({"root", "user", "users", "agent", "admin", "runner", "ubuntu", "debian", "work",
                          "test", "tests", "home", "app", "build", "guest", "node", "python", "docker"})


def credential_forms(secrets: Iterable[str]) -> list[str]:
    """Every form of every credential, longest first (longer first: a literal inside a
    longer encoded run is never half-redacted)."""
    forms = {f.decode("utf-8", "replace") for s in secrets if s for f in secret_forms(s)}
    return sorted(forms, key=lambda f: (-len(f), f))


#: A run of this many characters of a credential's form (literal or encoded) found anywhere is
#: a piece of it: a token cut by a line wrap (``base64`` wraps at 76 columns, a terminal
#: folds long lines) leaves pieces that no whole form matches.
FRAGMENT = 16
_STRIDE = 6  # windows sampled every _STRIDE characters: any piece of FRAGMENT + _STRIDE - 1 or more is found
_RUN = re.compile(r"[A-Za-z0-9_\-+/=%.~]{" + str(FRAGMENT + _STRIDE - 1) + ",}")


def fragment_grams(forms: Iterable[str]) -> frozenset[str]:
    """Every FRAGMENT-character piece of every form (see :data:`FRAGMENT`)."""
    return frozenset(f[i:i + FRAGMENT] for f in forms for i in range(len(f) - FRAGMENT + 1))


def _holds_piece(run: str, grams: frozenset[str]) -> bool:
    return any(run[i:i + FRAGMENT] in grams for i in range(0, len(run) - FRAGMENT + 1, _STRIDE))


def scrub_text(text: str, forms: Sequence[str], paths: Sequence[tuple[str, str]], user: str | None,
               grams: frozenset[str] = frozenset()) -> tuple[str, dict[str, int]]:
    """``text`` scrubbed, and how many of each kind were replaced (only kinds that were);
    ``grams`` (:func:`fragment_grams` of the real credentials' forms) also redact pieces."""
    counts: dict[str, int] = {}

    def bump(kind: str, n: int) -> None:
        if n:
            counts[kind] = counts.get(kind, 0) + n

    for form in forms:
        n = text.count(form)
        if n:
            text = text.replace(form, CREDENTIAL)
            bump("delivered credential", n)
    if grams:
        pieces = 0

        def piece(m: re.Match[str]) -> str:
            nonlocal pieces
            if _holds_piece(m.group(0), grams):
                pieces += 1
                return CREDENTIAL
            return m.group(0)

        text = _RUN.sub(piece, text)
        bump("piece of a delivered credential", pieces)
    for i in _present(text):
        name, pattern = TOKEN_PATTERNS[i]
        text, n = pattern.subn(TOKEN, text)
        bump(name, n)
    for path, placeholder in sorted(paths, key=lambda p: -len(p[0])):
        if len(path) > 1:
            n = text.count(path)
            if n:
                text = text.replace(path, placeholder)
                bump("host path", n)
    if user:
        text, n = re.subn(rf"(/home/|/Users/){re.escape(user)}\b", rf"\g<1>{USER}", text)
        bump("user name", n)
        if len(user) >= 4 and user.lower() not in COMMON_NAMES:
            text, n = re.subn(rf"(?<![A-Za-z0-9_]){re.escape(user)}(?![A-Za-z0-9_])", USER, text)
            bump("user name", n)
    return text, counts


def findings(text: str, forms: Sequence[str], paths: Sequence[str], user: str | None,
             grams: frozenset[str] = frozenset()) -> list[str]:
    """What a scrubbed text still holds: kinds of credential, token or host path (empty when clean)."""
    out = []
    if any(f in text for f in forms):
        out.append("delivered credential")
    if grams and any(_holds_piece(m.group(0), grams) for m in _RUN.finditer(text)):
        out.append("piece of a delivered credential")
    out += [TOKEN_PATTERNS[i][0] for i in _present(text) if TOKEN_PATTERNS[i][1].search(text)]
    out += [f"host path {p}" for p in paths if len(p) > 1 and p in text]
    if user and re.search(rf"(/home/|/Users/){re.escape(user)}\b", text):
        out.append("user name")
    return out
