"""Git task-folder links (pure): what ``tasks.urls`` accepts and how a pin is written.

Two spellings, both ``<repository>/tree/<ref>/<path to the task folder>``:

* GitHub: ``https://github.com/<owner>/<repo>/tree/<ref>/<path>``;
* any git remote whose path ends in ``.git``: ``<git-url>.git/tree/<ref>/<path>``, with
  ``https://``, ``git://`` or ``file://`` (``file://`` and ``git://`` on loopback are what
  the tests use).

``<ref>`` is a full 40-hex commit, a tag, or a single-component branch name: a ref with a
slash could not be told apart from the path. The task id is the last path component.
"""

import re
from urllib.parse import urlsplit

import msgspec

from ..errors import BadTaskUrl

COMMIT = re.compile(r"^[0-9a-f]{40}$")
_REF = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")
_SEGMENT = re.compile(r"^[A-Za-z0-9._+-]+$")
_SCHEMES = ("https", "git", "file")


class TaskUrl(msgspec.Struct, frozen=True, kw_only=True):
    """One parsed link: the repository to fetch, the ref as written, the folder inside."""

    url: str
    repo: str
    ref: str
    path: str
    github: bool

    @property
    def task_id(self) -> str:
        return self.path.rsplit("/", 1)[-1]

    def pinned(self, commit: str) -> str:
        """The same link with its ref replaced by ``commit``."""
        base = self.repo.removesuffix(".git") if self.github else self.repo
        return f"{base}/tree/{commit}/{self.path}"


def parse_task_url(url: str) -> TaskUrl:
    """Split a task-folder link into repository, ref and path, or raise :class:`BadTaskUrl`."""
    if not isinstance(url, str) or not url.strip() or url != url.strip():
        raise BadTaskUrl("a task url must be a non-empty string without surrounding spaces")
    parts = urlsplit(url)
    if parts.scheme not in _SCHEMES:
        raise BadTaskUrl(f"unsupported scheme {parts.scheme or '(none)'!r}: use https://, git:// or file://")
    if parts.query or parts.fragment or parts.username or parts.password:
        raise BadTaskUrl("a task url carries no query, fragment or credentials")
    github = parts.scheme == "https" and parts.netloc.lower() == "github.com"
    if github:
        segs = parts.path.strip("/").split("/")
        if len(segs) < 5 or segs[2] != "tree":
            raise BadTaskUrl("a GitHub task url is https://github.com/<owner>/<repo>/tree/<ref>/<path>")
        repo = f"https://github.com/{segs[0]}/{segs[1].removesuffix('.git')}.git"
        ref, rest = segs[3], segs[4:]
    else:
        marker = ".git/tree/"
        at = parts.path.find(marker)
        if at < 0:
            raise BadTaskUrl("a git task url is <repository>.git/tree/<ref>/<path> (the repository path ends in .git)")
        repo = f"{parts.scheme}://{parts.netloc}{parts.path[: at + len('.git')]}"
        segs = parts.path[at + len(marker):].split("/")
        if len(segs) < 2:
            raise BadTaskUrl("the url names no task folder after the ref: <repository>.git/tree/<ref>/<path>")
        ref, rest = segs[0], segs[1:]
    if not _REF.match(ref) or ref.endswith(".lock") or ".." in ref:
        raise BadTaskUrl(f"{ref!r} is not a commit, tag or single-component branch name")
    if not rest or any(s in ("", ".", "..") or not _SEGMENT.match(s) for s in rest):
        raise BadTaskUrl("the task folder path must be plain names separated by / (no '.', '..' or empty parts)")
    return TaskUrl(url=url, repo=repo, ref=ref, path="/".join(rest), github=github)


def tasks_block(urls: list[str]) -> str:
    """The ``tasks:`` YAML block for pinned links, as ``tasks pick`` prints it."""
    lines = ["tasks:", "  urls:"]
    lines += [f"    - {u}" for u in urls]
    return "\n".join(lines) + "\n"
