"""What the report's question view costs on a big run, and how big the page grows.

Runs a synthetic dataset (``--docs`` documents, 12 questions each) with ``--configs``
configurations and token budgets, then times :func:`chunkeval.reports.drilldown.render_question_view`
(best of ``--repeat``) and the whole :func:`chunkeval.reports.write_report`, and prints the size of
``report.html`` and of its question view. The matrix and the explanations are capped, so the view's
size stays flat as the run grows.

Usage::

    python perf/bench_report.py --docs 50 100 200 --configs 8
"""

from __future__ import annotations

import argparse
import tempfile
import time

from _timing import best_time

CONFIGS = [
    "fixed(chunk_size=64)",
    "fixed(chunk_size=128, chunk_overlap=32)",
    "fixed(chunk_size=256)",
    "sentence(max_chars=300)",
    "sentence(max_chars=600, overlap_sentences=1)",
    "paragraph(max_words=50)",
    "paragraph(max_words=100)",
    "token_budget(max_tokens=128)",
]


def measure(n_docs: int, n_configs: int, repeat: int) -> tuple[int, float, float, int, int]:
    from chunkeval.benchmarks.runner import run
    from chunkeval.policy import rank_metric
    from chunkeval.reports import write_report
    from chunkeval.reports.drilldown import render_question_view
    from chunkeval.reports.style import config_styles

    configs = (CONFIGS * (1 + n_configs // len(CONFIGS)))[:n_configs]
    configs = [f"c{i}={spec}" for i, spec in enumerate(configs)]
    results = run(f"synthetic:n_docs={n_docs},seed=0", configs, ks=(1, 5, 10), budgets=(256, 512))
    name = str(results.summary["dataset"].iloc[0])
    column = rank_metric(results, name).column
    styles = config_styles(results.summary["config"].astype(str))
    view = render_question_view(results, name, column, styles)
    seconds = best_time(lambda: render_question_view(results, name, column, styles), repeat)
    with tempfile.TemporaryDirectory() as tmp:
        results.save(tmp)
        t0 = time.perf_counter()
        page = write_report(tmp)
        total = time.perf_counter() - t0
        size = page.stat().st_size
    n_q = int(results.summary["n_questions"].iloc[0])
    return n_q, seconds, total, len(view.encode()), size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, nargs="+", default=[50, 100, 200])
    parser.add_argument("--configs", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(
        f"{'questions':>9} {'configs':>7} {'view (s)':>9} {'report (s)':>10} {'view (kB)':>9} {'page (kB)':>9}"
    )
    for n_docs in args.docs:
        n_q, view_s, total_s, view_b, page_b = measure(n_docs, args.configs, args.repeat)
        print(
            f"{n_q:>9} {args.configs:>7} {view_s:>9.2f} {total_s:>10.1f} {view_b / 1e3:>9.0f} {page_b / 1e3:>9.0f}"
        )


if __name__ == "__main__":
    main()
