"""`nexusd solve`: generate code, run it in the sandbox, review the failure, retry."""
