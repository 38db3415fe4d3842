"""Support code shared by the tests (not part of the package)."""
