"""Offline tuning of the fallback scorer's weights from exported decision rows (scikit-learn)."""
