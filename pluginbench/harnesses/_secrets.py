"""Finding and redacting a delivered credential in files (exports, saved evidence).

An agent that wants its credential out of the sandbox does not have to print it as is:
``base64``, ``hex`` or URL-encoding it defeats a literal search. :func:`secret_forms`
gives every form this module looks for, each as bytes:

* the literal value;
* its base64 and base64url encodings in each of the 3 alignments (the secret starting
  at byte 0, 1 or 2 of a 3-byte group, as it does inside a longer encoded blob), each
  cut to the characters the secret alone decides, so a copy embedded anywhere in a
  longer encoded text is found;
* its hex encoding, lower and upper case;
* its URL (percent) encoding, upper and lower case hex digits, ``quote`` and
  ``quote_plus`` style.

Forms shorter than :data:`MIN_FORM` characters are dropped (a short secret's base64 core
would match ordinary text). Known gaps: a copy split into pieces, reversed, or
encrypted is not found — nothing a scan can promise.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import quote, quote_plus

#: What a redacted form becomes.
REDACTED = b"<redacted credential>"

#: The shortest form searched for; shorter ones would match ordinary text.
MIN_FORM = 8


def _b64_cores(raw: bytes) -> list[bytes]:
    """The base64 characters that ``raw`` alone decides, for each of the 3 alignments."""
    out = []
    n = len(raw)
    for k in range(3):
        enc = base64.b64encode(b"\0" * k + raw)
        start = -(-8 * k // 6)  # first char whose 6 bits all come from raw
        end = (8 * (k + n)) // 6  # one past the last such char
        out.append(enc[start:end])
    return out


def secret_forms(secret: str) -> list[bytes]:
    """Every encoded form of ``secret`` that is searched for and redacted, longest first,
    without duplicates (see the module docstring)."""
    if not secret:
        return []
    raw = secret.encode()
    forms: list[bytes] = [raw]
    for core in _b64_cores(raw):
        forms += [core, core.translate(bytes.maketrans(b"+/", b"-_"))]
    forms += [raw.hex().encode(), raw.hex().upper().encode()]
    for q in (quote(secret, safe=""), quote_plus(secret, safe="")):
        forms += [q.encode(), _lower_escapes(q).encode()]
    seen: set[bytes] = set()
    unique = []
    for form in sorted(forms, key=len, reverse=True):
        if len(form) >= MIN_FORM and form not in seen:
            seen.add(form)
            unique.append(form)
    return unique


def _lower_escapes(text: str) -> str:
    """``%2F`` → ``%2f``: the same URL encoding with lower-case hex digits."""
    parts = text.split("%")
    return parts[0] + "".join("%" + p[:2].lower() + p[2:] for p in parts[1:])


def _files(root: Path) -> list[Path]:
    if root.is_symlink():
        return []
    if root.is_file():
        return [root]
    if not root.is_dir():
        return []
    return sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink())


def scan_for_secret(paths: Iterable[Path], secret: str) -> list[Path]:
    """Every file under ``paths`` whose bytes contain ``secret`` in any of its
    :func:`secret_forms` (symlinks not followed)."""
    return [hit for hit, _ in scan_for_secrets(paths, [secret])]


def scan_for_secrets(paths: Iterable[Path], secrets: Iterable[str]) -> list[tuple[Path, list[bytes]]]:
    """Every file under ``paths`` holding a form of any of ``secrets``, with the forms
    found in it (symlinks are never followed; unreadable files are skipped)."""
    forms = [f for s in secrets for f in secret_forms(s)]
    if not forms:
        return []
    hits = []
    for root in paths:
        for f in _files(Path(root)):
            try:
                data = f.read_bytes()
            except OSError:
                continue
            found = [form for form in forms if form in data]
            if found:
                hits.append((f, found))
    return hits


def redact_text(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every form of ``secrets`` (:func:`secret_forms`) replaced by
    :data:`REDACTED`, longer forms first (as :func:`redact_secrets` does in files)."""
    data = text.encode()
    for form in sorted({f for s in secrets for f in secret_forms(s)}, key=len, reverse=True):
        data = data.replace(form, REDACTED)
    return data.decode(errors="replace")


def redact_secrets(paths: Iterable[Path], secrets: Iterable[str]) -> list[Path]:
    """Replace every form of ``secrets`` in the files under ``paths`` with
    :data:`REDACTED`, in place; the files changed. Longer forms go first, so a literal
    inside a longer encoded run is never half-redacted."""
    changed = []
    for path, found in scan_for_secrets(paths, secrets):
        data = path.read_bytes()
        for form in sorted(found, key=len, reverse=True):
            data = data.replace(form, REDACTED)
        try:
            if not os.access(path, os.W_OK):
                os.chmod(path, path.stat().st_mode | 0o200)
            path.write_bytes(data)
        except OSError:
            path.unlink(missing_ok=True)  # a file that cannot be rewritten is not kept unscrubbed
        changed.append(path)
    return changed
