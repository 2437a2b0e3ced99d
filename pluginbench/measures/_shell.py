"""Which shell commands are verification commands (method "verification transcript count v2").

Pure: a command line goes in, its segments and their verification status come out.

* :func:`lex` splits a shell command into words and operators the way a POSIX shell would
  for this purpose: quotes, backslashes, comments, ``$(...)``/backticks kept inside their
  word, here-document bodies skipped as data, redirections and their targets dropped.
  Unterminated quotes, here-documents or substitutions make the command *malformed*.
* :func:`verification_tool` recognizes one simple command: leading assignments, ``env``
  with options, ``time``, ``timeout``, the runners (``npx``, ``npm exec``, ``pnpm exec``,
  ``yarn exec``, ``yarn <tool>``, ``uv run``, ``poetry run``, ``python[3] -m``), then a
  tool matched by its file name (``node_modules/.bin/jest`` is ``jest``).
* :func:`analyze` gives every verification segment of a command and whether its status is
  masked: any separator after it that is a pipe, ``;``, ``&``, a newline followed by
  another command, or ``|| true``. ``set -o pipefail`` (also ``set -euo pipefail``)
  before a segment removes only the pipe mask while it is on.
"""

import re
from typing import NamedTuple

#: Tools matched by file name alone. Each is a test runner, type checker or linter.
DIRECT_TOOLS = frozenset({
    "pytest", "py.test", "mypy", "pyright", "tox", "nox", "flake8", "pylint",
    "jest", "vitest", "mocha", "ava", "tsc", "eslint", "playwright",
})
#: Tools that verify only with one of these subcommands (first non-option argument).
SUBCOMMAND_TOOLS: dict[str, frozenset[str]] = {
    "ruff": frozenset({"check"}),
    "go": frozenset({"test", "vet"}),
    "cargo": frozenset({"test", "check", "clippy", "nextest"}),
    "npm": frozenset({"test", "t"}),
    "pnpm": frozenset({"test", "t"}),
    "yarn": frozenset({"test"}),
}
#: ``python -m <module>`` forms that count (``ruff`` only as ``ruff check``).
PYTHON_MODULES = frozenset({"pytest", "mypy", "unittest"})

_PYTHON = re.compile(r"^python(\d+(\.\d+)*)?$")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")
_RESERVED_PREFIX = frozenset({"!", "if", "then", "elif", "else", "do", "while", "until", "{", "(", "exec", "command"})
_CLOSING = frozenset({"fi", "done", "esac", "}", ")", "then", "do", "else", ";;"})
_OPERATORS = ("&&", "||", ";;", "|&", "|", ";", "&", "(", ")")
_REDIRECT = re.compile(r"(\d*|&)(>>|>\||>&|>|<<<|<<-|<<|<&|<>|<)")
# options of the prefixes that take a separate argument
_ENV_ARG = frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"})
_TIMEOUT_ARG = frozenset({"-s", "--signal", "-k", "--kill-after"})
_NPX_ARG = frozenset({"-p", "--package", "-c", "--call", "--prefix", "-w", "--workspace"})
_UV_ARG = frozenset({"--with", "--with-requirements", "--with-editable", "-p", "--python", "--directory",
                     "--project", "--package", "--extra", "--group", "--env-file", "--index", "--index-url",
                     "--extra-index-url", "--find-links", "-f", "--cache-dir", "--config-file", "--only-group",
                     "--no-group"})
_POETRY_ARG = frozenset({"-C", "--directory", "-P", "--project"})
_PYTHON_ARG = frozenset({"-W", "-X", "-c"})


class Word(NamedTuple):
    text: str  # with quotes removed
    quoted: bool  # any part was quoted: never an operator or a reserved word


class Segment(NamedTuple):
    words: tuple[str, ...]
    separator: str  # the operator after it: "&&", "||", "|", ";", "&", "\n", "(", ")" or "" at the end
    line: int  # 0-based line of the command text where it starts


class Lexed(NamedTuple):
    segments: tuple[Segment, ...]
    malformed: str | None  # why the command does not parse, else None
    words: tuple[str, ...]  # every word, for the malformed-command rule


