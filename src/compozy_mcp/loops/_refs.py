"""Loop references: one small, exact parser of the template subset Loops accept, and its
renderer.

The subset is upstream's (``reference/upstream-compozy.md`` §7): text with actions
``{{ pipeline }}``; a pipeline is commands joined by ``|`` (the left value becomes the last
argument of the next command); a command is a function name with arguments, or one operand.
Operands are fields (``.inputs.NAME``, ``.nodes.ID.output.PATH``, ``.nodes.ID.status``,
``.item``, ``.index``), string literals (``"..."`` with Go escapes, or raw ```...```), numbers,
``true``, ``false``, ``nil`` and parenthesised pipelines. Functions: ``json``, ``toJson``,
``join``, ``default``, ``shellQuote``, ``len``. ``{{-`` and ``-}}`` trim spaces as in Go.

Every error carries the offset it happened at; :func:`position` turns it into a line and a
column. A field that is missing at run time renders empty (spec, Loops).
"""

from __future__ import annotations

import functools
import json
import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from compozy_mcp import jsonutil

OPEN, CLOSE = "{{", "}}"
FUNCTIONS: Mapping[str, tuple[int, int]] = {
    # name: (fewest, most) arguments
    "json": (1, 1),
    "toJson": (1, 1),
    "join": (2, 2),
    "default": (2, 2),
    "shellQuote": (1, 1),
    "len": (1, 1),
}
ROOTS = ("inputs", "nodes", "item", "index")
NODE_FIELDS = ("output", "status")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_FIELD_STEP = re.compile(r"\.([A-Za-z0-9_-]+)")


