"""Text typed by a person that lands in a log line (reminders, rulings, disputes, reasons,
notes) is shown, never obeyed: a newline cannot start a forged line in ``log.txt`` and a
control or direction-override character cannot rewrite what the screen shows."""

from __future__ import annotations

import re
import unicodedata

NEWLINE_SHOWN = "⏎"
# Line breaks of every kind (what str.splitlines splits on), a CR LF pair as one.
_BREAKS = re.compile(r"\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]")
# Bidirectional overrides and isolates: they reorder the text after them on screen.
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def _shown(char: str) -> str:
    if char == "\t":
        return "\\t"
    if unicodedata.category(char) == "Cc" or char in _BIDI:
        code = ord(char)
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
    return char


def one_line(text: str) -> str:
    """``text`` on one line: breaks shown as ``⏎``, tabs and other control characters as
    escapes (``\\t``, ``\\x1b``, ``\\u202e``). Idempotent, so a line already shown is kept."""
    text = _BREAKS.sub(NEWLINE_SHOWN, text)
    if text.isprintable():
        return text
    return "".join(_shown(c) for c in text)