class VerificationSegment(NamedTuple):
    position: int  # in the command's segments (not `index`, which would shadow tuple.index)
    tool: str  # e.g. "pytest", "go test", "python -m pytest"
    masked: bool


class Analysis(NamedTuple):
    verifications: tuple[VerificationSegment, ...]
    #: the command does not parse and some word could start a verification command
    ambiguous: str | None

    @property
    def is_verification(self) -> bool:
        return bool(self.verifications)

    @property
    def masked(self) -> bool:
        """The command's exit status does not say whether its last verification passed."""
        return any(v.masked for v in self.verifications)


def basename(word: str) -> str:
    return word.rstrip("/").rsplit("/", 1)[-1]


# ------------------------------------------------------------------ lexing


class _Lexer:
    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0
        self.line = 0
        self.tokens: list[tuple[str, object, int]] = []  # ("word", Word, line) | ("op", str, line)
        self.pending_heredocs: list[tuple[str, bool]] = []  # (delimiter, strip tabs)
        self.malformed: str | None = None

    def run(self) -> None:
        s = self.s
        while self.i < len(s) and self.malformed is None:
            c = s[self.i]
            if c == "\n":
                self._op("\n")
                self.i += 1
                self._read_heredocs()
                self.line += 1
            elif c in " \t\r":
                self.i += 1
            elif c == "#":
                while self.i < len(s) and s[self.i] != "\n":
                    self.i += 1
            elif c == "\\" and s.startswith("\\\n", self.i):
                self.i += 2
                self.line += 1
            else:
                op = None if s.startswith("&>", self.i) else next(
                    (o for o in _OPERATORS if s.startswith(o, self.i)), None)
                if op is not None:
                    self._op(op)
                    self.i += len(op)
                    continue
                m = _REDIRECT.match(s, self.i)
                if m and (m.group(1) == "" or m.group(1) == "&" or self._at_word_start()):
                    self.i = m.end()
                    kind = m.group(2)
                    if kind == ">&" or kind == "<&":
                        self._word()  # the file descriptor or target
                        continue
                    while self.i < len(s) and s[self.i] in " \t":
                        self.i += 1
                    target = self._word()
                    if kind in ("<<", "<<-") and target is not None:
                        self.pending_heredocs.append((target.text, kind == "<<-"))
                    continue
                before = self.i
                w = self._word()
                if w is not None:
                    self.tokens.append(("word", w, self.line))
                elif self.i == before and self.malformed is None:
                    self.i += 1  # a lone character no rule above takes: data
        if self.malformed is None and self.pending_heredocs:
            self.malformed = f"here-document '{self.pending_heredocs[0][0]}' has no end"

    def _at_word_start(self) -> bool:
        return self.i == 0 or self.s[self.i - 1] in " \t\n;&|()"

    def _op(self, op: str) -> None:
        self.tokens.append(("op", op, self.line))

    def _read_heredocs(self) -> None:
        s = self.s
        while self.pending_heredocs:
            delim, strip = self.pending_heredocs.pop(0)
            while True:
                if self.i >= len(s):
                    self.malformed = f"here-document '{delim}' has no end"
                    return
                end = s.find("\n", self.i)
                line = s[self.i:] if end < 0 else s[self.i:end]
                self.i = len(s) if end < 0 else end + 1
                self.line += 1
                if (line.lstrip("\t") if strip else line) == delim:
                    break

    def _word(self) -> Word | None:
        s = self.s
        out: list[str] = []
        quoted = False
        start = self.i
        while self.i < len(s):
            c = s[self.i]
            if c in " \t\n;&|()<>":
                break
            if c == "'":
                end = s.find("'", self.i + 1)
                if end < 0:
                    self.malformed = "unterminated single quote"
                    return None
                out.append(s[self.i + 1:end])
                self.line += s.count("\n", self.i, end)
                self.i = end + 1
                quoted = True
            elif c == '"':
                j = self.i + 1
                buf: list[str] = []
                while j < len(s) and s[j] != '"':
                    if s[j] == "\\" and j + 1 < len(s):
                        buf.append(s[j + 1] if s[j + 1] in '"\\$`\n' else s[j:j + 2])
                        j += 2
                        continue
                    if s.startswith("$(", j):
                        k = self._balanced(j + 1)
                        if k is None:
                            return None
                        buf.append(s[j:k + 1])
                        j = k + 1
                        continue
                    buf.append(s[j])
                    j += 1
                if j >= len(s):
                    self.malformed = "unterminated double quote"
                    return None
                out.append("".join(buf))
                self.line += s.count("\n", self.i, j)
                self.i = j + 1
                quoted = True
            elif c == "\\":
                if self.i + 1 < len(s):
                    out.append(s[self.i + 1])
                self.i += 2
                quoted = True
            elif s.startswith("$(", self.i) or c == "`":
                close: int | None = self._balanced(self.i + 1) if c == "$" else s.find("`", self.i + 1)
                if close is None or close < 0:
                    self.malformed = self.malformed or "unterminated command substitution"
                    return None
                out.append(s[self.i:close + 1])
                self.i = close + 1
            else:
                out.append(c)
                self.i += 1
        if self.i == start:
            return None
        return Word("".join(out), quoted)

    def _balanced(self, open_index: int) -> int | None:
        """The index of the ``)`` closing the ``(`` at ``open_index`` (quotes respected)."""
        s = self.s
        depth = 0
        j = open_index
        while j < len(s):
            c = s[j]
            if c == "\\":
                j += 2
                continue
            if c == "'":
                k = s.find("'", j + 1)
                if k < 0:
                    break
                j = k + 1
                continue
            if c == '"':
                k = j + 1
                while k < len(s) and s[k] != '"':
                    k += 2 if s[k] == "\\" else 1
                if k >= len(s):
                    break
                j = k + 1
                continue
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
                if depth == 0:
                    return j
            j += 1
        self.malformed = "unterminated command substitution"
        return None


