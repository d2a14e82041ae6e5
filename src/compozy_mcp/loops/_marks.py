"""Where each value of a Loop document is: the positions a lint item points at, and the
error of a document that cannot be read."""

from __future__ import annotations

from dataclasses import dataclass

#: a path into the document: keys and list indexes
Path = tuple[str | int, ...]


@dataclass(frozen=True, slots=True)
class Mark:
    """Where a value starts (1-based), and how its text maps to the source when it is a
    string on one line (``quoted``: the text starts one column after the mark)."""

    line: int
    column: int
    quoted: bool = False
    #: a block scalar (``|`` or ``>``): its text starts on the line after the mark
    block: bool = False

    def at(self, offset_line: int, offset_column: int) -> tuple[int, int]:
        """The source position of a position in the value's text (both 1-based). Exact on
        the first line of a plain or quoted string; on later lines the indentation of the
        source is not known, so the column is the one within the text."""
        if self.block:
            return self.line + offset_line, offset_column
        if offset_line == 1:
            return self.line, self.column + offset_column - 1 + (1 if self.quoted else 0)
        return self.line + offset_line - 1, offset_column


class SourceError(Exception):
    def __init__(self, message: str, line: int | None, column: int | None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column
