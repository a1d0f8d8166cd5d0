"""``companion simulate-llm``: serve the LLM simulator in the foreground.

Registered in the ``companion`` CLI by the lead (``main.add_command(simulate_llm, "simulate-llm")``).
The banner makes clear that everything it serves is simulated, never real model replies.
"""

from __future__ import annotations

import click

from app.llm.simulator.server import FAULT_KINDS, SimulatorOptions, create_simulator_app


@click.command("simulate-llm")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8900, show_default=True, type=int)
@click.option("--latency-ms", default=200.0, show_default=True, type=float,
              help="Whole latency of a non-streamed call.")
@click.option("--ttft-ms", default=None, type=click.FloatRange(min=0.0),
              help="Streamed calls: time to the first token [default: --latency-ms].")
@click.option("--tokens-per-s", default=0.0, show_default=True, type=click.FloatRange(min=0.0),
              help="Streamed calls: pace of the tokens after the first (0 = all at once).")
@click.option("--jitter-ms", default=0.0, show_default=True, type=float)
@click.option("--fault-rate", default=0.0, show_default=True, type=click.FloatRange(0.0, 1.0))
@click.option("--faults", default=",".join(FAULT_KINDS), show_default=True,
              help="Comma-separated fault kinds (cut: a stream stopped half way; streamed calls only).")
@click.option("--seed", default=1, show_default=True, type=int)
def simulate_llm(
    host: str, port: int, latency_ms: float, ttft_ms: float | None, tokens_per_s: float, jitter_ms: float,
    fault_rate: float, faults: str, seed: int,
) -> None:
    """Serve an OpenAI-compatible LLM SIMULATOR (schema-valid fake output, no real model)."""
    import uvicorn

    kinds = tuple(k.strip() for k in faults.split(",") if k.strip())
    try:
        options = SimulatorOptions(latency_ms=latency_ms, ttft_ms=ttft_ms, tokens_per_s=tokens_per_s, jitter_ms=jitter_ms,
                                   fault_rate=fault_rate, faults=kinds, seed=seed)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--faults") from None
    ttft = latency_ms if ttft_ms is None else ttft_ms
    pace = f"{tokens_per_s:g} tokens/s" if tokens_per_s else "unpaced"
    click.echo(
        f"LLM SIMULATOR on http://{host}:{port}/v1 — every reply is simulated, not from a real model.\n"
        f"Point the app at it: COMPANION_LLM_BASE_URL=http://{host}:{port}/v1 COMPANION_LLM_MODEL=simulator\n"
        f"latency {latency_ms:g}±{jitter_ms:g} ms, streamed: first token {ttft:g} ms then {pace}, "
        f"fault rate {fault_rate:g} ({', '.join(kinds) or 'none'}), seed {seed}; "
        f"counters at http://{host}:{port}/stats"
    )
    uvicorn.run(create_simulator_app(options), host=host, port=port, log_level="warning", lifespan="off")


if __name__ == "__main__":  # pragma: no cover
    simulate_llm()
