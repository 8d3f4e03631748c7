"""How a value the user typed is shown in a one-line error message."""

from __future__ import annotations

__all__ = ["shown_integer"]


def shown_integer(value: int) -> str:
    """``value`` as typed, or its first digits and length when it is too long to read."""
    if abs(value) < 10**40:
        return str(value)
    if abs(value) >= 10**4000:  # str() refuses ints of more than 4300 digits
        return "a number of more than 4000 digits"
    digits = str(value)
    return f"{digits[:12]}… ({len(digits.lstrip('-'))} digits)"
