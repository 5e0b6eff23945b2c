"""Kernel characterisation: search spaces, workloads, measurement (Kernel Tuner), search (Optuna), reports."""