class TemplateSyntaxError(Exception):
    """A template the parser refuses; ``offset`` is where in the text it went wrong."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset


# --- the parsed form --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Field:
    """``.a.b.c``: ``steps`` are ``("a", "b", "c")``; ``offset`` is where the dot is."""

    steps: tuple[str, ...]
    offset: int

    @property
    def text(self) -> str:
        return "." + ".".join(self.steps)


@dataclass(frozen=True, slots=True)
class Literal:
    value: Any
    offset: int


@dataclass(frozen=True, slots=True)
class Call:
    function: str
    args: tuple[Operand, ...]
    offset: int


@dataclass(frozen=True, slots=True)
class Pipeline:
    commands: tuple[Operand, ...]
    offset: int


Operand = Field | Literal | Call | Pipeline


@dataclass(frozen=True, slots=True)
class Action:
    pipeline: Pipeline
    offset: int


@dataclass(frozen=True, slots=True)
class Template:
    """Text and actions, in order. ``source`` is the text parsed."""

    source: str
    parts: tuple[str | Action, ...]

    @property
    def single_action(self) -> Action | None:
        """The action when the template is one action and nothing else (its value keeps its
        type: a list stays a list)."""
        if len(self.parts) == 1 and isinstance(self.parts[0], Action):
            return self.parts[0]
        return None

    def fields(self) -> list[Field]:
        """Every field the template reads, in order."""
        found: list[Field] = []
        for part in self.parts:
            if isinstance(part, Action):
                _collect(part.pipeline, found)
        return found


def _collect(operand: Operand, found: list[Field]) -> None:
    if isinstance(operand, Field):
        found.append(operand)
    elif isinstance(operand, Call):
        for arg in operand.args:
            _collect(arg, found)
    elif isinstance(operand, Pipeline):
        for command in operand.commands:
            _collect(command, found)


def has_action(text: str) -> bool:
    return OPEN in text


def position(text: str, offset: int) -> tuple[int, int]:
    """The 1-based line and column of ``offset`` in ``text``."""
    before = text[:offset]
    line = before.count("\n") + 1
    column = offset - (before.rfind("\n") + 1) + 1
    return line, column


# --- parsing ------------------------------------------------------------------------------------


def parse(text: str) -> Template:
    """Parse ``text``; raises :class:`TemplateSyntaxError`."""
    parts: list[str | Action] = []
    at = 0
    pending = ""
    while True:
        start = text.find(OPEN, at)
        if start < 0:
            pending += text[at:]
            break
        chunk = text[at:start]
        body_start = start + len(OPEN)
        trim_left = text.startswith("- ", body_start) or text.startswith("-\t", body_start)
        if trim_left:
            chunk = chunk.rstrip()
            body_start += 1
        pending += chunk
        if pending:
            parts.append(pending)
            pending = ""
        end = _action_end(text, body_start)
        body_end = end
        trim_right = end - 2 >= body_start and text[end - 2 : end] in (" -", "\t-")
        if trim_right:
            body_end -= 1
        parts.append(Action(_Parser(text, body_start, body_end).action(), start))
        at = end + len(CLOSE)
        if trim_right:
            while at < len(text) and text[at] in " \t\r\n":
                at += 1
    if pending:
        parts.append(pending)
    return Template(text, tuple(parts))


@functools.lru_cache(maxsize=4096)
def parse_cached(text: str) -> Template:
    """:func:`parse`, remembered: a Loop repeats its references (``{{ .inputs.x }}`` on every
    node), and a template is immutable."""
    return parse(text)


def _action_end(text: str, start: int) -> int:
    """Where the ``}}`` closing the action that starts at ``start`` is (skipping strings)."""
    at = start
    while at < len(text):
        char = text[at]
        if char in '"`':
            at = _string_end(text, at)
            continue
        if text.startswith(CLOSE, at):
            return at
        if text.startswith(OPEN, at):
            raise TemplateSyntaxError('unexpected "{{" inside an action', at)
        at += 1
    raise TemplateSyntaxError('unclosed action: "{{" without "}}"', start - len(OPEN))


def _string_end(text: str, start: int) -> int:
    quote = text[start]
    at = start + 1
    while at < len(text):
        if text[at] == "\\" and quote == '"':
            at += 2
            continue
        if text[at] == quote:
            return at + 1
        if text[at] == "\n" and quote == '"':
            break
        at += 1
    raise TemplateSyntaxError("unterminated string literal", start)


#: how deep parentheses may nest in one action: deeper is no template a person writes, and
#: the parser and the renderer recurse once per level
MAX_NESTING = 32


class _Parser:
    def __init__(self, text: str, start: int, end: int) -> None:
        self.text = text
        self.at = start
        self.end = end
        self.depth = 0

    def _skip(self) -> None:
        while self.at < self.end and self.text[self.at] in " \t\r\n":
            self.at += 1

    def _peek(self) -> str:
        self._skip()
        return self.text[self.at] if self.at < self.end else ""

    def action(self) -> Pipeline:
        start = self.at
        self._skip()
        if self.at >= self.end:
            raise TemplateSyntaxError("empty action", start)
        pipeline = self.pipeline()
        self._skip()
        if self.at < self.end:
            raise TemplateSyntaxError(f'unexpected "{self.text[self.at]}"', self.at)
        return pipeline

    def pipeline(self) -> Pipeline:
        self._skip()
        start = self.at
        commands = [self.command()]
        while self._peek() == "|":
            self.at += 1
            self._skip()
            bar = self.at
            command = self.command()
            if not isinstance(command, Call):
                raise TemplateSyntaxError("a pipe must lead to a function", bar)
            commands.append(command)
        return Pipeline(tuple(commands), start)

    def command(self) -> Operand:
        self._skip()
        start = self.at
        ident = _IDENT.match(self.text, self.at, self.end)
        if ident and ident.group() not in ("true", "false", "nil"):
            name = ident.group()
            if name not in FUNCTIONS:
                raise TemplateSyntaxError(
                    f'function "{name}" not defined (known: {", ".join(FUNCTIONS)})', start
                )
            self.at = ident.end()
            args: list[Operand] = []
            while self._peek() not in ("", "|", ")"):
                args.append(self.operand())
            return Call(name, tuple(args), start)
        operand = self.operand()
        if self._peek() not in ("", "|", ")"):
            raise TemplateSyntaxError(
                "only a function takes arguments; put the function first", self.at
            )
        return operand

    def operand(self) -> Operand:
        self._skip()
        start = self.at
        char = self.text[self.at] if self.at < self.end else ""
        if char == ".":
            return self.field()
        if char in '"`':
            end = _string_end(self.text, start)
            if end > self.end:
                raise TemplateSyntaxError("unterminated string literal", start)
            raw = self.text[start:end]
            self.at = end
            value = raw[1:-1] if char == "`" else _go_string(raw, start)
            return Literal(value, start)
        if char == "(":
            self.depth += 1
            if self.depth > MAX_NESTING:
                raise TemplateSyntaxError(f"parentheses nested more than {MAX_NESTING} deep", start)
            self.at += 1
            inner = self.pipeline()
            self.depth -= 1
            if self._peek() != ")":
                raise TemplateSyntaxError('unclosed "("', start)
            self.at += 1
            return inner
        number = _NUMBER.match(self.text, self.at, self.end)
        if number:
            self.at = number.end()
            literal = number.group()
            is_float = any(c in literal for c in ".eE")
            return Literal(float(literal) if is_float else int(literal), start)
        ident = _IDENT.match(self.text, self.at, self.end)
        if ident and ident.group() in ("true", "false", "nil"):
            self.at = ident.end()
            return Literal({"true": True, "false": False, "nil": None}[ident.group()], start)
        if ident:
            raise TemplateSyntaxError(
                f'function "{ident.group()}" used as an argument; wrap it in parentheses', start
            )
        raise TemplateSyntaxError(f'unexpected "{char}"' if char else "missing operand", start)

    def field(self) -> Field:
        start = self.at
        steps: list[str] = []
        while self.at < self.end and self.text[self.at] == ".":
            step = _FIELD_STEP.match(self.text, self.at, self.end)
            if step is None:
                raise TemplateSyntaxError("a field name must follow the dot", self.at)
            steps.append(step.group(1))
            self.at = step.end()
        return Field(tuple(steps), start)


def _go_string(raw: str, offset: int) -> str:
    try:
        value = json.loads(raw)
    except ValueError:
        raise TemplateSyntaxError("invalid escape in string literal", offset) from None
    assert isinstance(value, str)
    return value


# --- rendering ----------------------------------------------------------------------------------


class RenderError(Exception):
    """A function refused its value at run time (``join`` on a number, say)."""


Lookup = Callable[[Field], Any]


def _text(value: Any) -> str:
    """How a value prints inside text: strings as they are, nothing as empty, the rest JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return jsonutil.dumps_text(value)