def lex(text: str) -> Lexed:
    """Split ``text`` into simple-command segments (see the module docstring)."""
    lexer = _Lexer(text)
    lexer.run()
    segments: list[Segment] = []
    words: list[str] = []
    all_words: list[str] = []
    start_line = 0
    depth = 0
    for kind, value, line in lexer.tokens:
        if kind == "word":
            assert isinstance(value, Word)
            if not words:
                start_line = line
            words.append(value.text)
            all_words.append(value.text)
            continue
        assert isinstance(value, str)
        depth += value == "("
        depth -= value == ")"
        if words:
            segments.append(Segment(tuple(words), value, start_line))
        words = []
    if words:
        segments.append(Segment(tuple(words), "", start_line))
    malformed = lexer.malformed
    if malformed is None and depth != 0:
        malformed = "unbalanced parentheses"
    if malformed is not None:
        # every whitespace-separated piece, for the "could any word start a command" rule
        all_words = [w for w in re.split(r"[\s;&|()<>'\"`]+", text) if w]
    return Lexed(tuple(segments), malformed, tuple(all_words))


# ------------------------------------------------------------------ recognition


def _skip_options(words: tuple[str, ...], i: int, with_arg: frozenset[str]) -> int:
    """Skip ``-x``/``--long``/``--long=value`` options (and the argument of those in
    ``with_arg``); stop after ``--`` or at the first non-option word."""
    while i < len(words):
        w = words[i]
        if w == "--":
            return i + 1
        if not w.startswith("-") or w == "-":
            return i
        i += 2 if (w in with_arg and "=" not in w) else 1
    return i


def verification_tool(words: tuple[str, ...]) -> str | None:
    """The verification tool a simple command runs, e.g. ``"pytest"``, or None."""
    i = 0
    n = len(words)
    while i < n and words[i] in _RESERVED_PREFIX:
        i += 1
    for _ in range(16):  # prefixes can nest: env timeout uv run ...
        while i < n and _ASSIGNMENT.match(words[i]):
            i += 1
        if i >= n:
            return None
        w = basename(words[i])
        nxt = words[i + 1] if i + 1 < n else None
        if w == "env":
            i = _skip_options(words, i + 1, _ENV_ARG)
        elif w == "time":
            i = _skip_options(words, i + 1, frozenset())
        elif w == "timeout":
            i = _skip_options(words, i + 1, _TIMEOUT_ARG) + 1  # then the duration
        elif w == "npx":
            i = _skip_options(words, i + 1, _NPX_ARG)
        elif w in ("npm", "pnpm", "yarn") and nxt == "exec":
            i = _skip_options(words, i + 2, _NPX_ARG)
        elif w == "yarn" and nxt is not None and _tool_at(words, i + 1) is not None:
            i += 1
        elif w == "uv" and nxt == "run":
            i = _skip_options(words, i + 2, _UV_ARG)
        elif w == "poetry" and nxt == "run":
            i = _skip_options(words, i + 2, _POETRY_ARG)
        else:
            return _tool_at(words, i)
    return None


