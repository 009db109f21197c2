"""The librarian: the facts, memory and code a plan is grounded in, gathered into one bundle."""
