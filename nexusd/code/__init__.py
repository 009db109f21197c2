"""The code index: files, units and symbols of the repository, kept fresh by git blob id.

`service.CodeIndex` is the entry point (update, search, symbols, status); the pure parts
(`tokens`, `query`, `lang_python`, `corpus`, `rank`) take and return values.
"""
