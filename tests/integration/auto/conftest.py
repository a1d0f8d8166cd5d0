from tests.integration.turns.conftest import turn_api, turn_replicas, world  # noqa: F401 - the turn fixtures
