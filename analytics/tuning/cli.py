"""``companion tune fit`` and ``companion tune evaluate``."""

from __future__ import annotations

from pathlib import Path

import click

from analytics.tuning.dataset import LABELS, DecisionsFileError

CURRENT_HELP = "Weights to compare with (default: COMPANION_SCORING_WEIGHTS, else the built-in seed-v0)."


def _current(path: Path | None):  # noqa: ANN202 - ScoringWeights
    from scheduling.selection.weights import DEFAULT_WEIGHTS, WeightsFileError, load_weights

    if path is None:
        return DEFAULT_WEIGHTS
    try:
        return load_weights(path)
    except WeightsFileError as exc:
        raise click.ClickException(str(exc)) from None


@click.group()
def tune() -> None:
    """Learn the fallback scorer's weights from exported decisions."""


@tune.command()
@click.option("--input", "source", type=click.Path(exists=True, dir_okay=False, path_type=Path), required=True)
@click.option("--label", type=click.Choice(LABELS), default="selected", show_default=True,
              help="Learn who was selected, or whom the LLM picked (LLM-decided turns only).")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True, help="Weights JSON to write.")
@click.option("--folds", type=click.IntRange(min=1), default=5, show_default=True, help="1 = no cross-validation.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--current", type=click.Path(dir_okay=False, path_type=Path), envvar="COMPANION_SCORING_WEIGHTS",
              help=CURRENT_HELP)
def fit(source: Path, label: str, out: Path, folds: int, seed: int, current: Path | None) -> None:
    """Fit weights (conditional logit, grouped cross-validation) and write a ScoringWeights file."""
    from analytics.tuning.fit import fit as run_fit, write_weights

    base = _current(current)
    try:
        result = run_fit(source, label=label, current=base, folds=folds, seed=seed, progress=click.echo)
    except (DecisionsFileError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    write_weights(result.weights, out)
    scope = "cross-validated" if folds > 1 else "in-sample"
    click.echo(f"\n{scope} on {result.fitted_cv.turns} turns   top-1    MRR      log-loss")
    for name, m in ((result.weights.version, result.fitted_cv), (base.version, result.current_cv)):
        click.echo(f"  {name:<40} {m.top1_accuracy:.4f}   {m.mean_reciprocal_rank:.4f}   {m.log_loss:.4f}")
    click.echo("\nweights: " + ", ".join(f"{k}={v:g}" for k, v in result.weights.weights.items()))
    click.echo(f"wrote {out} (version {result.weights.version})")


@tune.command()
@click.option("--input", "source", type=click.Path(exists=True, dir_okay=False, path_type=Path), required=True)
@click.option("--weights", "files", type=click.Path(exists=True, dir_okay=False, path_type=Path), multiple=True,
              required=True, help="Weights JSON (repeat to compare several).")
@click.option("--label", type=click.Choice(LABELS), default="selected", show_default=True)
def evaluate(source: Path, files: tuple[Path, ...], label: str) -> None:
    """Compare weight files on held-out turns (top-1 accuracy, MRR, log-loss per turn)."""
    from analytics.tuning.evaluate import evaluate as run_evaluate
    from scheduling.selection.weights import WeightsFileError

    try:
        results = run_evaluate(source, list(files), label=label)
    except (DecisionsFileError, WeightsFileError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"{'file':<32} {'version':<28} turns    top-1    MRR      log-loss")
    for name, version, m in results:
        click.echo(f"{name:<32} {version:<28} {m.turns:<8} {m.top1_accuracy:.4f}   {m.mean_reciprocal_rank:.4f}   {m.log_loss:.4f}")
