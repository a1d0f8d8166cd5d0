"""Auto mode (issue 28): the members of a conversation talk among themselves for a bounded number
of Continue turns. ``repository``: the run rows; ``runner``: this process's runs; ``service``:
stopping a run (DELETE, a user message); ``controller``: the HTTP API; ``feature``: the lifespan."""
