"""HTTP access to the analytics queries (admin scope)."""
