"""Codex discovery answers kept across runs in the store of :mod:`._discovery_store`.

A run keeps a passing Codex receipt for its own later attempts under the digest of
everything Codex's loading depends on (:meth:`~._codex.CodexHarness._cache_key`). The
store keeps what produced it across runs: ``<cache root>/discovery/codex/<key>.json``
holds the two no-model answers of the discovery (``codex debug prompt-input``'s JSON and
the ``app-server`` session's lines), the receipt judged from them and the run and attempt
that produced them.

A reading attempt trusts the answers alone (the store's other trust rules are
:mod:`._discovery_store`'s): they are judged again against this attempt's own expected
components (:func:`._codex_discovery.compare`, with the repository's instruction files
read in this sandbox), so answers that would fail today fail here, are not used and are
removed; a passing receipt is this attempt's, and Codex starts once (the coding launch)
instead of three times. The entry is copied verbatim into the attempt as
``agent/discovery.origin.json``, so the run's evidence does not depend on the cache root
or on the origin run still existing.

Unlike Claude Code's (:mod:`._claude_reuse`), there is no second process to agree with:
``codex exec`` answers no control requests. An entry is therefore written as soon as its
discovery passed, the same condition under which the run itself reuses the receipt for
its later attempts of that digest.
"""

from pathlib import Path
from typing import Any, NamedTuple

from ._discovery_store import DiscoveryStore, copy_origin, has_origin, store_note, write_noted


class Answers(NamedTuple):
    """What discovery's two Codex starts printed (decoded text)."""

    prompt_input: str
    app_server: str


class Stored(NamedTuple):
    """A store read: the entry and its answers on a usable hit (else both None), and the
    ``cache.store`` note so far."""

    entry: dict[str, Any] | None
    answers: Answers | None
    note: dict[str, Any]


def read_answers(store: DiscoveryStore, key: str) -> Stored:
    """The answers stored under ``key`` when the entry keeps the store's rules and has them."""
    read = store.read(key)
    if read.entry is None:
        return Stored(None, None, store_note(read.status, read.reason))
    entry = read.entry
    prompt, server = entry.get("prompt_input"), entry.get("app_server")
    if not (has_origin(entry) and isinstance(prompt, str) and isinstance(server, str)):
        return Stored(None, None, store_note("refused", "the entry lacks its origin or either discovery answer"))
    return Stored(entry, Answers(prompt, server), store_note("hit"))


def refused_answers(store: DiscoveryStore, key: str, receipt: dict[str, Any]) -> dict[str, Any]:
    """Drop the entry whose answers failed this attempt's judging; the ``cache.store`` note saying why."""
    store.drop(key)
    return store_note("refused", "the stored answers fail this attempt's checks: "
                      + "; ".join(str(m) for m in receipt.get("mismatches", []))[:500])


def reused_cache(key: str, entry: dict[str, Any], note: dict[str, Any], agent_dir: Path) -> dict[str, Any]:
    """The ``cache`` record of a receipt judged from a stored entry, after copying the
    entry into the attempt (``agent/discovery.origin.json``)."""
    copy_origin(entry, agent_dir)
    origin = entry["origin"]
    return {"key": key, "hit": True, "origin_attempt": origin["attempt"], "origin_run": origin["run"], "store": note}


def keep(store: DiscoveryStore, key: str, *, run: str, attempt: str, cli_version: str | None, answers: Answers,
         receipt: dict[str, Any]) -> None:
    """Store a passing discovery's answers; say so in ``receipt["cache"]["store"]``
    (``written``, and ``write_problem`` when it could not be)."""
    entry = {"origin": {"run": run, "attempt": attempt}, "cli_version": cli_version,
             "prompt_input": answers.prompt_input, "app_server": answers.app_server, "receipt": receipt}
    write_noted(store, key, entry, receipt)
