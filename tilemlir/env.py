"""tilemlir's boolean environment settings (TILEMLIR_DEBUG, TILEMLIR_COMPILE_IN_PROCESS), read
one way everywhere: unset or empty is off; 1, true, yes are on and 0, false, no off, in any
case; any other value is a SettingError naming the variable, not a guess."""

from __future__ import annotations

import os

_ON = ("1", "true", "yes")
_OFF = ("", "0", "false", "no")


class SettingError(ValueError):
    """An environment variable tilemlir reads holds a value it does not accept."""


def flag(name: str) -> bool:
    """Whether the boolean environment setting `name` is on."""
    value = os.environ.get(name, "")
    word = value.strip().lower()
    if word in _ON:
        return True
    if word in _OFF:
        return False
    raise SettingError(f"{name} must be 1, true or yes (on) or 0, false or no (off; or unset), "
                       f"got {value!r}")
