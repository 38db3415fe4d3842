"""Where a value sits in a configuration file, for precise error messages (``file: key.path: problem``)."""

from __future__ import annotations


class ConfigLocation:
    """A position in a configuration file; ``error`` builds the file's error type with that position."""

    def __init__(self, file: str, error_type: type[ValueError], path: str = "") -> None:
        self.file = file
        self.error_type = error_type
        self.path = path

    def key(self, key: str | int) -> ConfigLocation:
        if isinstance(key, int):
            return ConfigLocation(self.file, self.error_type, f"{self.path}[{key}]")
        return ConfigLocation(self.file, self.error_type, f"{self.path}.{key}" if self.path else key)

    def error(self, problem: str) -> ValueError:
        return self.error_type(f"{self}: {problem}")

    def __str__(self) -> str:
        return f"{self.file}: {self.path}" if self.path else self.file
