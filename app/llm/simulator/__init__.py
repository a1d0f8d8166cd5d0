"""An OpenAI-compatible LLM simulator for tests, benchmarks and key-less demos (never real replies)."""

from app.llm.simulator.runner import SimulatorHandle, start_simulator_in_thread
from app.llm.simulator.server import FAULT_KINDS, SimulatorOptions, create_simulator_app

__all__ = ["FAULT_KINDS", "SimulatorHandle", "SimulatorOptions", "create_simulator_app", "start_simulator_in_thread"]
