"""Record the golden fixtures from a reference operator binary given by path.

    .venv/bin/python test/golden/record.py /path/to/tf-operator-v0.5.3 [--case NAME ...]

For every case under ``test/golden/v0.5.3/`` it runs the binary against a local cluster (see
``golden_harness``), waits until the binary has created one pod and one service per replica
(and the PodGroup under gang scheduling), and writes them, normalised, as ``pods.json``,
``services.json`` (``podgroups.json``). A case with lifecycle steps then plays them and, once
the binary has made no API request for ``--quiet`` seconds (leader-lock renewals aside),
writes the pods, services and TFJob status left as ``final.json``.

Only recorded objects are committed; the reference binary is not part of this repository.
The quiet period is the recorder's only wait on time: it cannot know in advance what the binary
will still delete or write. The test never waits on time: it waits until our operator's objects
equal the fixtures.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # test/: its support package

from golden_harness import ENVIRONMENTS, Case, Session, load_cases, wait_for  # noqa: E402
from golden_normalise import dumps  # noqa: E402

CREATE_TIMEOUT_S = 60.0
STEP_TIMEOUT_S = 60.0


def wait_quiet(session: Session, quiet: float, timeout: float) -> None:
    """Until the operator has made no request for ``quiet`` seconds."""
    deadline = time.monotonic() + timeout
    last, since = session.operator_requests(), time.monotonic()
    while time.monotonic() - since < quiet:
        if time.monotonic() > deadline:
            raise RuntimeError("the reference operator never went quiet")
        time.sleep(0.1)
        now = session.operator_requests()
        if now != last:
            last, since = now, time.monotonic()


def record_case(session: Session, case: Case, quiet: float) -> list[str]:
    want = case.total_replicas

    def created() -> dict | None:
        found = session.objects(case)
        complete = len(found["pods"]) >= want and len(found["services"]) >= want
        if "podgroups" in found:
            complete = complete and len(found["podgroups"]) >= 1
        return found if complete else None

    found = wait_for(created, CREATE_TIMEOUT_S, f"{case.name}: {want} pods and services")
    written = []
    for kind, objs in found.items():
        (case.path / f"{kind}.json").write_text(dumps(objs))
        written.append(f"{kind}.json ({len(objs)})")
    if case.steps:
        for step in case.steps:
            session.apply_step(case, step, STEP_TIMEOUT_S)
        wait_quiet(session, quiet, STEP_TIMEOUT_S)
        (case.path / "final.json").write_text(dumps(session.final(case)))
        written.append("final.json")
    return written


def record_environment(binary: str, env: str, cases: list[Case], workdir: Path, quiet: float):
    session = Session(ENVIRONMENTS[env], cases, workdir)
    with session.running(binary, stop_grace=0), ThreadPoolExecutor(len(cases)) as pool:
        results = list(pool.map(lambda c: (c, record_case(session, c, quiet)), cases))
        if not session.operator.alive():  # type: ignore[union-attr]
            raise RuntimeError("the reference operator exited:\n" + session.operator.tail())  # type: ignore[union-attr]
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary", help="path of the reference operator binary")
    parser.add_argument("--case", action="append", help="only these cases (repeatable)")
    parser.add_argument("--quiet", type=float, default=2.0, help="seconds without requests")
    args = parser.parse_args(argv)
    cases = [c for c in load_cases() if not args.case or c.name in args.case]
    if not Path(args.binary).is_file():
        parser.error(f"no such binary: {args.binary}")
    workdir = Path(tempfile.mkdtemp(prefix="golden-record-"))
    by_env: dict[str, list[Case]] = {}
    for case in cases:
        by_env.setdefault(case.environment, []).append(case)
    with ThreadPoolExecutor(len(by_env)) as pool:
        futures = [
            pool.submit(record_environment, args.binary, env, env_cases, workdir, args.quiet)
            for env, env_cases in by_env.items()
        ]
        for future in futures:
            for case, written in future.result():
                print(f"{case.name}: {', '.join(written)}")
    print(f"operator logs in {workdir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
