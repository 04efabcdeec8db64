"""Errors a user can act on: the CLI prints them as one line, never as a traceback."""

from __future__ import annotations


class UserError(Exception):
    """A problem with the user's input or environment, worded for the user.

    `where` is a `file:line` (or just a file) the message is about, when there is one.
    """

    def __init__(self, message: str, where: str | None = None) -> None:
        super().__init__(message)
        self.where = where

    def __str__(self) -> str:
        msg = super().__str__()
        return f"{self.where}: {msg}" if self.where else msg
