"""A pytest plugin for running NetworkX's own tests against the ``sssp`` backend: it counts
the calls that reach the backend (and ``can_run``'s refusals), and writes them with the
outcome of every test as JSON to ``$SSSP_NX_PROBE`` when the session ends, so a test can
show that NetworkX's suite really exercised the backend.

    SSSP_NX_PROBE=out.json NETWORKX_TEST_BACKEND=sssp NETWORKX_FALLBACK_TO_NX=True \\
        python -m pytest -p nx_backend_probe --pyargs networkx.algorithms.shortest_paths
"""

from __future__ import annotations

import collections
import functools
import json
import os

from sssp.nxbackend import FUNCTIONS, interface

CALLS: collections.Counter = collections.Counter()
REFUSED: collections.Counter = collections.Counter()
OUTCOMES: dict[str, str] = {}


def _counting(name, func):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        CALLS[name] += 1
        return func(*args, **kwargs)

    return staticmethod(wrapper)


def pytest_configure(config):
    for name in FUNCTIONS:
        setattr(interface.BackendInterface, name, _counting(name, getattr(interface, name)))
    can_run = interface.can_run

    def counting_can_run(name, args, kwargs):
        verdict = can_run(name, args, kwargs)
        if verdict is not True:
            REFUSED[name] += 1
        return verdict

    interface.BackendInterface.can_run = staticmethod(counting_can_run)


def pytest_runtest_logreport(report):
    if report.when == "call" or report.outcome != "passed":
        outcome = "xfailed" if hasattr(report, "wasxfail") and report.skipped else report.outcome
        OUTCOMES[report.nodeid] = outcome


def pytest_sessionfinish(session, exitstatus):
    path = os.environ.get("SSSP_NX_PROBE")
    if path:
        with open(path, "w") as fh:
            json.dump(
                {
                    "calls": dict(CALLS),
                    "refused": dict(REFUSED),
                    "outcomes": OUTCOMES,
                    "exitstatus": int(exitstatus),
                },
                fh,
                indent=1,
            )