def _tool_at(words: tuple[str, ...], i: int) -> str | None:
    if i >= len(words):
        return None
    w = basename(words[i])
    if w in DIRECT_TOOLS:
        return w
    if _PYTHON.match(w):
        j = i + 1
        while j < len(words) and words[j].startswith("-") and words[j] != "-m":
            if words[j] == "-c":
                return None  # an inline script
            j += 2 if words[j] in _PYTHON_ARG else 1
        if j + 1 < len(words) and words[j] == "-m":
            module = words[j + 1]
            if module in PYTHON_MODULES:
                return f"python -m {module}"
            if module == "ruff" and j + 2 < len(words) and words[j + 2] == "check":
                return "python -m ruff check"
        return None
    subs = SUBCOMMAND_TOOLS.get(w)
    if subs is not None:
        j = _skip_options(words, i + 1, frozenset())
        if j < len(words) and words[j] in subs:
            return f"{w} {words[j]}"
        if w in ("npm", "pnpm", "yarn") and j + 1 < len(words) and words[j] == "run" \
                and words[j + 1].split(":")[0] == "test":
            return f"{w} run test"
    return None


def _is_pipefail_set(words: tuple[str, ...]) -> bool | None:
    """True when ``words`` turn pipefail on, False when off, None when unrelated."""
    if not words or words[0] != "set":
        return None
    state = None
    args = list(words[1:])
    for k, a in enumerate(args):
        nxt = args[k + 1] if k + 1 < len(args) else None
        if a.startswith("-") and not a.startswith("--") and a.endswith("o") and nxt == "pipefail":
            state = True
        elif a.startswith("+") and a.endswith("o") and nxt == "pipefail":
            state = False
    return state


def _runs_a_command(seg: Segment) -> bool:
    """A later line runs another command unless it is only closing shell syntax."""
    return bool(seg.words) and not all(w in _CLOSING for w in seg.words)


def analyze(text: str) -> Analysis:
    """The verification segments of one shell command and whether each is masked."""
    lexed = lex(text)
    if lexed.malformed is not None:
        words = lexed.words
        hit = next((verification_tool(words[k:]) for k in range(len(words))
                    if verification_tool(words[k:]) is not None), None)
        reason = (f"the command does not parse ({lexed.malformed}) and a word could start "
                  f"'{hit}'") if hit else None
        return Analysis((), reason)
    segs = lexed.segments
    found: list[VerificationSegment] = []
    pipefail = False
    pipefail_at: list[bool] = []
    for seg in segs:
        state = _is_pipefail_set(seg.words)
        if state is not None:
            pipefail = state
        pipefail_at.append(pipefail)
    for k, seg in enumerate(segs):
        tool = verification_tool(seg.words) if seg.words else None
        if tool is None:
            continue
        found.append(VerificationSegment(k, tool, _masked_after(segs, k, pipefail_at)))
    return Analysis(tuple(found), None)


def _masked_after(segs: tuple[Segment, ...], k: int, pipefail_at: list[bool]) -> bool:
    for j in range(k, len(segs)):
        sep = segs[j].separator
        later = segs[j + 1:]
        if sep in ("|", "|&"):
            if not pipefail_at[k]:
                return True
        elif sep == "&":
            return True  # in the background: the shell's status is not the tool's
        elif sep == ";" or sep == "\n":
            if any(_runs_a_command(s) for s in later):
                return True
        elif sep == "||":
            nxt = segs[j + 1].words if j + 1 < len(segs) else ()
            if nxt[:1] in (("true",), (":",)):
                return True
    return False