def _empty(value: Any) -> bool:
    return value is None or value is False or value == 0 or value in ("", [], {})


def _call(name: str, args: Sequence[Any]) -> Any:
    if name in ("json", "toJson"):
        return jsonutil.dumps_text(args[0])
    if name == "join":
        separator, items = args
        if items is None:
            return ""
        if not isinstance(items, list):
            raise RenderError(f"join takes a list, got {type(items).__name__}")
        return str(separator).join(_text(item) for item in items)
    if name == "default":
        fallback, value = args
        return fallback if _empty(value) else value
    if name == "shellQuote":
        return shlex.quote(_text(args[0]))
    if name == "len":
        value = args[0]
        if value is None:
            return 0
        if not isinstance(value, (str, list, dict)):
            raise RenderError(f"len takes a string, list or object, got {type(value).__name__}")
        return len(value)
    raise RenderError(f'function "{name}" not defined')


def evaluate(operand: Operand, lookup: Lookup, piped: tuple[Any, ...] = ()) -> Any:
    if isinstance(operand, Field):
        return lookup(operand)
    if isinstance(operand, Literal):
        return operand.value
    if isinstance(operand, Pipeline):
        value: tuple[Any, ...] = ()
        for command in operand.commands:
            value = (evaluate(command, lookup, value),)
        return value[0]
    args = [evaluate(arg, lookup) for arg in operand.args] + list(piped)
    fewest, most = FUNCTIONS[operand.function]
    if not fewest <= len(args) <= most:
        raise RenderError(
            f"{operand.function} takes {fewest if fewest == most else f'{fewest} to {most}'} "
            f"argument{'' if most == 1 else 's'}, got {len(args)}"
        )
    return _call(operand.function, args)


class RenderTooLarge(RenderError):
    """The text a template renders grew past the budget it was given (``limit`` characters)."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the rendered text would pass {limit} characters")
        self.limit = limit


def render(template: Template, lookup: Lookup, limit: int | None = None) -> Any:
    """The template's value: a lone action keeps its value's type; otherwise text, of at most
    ``limit`` characters (:class:`RenderTooLarge` as soon as it would be longer)."""
    single = template.single_action
    if single is not None:
        return evaluate(single.pipeline, lookup)
    out: list[str] = []
    size = 0
    for part in template.parts:
        text = part if isinstance(part, str) else _text(evaluate(part.pipeline, lookup))
        size += len(text)
        if limit is not None and size > limit:
            raise RenderTooLarge(limit)
        out.append(text)
    return "".join(out)


def arity_problems(template: Template) -> list[tuple[str, int]]:
    """Functions called with a wrong number of arguments: ``(message, offset)`` each."""
    problems: list[tuple[str, int]] = []

    def walk(operand: Operand, piped: int) -> None:
        if isinstance(operand, Call):
            count = len(operand.args) + piped
            fewest, most = FUNCTIONS[operand.function]
            if not fewest <= count <= most:
                problems.append(
                    (
                        f"{operand.function} takes {fewest} argument"
                        f"{'' if fewest == 1 else 's'}, got {count}",
                        operand.offset,
                    )
                )
            for arg in operand.args:
                walk(arg, 0)
        elif isinstance(operand, Pipeline):
            for index, command in enumerate(operand.commands):
                walk(command, 1 if index else 0)

    for part in template.parts:
        if isinstance(part, Action):
            walk(part.pipeline, 0)
    return problems
