"""A folder put first on ``PYTHONPATH`` by ``python -m linear_layouts report`` (its
``sitecustomize`` runs in the program's child processes); a package only so that it is installed."""
